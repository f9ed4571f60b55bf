// How long one click flush blocks the event loop, with the database taken out: N cached links (one click cell
// each, as the LRU-hit path keeps them) have been clicked, then one flush runs against a stand-in for postgres.js
// that answers each statement on the next turn (after serialising its JSON parameter, as the driver would).
// Prints the longest event-loop block during the flush (perf_hooks' event-loop delay, max), the flush's wall
// time, and the heap the flush allocated. For A/B runs of lib/clicks/click_buffer.ts (run it from each checkout).
//
//   npx tsx bench/click_flush_pause.ts [cells=100000] [runs=5]
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { NO_AGENT } from '../lib/clicks/classify_click.ts';
import { createClickBuffer } from '../lib/clicks/click_buffer.ts';
import { createLogger } from '../lib/shared/logger.ts';
import { createMetrics } from '../lib/shared/metrics.ts';
import type { Sql } from '../lib/stores/sql.ts';

const cells = Number(process.argv[2] ?? 100_000);
const runs = Number(process.argv[3] ?? 5);

/** A tagged-template stand-in: serialises json() parameters, answers `counted` on the next turn. */
function standInSql(): Sql {
  const db = ((_strings: TemplateStringsArray, ..._values: unknown[]) =>
    new Promise((resolve) => setImmediate(() => resolve([{ counted: true }])))) as unknown as Sql;
  (db as unknown as { json: (v: unknown) => string }).json = (v) => JSON.stringify(v);
  return db;
}

const buffer = createClickBuffer({
  sql: standInSql(),
  metrics: createMetrics(),
  logger: createLogger({ level: 'silent' }),
  flushIntervalMs: 3_600_000,
  maxKeys: 10_000_000,
});
const handles = Array.from({ length: cells }, (_, i) => buffer.cell(`bk${i + 1}`));
const now = Date.now();

for (let run = 1; run <= runs; run++) {
  for (const cell of handles) buffer.recordInCell(cell, 'human', '', '', now + run, NO_AGENT);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const heapBefore = process.memoryUsage().heapUsed;
  delay.enable();
  const started = performance.now();
  await buffer.flush();
  const took = performance.now() - started;
  delay.disable();
  const heapAfter = process.memoryUsage().heapUsed;
  process.stdout.write(
    `run ${run}: ${cells} cells flushed in ${took.toFixed(1)} ms; longest event-loop block ${(delay.max / 1e6).toFixed(1)} ms; ` +
      `heap +${((heapAfter - heapBefore) / 1048576).toFixed(1)} MiB (GC may have run)\n`,
  );
}
await buffer.close();
