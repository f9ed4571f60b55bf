// Run by cell_fields.test.ts in a child `node --expose-gc --import tsx`. Prints one JSON line: the bytes that
// survive a young-generation collection after one click in each of 10,000 old click-buffer cells, and the same
// for 10,000 old control objects whose time field is declared without an initializer (the shape the cell used
// to have, where each click's time is a new boxed number linked from the old object).
import { getHeapSpaceStatistics } from 'node:v8';
import { NO_AGENT } from '../../../lib/clicks/classify_click.ts';
import { createClickBuffer } from '../../../lib/clicks/click_buffer.ts';
import { createLogger } from '../../../lib/shared/logger.ts';
import { createMetrics } from '../../../lib/shared/metrics.ts';
import type { Sql } from '../../../lib/stores/sql.ts';

declare const gc: (options?: { type: 'minor' | 'major'; execution: 'sync' }) => void;

class Control {
  lastClickMs: number;
  constructor() {
    this.lastClickMs = 0;
  }
}

const CELLS = 10_000;
const buffer = createClickBuffer({
  sql: (() => {
    throw new Error('the probe never flushes');
  }) as unknown as Sql,
  metrics: createMetrics(),
  logger: createLogger({ level: 'silent', name: 'probe' }),
  flushIntervalMs: 600_000,
  maxKeys: 100_000,
});
const cells = Array.from({ length: CELLS }, (_, i) => buffer.cell(`probe${i}`));
const controls = Array.from({ length: CELLS }, () => new Control());
const t = Date.now();

function clickAll(round: number): void {
  for (let i = 0; i < CELLS; i++)
    buffer.recordInCell(cells[i]!, 'human', '', '', t + round * CELLS + i, NO_AGENT);
}
function setAll(round: number): void {
  for (let i = 0; i < CELLS; i++) controls[i]!.lastClickMs = t + round * CELLS + i;
}
const youngUsed = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_used_size;

/** Bytes alive in the young generation after a scavenge that follows `write` (the objects themselves are old). */
function survivorsAfter(write: (round: number) => void): number {
  for (let round = 0; round < 3; round++) write(round); // warm up (and settle the fields' representation)
  gc({ type: 'major', execution: 'sync' });
  gc({ type: 'major', execution: 'sync' });
  write(3);
  gc({ type: 'minor', execution: 'sync' });
  return youngUsed();
}

const cellSurvivors = survivorsAfter(clickAll);
const controlSurvivors = survivorsAfter(setAll);
process.stdout.write(`${JSON.stringify({ cells: CELLS, cellSurvivors, controlSurvivors })}\n`);
await buffer.close().catch(() => {});
