// How a flush writes what the click buffer holds: batch by batch, a failed batch kept and retried first.
import type { Logger } from '../shared/logger.ts';
import type { Metrics } from '../shared/metrics.ts';
import { addEncodedClickCounts, type ClickCountRow } from '../stores/click_counts_store.ts';
import type { Sql } from '../stores/sql.ts';
import { type Batch, type ClickHoldings, newBatch } from './click_holdings.ts';

/** A failed flush is logged at most this often (the database may be down for a while). */
const FAILURE_LOG_INTERVAL_MS = 30_000;

export interface ClickWriterOptions {
  sql: Sql;
  metrics: Pick<Metrics, 'clickFlushes' | 'clickFlushSeconds'>;
  logger: Logger;
  /** Rows per upsert statement. */
  batchRows: number;
  /** Told of every batch once it is known written (see ClickBufferOptions.onWritten). */
  onWritten?: (rows: readonly ClickCountRow[]) => void;
}

/**
 * Decides the order and the fate of one flush's writes: the batch kept from a failed write first, under its own
 * id (it may have committed: its id makes a second landing a no-op), then the map's aggregates, then the cells'
 * counts a batch at a time. On a failure the batch is kept for its retry, what was never sent goes back into
 * the holdings, and the flush ends (the next one retries). Each batch that lands is handed to `onWritten` once.
 * Returns `writeOut`, one flush's writing (the buffer never runs two at once).
 */
export function createClickWriter(options: ClickWriterOptions, holdings: ClickHoldings): () => Promise<void> {
  const batchRows = options.batchRows;
  let lastFailureLog = 0;

  async function write(batch: Batch): Promise<boolean> {
    const started = performance.now();
    try {
      await addEncodedClickCounts(options.sql, batch.id, batch.encoded);
      options.metrics.clickFlushes.inc({ result: 'ok' });
      options.metrics.clickFlushSeconds.observe((performance.now() - started) / 1000);
      return true;
    } catch (err) {
      options.metrics.clickFlushes.inc({ result: 'error' });
      if (Date.now() - lastFailureLog > FAILURE_LOG_INTERVAL_MS) {
        lastFailureLog = Date.now();
        options.logger.warn(
          { err, buffered: holdings.heldKeys() },
          'click flush failed; clicks kept in memory and retried at the next flush',
        );
      }
      return false;
    }
  }

  function written(batch: Batch): void {
    if (!options.onWritten || batch.rows === null) return;
    try {
      options.onWritten(batch.rows);
    } catch (err) {
      options.logger.error({ err }, 'a consumer of written clicks failed; the clicks are stored regardless');
    }
  }

  /** Writes one batch; a failed one is kept for its retry (at most one). */
  async function writeBatch(batch: Batch): Promise<boolean> {
    if (!(await write(batch))) {
      holdings.keepForRetry(batch);
      return false;
    }
    written(batch);
    return true;
  }

  return async function writeOut(): Promise<void> {
    const retry = holdings.retrying();
    if (retry) {
      if (!(await write(retry))) return;
      written(retry);
      holdings.keepForRetry(null);
    }
    // The map's aggregates first, then the cells' counts a batch at a time (see `pending` in click_holdings.ts).
    const rows = holdings.startFlush();
    for (let i = 0; i < rows.length; i += batchRows) {
      const batch = rows.slice(i, i + batchRows);
      holdings.markLastClickMoves(batch);
      if (!(await writeBatch(newBatch(batch, batch)))) {
        // Batches never sent go back into the buffer (new clicks may have joined their keys meanwhile).
        for (const row of rows.slice(i + batchRows)) holdings.merge(row);
        holdings.returnPending();
        return;
      }
    }
    while (holdings.cellsPending()) {
      const batch = holdings.takeCells();
      if (batch !== null && !(await writeBatch(batch))) break;
    }
    holdings.returnPending();
  };
}
