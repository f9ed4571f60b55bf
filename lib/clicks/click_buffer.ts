import type { Logger } from '../shared/logger.ts';
import type { Metrics } from '../shared/metrics.ts';
import {
  addEncodedClickCounts,
  type ClickCountRow,
  type EncodedClickCounts,
  encodeClickCounts,
  LAST_CLICK_PRECISION_MINUTES,
} from '../stores/click_counts_store.ts';
import type { ClickKind } from '../stores/click_stats_store.ts';
import type { Sql } from '../stores/sql.ts';

const HOUR_MS = 3_600_000;
const LAST_CLICK_PRECISION_MS = LAST_CLICK_PRECISION_MINUTES * 60_000;
/**
 * Aggregates written per statement. Preparing one (sort, JSON) runs between redirects, so it is kept small:
 * ~0.4 ms for 250 rows against ~1.5–2 ms for 1,000, which showed in the LRU-hit path's p99.
 */
export const CLICK_FLUSH_BATCH_ROWS = 250;
/**
 * A timed flush waits at least this many times as long as the last flush took (up to the maximum interval), so
 * writing clicks keeps the database and the event loop busy at most about a tenth of the time however many
 * distinct codes are clicked: a flush's work grows with the keys it writes, and fewer, larger flushes write
 * each busy code once instead of once per interval.
 */
const FLUSH_DUTY_FACTOR = 10;
/** A failed flush is logged at most this often (the database may be down for a while). */
const FAILURE_LOG_INTERVAL_MS = 30_000;

/** One answered request worth counting. */
export interface Click {
  code: string;
  kind: ClickKind;
  country: string;
  referrerHost: string;
  atMs: number;
}

/** Records clicks in memory (never waiting on anything) and writes them to click_counts in batches. */
export interface ClickRecorder {
  /** Counts one click: O(1), synchronous, never throws; a full buffer drops it and counts the drop. */
  record(click: Click): void;
  /**
   * A counter for one code that the caller keeps (the hot path keeps one beside its memoised answer for a
   * cached link), so counting a click of that code touches no map: see recordInCell.
   */
  cell(code: string): ClickCell;
  /**
   * `record` for the cell's code: when the click has the same hour, kind, country and referrer as the cell's
   * running count, an increment; otherwise the running count moves into the buffer and the cell starts
   * counting this key. Cells are written at every flush like the buffer (and count towards maxKeys).
   */
  recordInCell(cell: ClickCell, kind: ClickKind, country: string, referrerHost: string, atMs: number): void;
  /** Writes what is buffered now; a failure keeps the aggregates for the next flush and resolves anyway. */
  flush(): Promise<void>;
  /** Distinct aggregates waiting to be written. */
  readonly pendingKeys: number;
  /** Stops the timer and flushes once more (shutdown). */
  close(): Promise<void>;
}

export interface ClickBufferOptions {
  sql: Sql;
  metrics: Metrics;
  logger: Logger;
  /** CLICK_FLUSH_INTERVAL_MS: the wait between timed flushes while they are short. */
  flushIntervalMs: number;
  /**
   * CLICK_FLUSH_MAX_INTERVAL_MS: the longest wait a long flush stretches the next one to (see FLUSH_DUTY_FACTOR);
   * never below flushIntervalMs (absent or equal: a fixed interval).
   */
  maxFlushIntervalMs?: number;
  /**
   * CLICK_BUFFER_MAX_KEYS: distinct (code, hour, kind, country, referrer) aggregates held at most (plus, after
   * a failed flush, the one batch of at most `batchRows` kept for its retry).
   */
  maxKeys: number;
  /** Rows per upsert statement (default CLICK_FLUSH_BATCH_ROWS). */
  batchRows?: number;
  /**
   * Told of every batch once it is known written to click_counts (a retried batch once, when its retry lands),
   * so a consumer such as GA4 forwarding (lib/analytics) sees each click exactly once, off the redirect path.
   * Called synchronously between flush statements: it must only hand the rows on, never wait or throw.
   */
  onWritten?: (rows: readonly ClickCountRow[]) => void;
}

/**
 * The in-memory click buffer: clicks aggregate by (code, UTC hour, kind, country, referrer host) so memory
 * grows with distinct keys, not with traffic. Every `flushIntervalMs`, or as soon as half of `maxKeys` keys are
 * waiting, one flush (never two at once) swaps the buffer out and upserts it in batches, each under a fresh
 * id. When the database fails, the failed batch is kept as is and retried under its id first (so a batch that
 * did commit before the connection died is not counted twice), batches never sent go back into the buffer,
 * and the next interval retries; everything held stays within `maxKeys` (what does not fit is dropped and
 * counted), so an outage loses nothing it has room for and counts nothing twice.
 *
 * Cells: the hot path keeps one per cached link beside its memoised answer. A cell holds one running
 * aggregate (a link's clicks mostly share one key within a flush interval), so counting an LRU hit's click is
 * a few compares and an increment on an object the request already touched; a click with another key moves
 * the running count into the buffer. A flush writes the map's aggregates first, then the cells' counts in
 * batches of their own, each cell's count copied out just before its batch is sent (no key string, no map
 * insert, and never more than one batch of cells between two statements: spilling 100,000 cells into the map
 * at once was one long pause per flush). A key may so reach click_counts in two statements of one flush; the
 * upsert adds, and no single statement carries a key twice.
 * Measured on the LRU-hit benchmark (10,000 codes): with a lookup by code per click, our server used 4–6 µs
 * more CPU per request than the bare baseline; with cells, within ±3 µs of it.
 */
export function createClickBuffer(options: ClickBufferOptions): ClickRecorder {
  const batchRows = options.batchRows ?? CLICK_FLUSH_BATCH_ROWS;
  // Aggregation is the point: under a flood of distinct codes, flushing every `batchRows` keys would turn each
  // redirect into database work (measured: ~30 upserts of 1,000 rows a second at 30k req/s). Flush early only
  // when half the buffer is used, so drops stay rare; otherwise on the interval.
  const flushAtKeys = Math.max(batchRows, Math.floor(options.maxKeys / 2));
  /** Aggregates by their key (keyOf). */
  let buffer = new Map<string, ClickCountRow>();
  /** Cells holding a running count (or that held one since the last flush); each counts as one held key. */
  let cells: Cell[] = [];
  /**
   * `record`'s cells by code (a click without a caller-kept cell: the serving-store and Postgres paths), so
   * counting it is a lookup by the short code, not a composite key string built, hashed and compared. A cell
   * counts one key at a time (other keys of the code go to the map) and outlives flushes like a caller-kept
   * one: a code clicked again finds its cell (no cell allocated, no map insert) and the time its last click was
   * last moved (`movedAt`). Only listed cells hold keys; the map itself is bounded by `codeCellsMax`, emptied at
   * the start of a flush that finds it larger (a code then gets a new cell, which asks to move its last click
   * time once more).
   */
  let codeCells = new Map<string, Cell>();
  const codeCellsMax = Math.max(1000, options.maxKeys);
  /**
   * The cells the running flush is writing, from `taking` on: each is still listed (its clicks keep counting in
   * it) until its turn, when its count is copied into that batch and it is unlisted. So a flush touches at most
   * one batch of cells between two statements: no pause to spill every cell into the map at once.
   */
  let pending: Cell[] = [];
  let taking = 0;
  /** The UTC hour of the latest click recorded (epoch ms). */
  let hourStart = 0;
  /**
   * A batch whose write failed: it may or may not have committed (a connection lost at commit time cannot
   * tell), so it is retried as is, under the same id, before anything else (at most one; ≤ batchRows rows).
   */
  let retry: Batch | null = null;
  const heldKeys = () =>
    buffer.size + cells.length + (pending.length - taking) + (retry ? retry.encoded.keys : 0);
  let flushing: Promise<void> | null = null;
  let closed = false;
  let lastFailureLog = 0;

  const maxIntervalMs = Math.max(options.flushIntervalMs, options.maxFlushIntervalMs ?? 0);
  /** The next timed flush; none while a flush runs (its end schedules the next) or once closed. */
  let timer: ReturnType<typeof setTimeout> | undefined;
  schedule(options.flushIntervalMs);

  function schedule(delayMs: number): void {
    clearTimeout(timer);
    if (closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, delayMs);
    (timer as { unref?: () => void }).unref?.();
    options.metrics.clickFlushIntervalSeconds.set(delayMs / 1000);
  }

  function drop(clicks: number): void {
    options.metrics.clicksDropped.inc(clicks);
  }

  /** Adds an aggregate's clicks into the buffer (an unwritten one put back, or a cell's running count). */
  function merge(row: ClickCountRow): void {
    add(row.code, row.hourMs, row.kind, row.country, row.referrerHost, row.clicks, row.lastClickMs);
  }

  /** Adds clicks to the aggregate of (code, hour, kind, country, referrer), or starts one if there is room. */
  function add(
    code: string,
    hourMs: number,
    kind: ClickKind,
    country: string,
    referrerHost: string,
    clicks: number,
    lastClickMs: number,
  ): void {
    const key = keyOf(code, hourMs, kind, country, referrerHost);
    const held = buffer.get(key);
    if (held) {
      held.clicks += clicks;
      if (lastClickMs > held.lastClickMs) held.lastClickMs = lastClickMs;
    } else if (heldKeys() < options.maxKeys) {
      buffer.set(key, { code, hourMs, kind, country, referrerHost, clicks, lastClickMs });
    } else {
      drop(clicks);
    }
  }

  /** A fresh cell for `code` (counting nothing, not listed yet). */
  function newCell(code: string): Cell {
    return new Cell(code);
  }

  /** recordInCell proper. */
  function countInCell(
    cell: Cell,
    kind: ClickKind,
    country: string,
    referrerHost: string,
    atMs: number,
  ): void {
    const hourMs = hourOf(atMs);
    if (cell.clicks > 0) {
      if (countIfSameKey(cell, hourMs, kind, country, referrerHost, atMs)) return;
      spill(cell);
    } else if (!cell.listed) {
      if (heldKeys() >= options.maxKeys) {
        drop(1);
        return;
      }
      cell.listed = true;
      cells.push(cell);
    }
    startCount(cell, hourMs, kind, country, referrerHost, atMs);
    flushIfFilling();
  }

  /** Moves a cell's running count into the buffer (the cell keeps its place in `cells`). */
  function spill(cell: Cell): void {
    merge(cell);
    cell.clicks = 0;
  }

  /** The UTC hour of a click: almost always the current one, so the division is done once an hour. */
  function hourOf(atMs: number): number {
    if (atMs < hourStart || atMs >= hourStart + HOUR_MS) hourStart = atMs - (atMs % HOUR_MS);
    return hourStart;
  }

  /** Starts a flush early when half of maxKeys is used (see flushAtKeys). */
  function flushIfFilling(): void {
    if (buffer.size + cells.length >= flushAtKeys && !flushing && !closed) void flush();
  }

  /** Every aggregate held now (cells' running counts merged in), and an empty buffer in its place. */
  function takeAll(): ClickCountRow[] {
    const counted = cells;
    cells = [];
    codeCells = new Map();
    for (const cell of counted) {
      cell.listed = false;
      if (cell.clicks > 0) spill(cell);
    }
    const rows = [...buffer.values()];
    buffer = new Map();
    return rows;
  }

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
          { err, buffered: heldKeys() },
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

  /**
   * The next batch of pending cells' counts (at most batchRows keys), each cell unlisted as it is taken and its
   * count encoded straight into the batch (rows as objects only when `onWritten` wants them). Two cells of one
   * code (a link's record replaced in the LRU while the old one's cell still counts, or record()'s cell beside a
   * caller-kept one) may hold the same key: encodeClickCounts merges them.
   */
  function takeCells(): Batch | null {
    const taken: Cell[] = [];
    const from = pending;
    const end = from.length;
    let next = taking;
    while (taken.length < batchRows && next < end) {
      const cell = from[next++]!;
      cell.listed = false;
      if (cell.clicks === 0) continue;
      cell.moveLastClick = movesLastClick(cell, cell.lastClickMs);
      taken.push(cell);
    }
    taking = next;
    if (taken.length === 0) return null;
    const batch = newBatch(taken, options.onWritten ? taken.map(rowOf) : null);
    for (const cell of taken) cell.clicks = 0;
    return batch;
  }

  /**
   * Whether a row of `owner`'s code with this latest click should ask Postgres to move the code's last click
   * time (link_last_clicks): only once it may be a precision behind what this buffer last asked for, since even
   * a lookup that changes nothing costs (ADR 0026). Asking counts as moved: a batch that fails is retried as
   * is, and one that never lands leaves the time at most a precision (plus the outage) behind.
   */
  function movesLastClick(owner: Cell | undefined, lastClickMs: number): boolean {
    if (owner === undefined) return true;
    if (lastClickMs < owner.movedAt + LAST_CLICK_PRECISION_MS) return false;
    owner.movedAt = lastClickMs;
    return true;
  }

  /** The cells not taken yet go back to being listed for the next flush (a write failed, or shutdown). */
  function returnPending(): void {
    for (let i = taking; i < pending.length; i++) cells.push(pending[i]!);
    pending = [];
    taking = 0;
  }

  async function writeOut(): Promise<void> {
    if (retry) {
      if (!(await write(retry))) return;
      written(retry);
      retry = null;
    }
    // The map's aggregates first, then the cells' counts a batch at a time (see `pending`).
    const rows = [...buffer.values()];
    buffer = new Map();
    pending = cells;
    taking = 0;
    cells = [];
    if (codeCells.size > codeCellsMax) codeCells = new Map();
    for (let i = 0; i < rows.length; i += batchRows) {
      const batch = rows.slice(i, i + batchRows);
      for (const row of batch) row.moveLastClick = movesLastClick(codeCells.get(row.code), row.lastClickMs);
      if (!(await writeBatch(newBatch(batch, batch)))) {
        // Batches never sent go back into the buffer (new clicks may have joined their keys meanwhile).
        for (const row of rows.slice(i + batchRows)) merge(row);
        returnPending();
        return;
      }
    }
    while (taking < pending.length) {
      const batch = takeCells();
      if (batch !== null && !(await writeBatch(batch))) break;
    }
    returnPending();
  }

  /** Writes one batch; a failed one is kept as `retry` (at most one). */
  async function writeBatch(batch: Batch): Promise<boolean> {
    if (!(await write(batch))) {
      retry = batch;
      return false;
    }
    written(batch);
    return true;
  }

  function flush(): Promise<void> {
    if (flushing) return flushing;
    if (buffer.size === 0 && cells.length === 0 && !retry) {
      schedule(options.flushIntervalMs);
      return Promise.resolve();
    }
    clearTimeout(timer);
    const started = performance.now();
    flushing = writeOut().finally(() => {
      flushing = null;
      options.metrics.clickBufferKeys.set(heldKeys());
      const took = performance.now() - started;
      schedule(
        Math.round(Math.min(maxIntervalMs, Math.max(options.flushIntervalMs, took * FLUSH_DUTY_FACTOR))),
      );
    });
    return flushing;
  }

  return {
    record(click) {
      const { code, kind, country, referrerHost, atMs } = click;
      let cell = codeCells.get(code);
      if (cell === undefined) {
        if (heldKeys() >= options.maxKeys) {
          drop(1);
          return;
        }
        cell = newCell(code);
        codeCells.set(code, cell);
      } else if (cell.clicks > 0) {
        const hourMs = hourOf(atMs);
        if (countIfSameKey(cell, hourMs, kind, country, referrerHost, atMs)) return;
        // Another key of the code: the map's aggregate (the cell keeps its key, so no key is held twice).
        add(code, hourMs, kind, country, referrerHost, 1, atMs);
        flushIfFilling();
        return;
      }
      countInCell(cell, kind, country, referrerHost, atMs);
    },
    cell: newCell,
    recordInCell(handle, kind, country, referrerHost, atMs) {
      countInCell(handle as Cell, kind, country, referrerHost, atMs);
    },
    flush: async () => {
      // A flush already running wrote an older snapshot: run once more for what arrived since.
      if (flushing) await flushing;
      await flush();
    },
    get pendingKeys() {
      return heldKeys();
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      if (flushing) await flushing;
      await flush();
      if (heldKeys() > 0) {
        const rows = takeAll();
        const aggregates = rows.length + (retry?.encoded.keys ?? 0);
        const clicks = rows.reduce((n, r) => n + r.clicks, retry?.encoded.clicks ?? 0);
        options.logger.error({ aggregates, clicks }, 'clicks could not be written at shutdown');
      }
    },
  };
}

/**
 * One flush statement's worth of aggregates under its id (kept as is for a retry), and the rows `onWritten` is
 * given once it lands (null for cells' counts when nothing listens).
 */
interface Batch {
  id: string;
  encoded: EncodedClickCounts;
  rows: readonly ClickCountRow[] | null;
}

/** A batch of `rows` (sorted in place as they are encoded) under a fresh id; `written`: what onWritten gets. */
function newBatch(rows: ClickCountRow[], written: readonly ClickCountRow[] | null): Batch {
  return { id: crypto.randomUUID(), encoded: encodeClickCounts(rows), rows: written };
}

/** A snapshot of a cell's running count as a row (for onWritten). */
function rowOf(cell: Cell): ClickCountRow {
  return {
    code: cell.code,
    hourMs: cell.hourMs,
    kind: cell.kind,
    country: cell.country,
    referrerHost: cell.referrerHost,
    clicks: cell.clicks,
    lastClickMs: cell.lastClickMs,
    moveLastClick: cell.moveLastClick,
  };
}

/** What `cell` hands out: opaque to callers. */
export interface ClickCell {
  readonly code: string;
}

/**
 * A cell inside the buffer: one running aggregate for its code, whether it is in `cells`, and the latest click
 * it last asked Postgres to move the code's last click time to (see movesLastClick). A class rather than an
 * object literal, so its objects have a map of their own: as a literal it shared its first seven fields'
 * transitions with the flush's rows and the map's aggregates, and V8 kept no feedback for takeCells' store to
 * `listed`, throwing its optimised code away once per batch (a deopt loop, seen in a CPU profile of the LRU path).
 */
class Cell implements ClickCountRow {
  // Every field starts with its value's kind (a number, a string, a boolean), never `undefined`: a class field
  // without an initializer is first defined as undefined, and V8 then stores its numbers as pointers to boxed
  // doubles. Each click then boxed its time in the young generation and wrote the pointer into an old cell,
  // where the scavenger had to keep and promote it (~20 KB each scavenge on the LRU path, measured with --trace-gc-nvp).
  // Starting at 0, the time fields become unboxed double fields, written in place.
  readonly code: string;
  hourMs = 0;
  kind: ClickKind = 'human';
  country = '';
  referrerHost = '';
  clicks = 0;
  lastClickMs = 0;
  listed = false;
  movedAt = 0;
  /** Set as the cell's count is taken into a batch (see movesLastClick). */
  moveLastClick = true;

  constructor(code: string) {
    this.code = code;
  }
}

/** One more click on the cell's running count when the click has its key; false (nothing done) otherwise. */
function countIfSameKey(
  cell: Cell,
  hourMs: number,
  kind: ClickKind,
  country: string,
  referrerHost: string,
  atMs: number,
): boolean {
  if (
    cell.hourMs !== hourMs ||
    cell.kind !== kind ||
    cell.country !== country ||
    cell.referrerHost !== referrerHost
  ) {
    return false;
  }
  cell.clicks++;
  if (atMs > cell.lastClickMs) cell.lastClickMs = atMs;
  return true;
}

/** The cell's running count restarts at one click of this key. */
function startCount(
  cell: Cell,
  hourMs: number,
  kind: ClickKind,
  country: string,
  referrerHost: string,
  atMs: number,
): void {
  cell.hourMs = hourMs;
  cell.kind = kind;
  cell.country = country;
  cell.referrerHost = referrerHost;
  cell.clicks = 1;
  cell.lastClickMs = atMs;
}

function keyOf(code: string, hourMs: number, kind: string, country: string, referrerHost: string): string {
  return `${code}\n${hourMs}\n${kind}\n${country}\n${referrerHost}`;
}
