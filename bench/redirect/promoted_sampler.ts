// Preloaded (`node --import`) into a server by `npm run bench:redirect -- profile` with BENCH_PROFILER=promoted:
// V8's sampling heap profiler, told to drop the samples a young-generation collection frees and keep those a full
// collection frees. What is left is what the scavenger promoted (plus what is still alive at the end), by
// allocation stack: the objects the old generation's marker then has to trace. Sampling starts on SIGUSR2 (the
// bench sends it after the warm-up) and the profile is written to BENCH_PROMOTED_FILE when the process exits.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const file = process.env.BENCH_PROMOTED_FILE;
if (file) {
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    if (sampling) return;
    sampling = true;
    session.post('HeapProfiler.enable');
    session.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: false,
    });
  });
  process.on('exit', () => {
    if (!sampling) return;
    // The in-process session answers synchronously: the profile is written before the process ends.
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (err) process.stderr.write(`promoted sampler: ${err.message}\n`);
      else writeFileSync(file, JSON.stringify(result.profile));
    });
  });
}
