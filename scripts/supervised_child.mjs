// Preloaded (`node --import`) into the web and worker processes `npm start` runs (scripts/start.ts, ADR 0022).
// They run in sessions of their own, so a terminal's Ctrl-C reaches only npm start, which stops them in order. If
// npm start itself is gone without doing so (killed, crashed), its IPC channel closes: this process then stops as
// on SIGTERM (its entry's orderly shutdown) rather than run on unsupervised, holding the port.
// Plain JavaScript: worker threads (the Temporal worker's workflow threads) inherit the preload without tsx.
import { isMainThread } from 'node:worker_threads';

if (isMainThread && process.send) {
  process.on('disconnect', () => {
    process.stderr.write('npm start is gone: stopping\n');
    process.kill(process.pid, 'SIGTERM');
  });
  // Listening keeps the channel referenced; the process's life stays its entry's business.
  process.channel?.unref();
}
