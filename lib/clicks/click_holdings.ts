// What the click buffer holds in memory, and its bound: aggregates by key, cells, the cells a running flush is
// still taking, and the one failed batch kept for its retry.
import type { Metrics } from '../shared/metrics.ts';
import {
  type ClickCountRow,
  type EncodedClickCounts,
  encodeClickCounts,
  encodeFamilyCounts,
  type FamilyCountRow,
  LAST_CLICK_PRECISION_MINUTES,
} from '../stores/click_counts_store.ts';
import type { ClickKind } from '../stores/click_stats_store.ts';
import { type Agent, familiesOf } from './classify_click.ts';
import { Cell, type ClickCell, type HeldRow, rowOf } from './click_cell.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const LAST_CLICK_PRECISION_MS = LAST_CLICK_PRECISION_MINUTES * 60_000;

/**
 * One flush statement's worth of aggregates under its id (kept as is for a retry), and the rows `onWritten` is
 * given once it lands (null for cells' counts when nothing listens).
 */
export interface Batch {
  id: string;
  encoded: EncodedClickCounts;
  rows: readonly ClickCountRow[] | null;
}

/**
 * A batch of `rows` (sorted in place as they are encoded) under a fresh id; `written`: what onWritten gets. The
 * readers' rows (human, QR) are summed by (code, UTC day, browser family, OS family) beside them: this is where
 * an agent's families are worked out, once per interned agent (familiesOf), at the flush and not on a request.
 */
export function newBatch(rows: HeldRow[], written: readonly ClickCountRow[] | null): Batch {
  const families = familyRowsOf(rows);
  const encoded = encodeClickCounts(rows);
  if (families.length > 0) encoded.families = encodeFamilyCounts(families);
  return { id: crypto.randomUUID(), encoded, rows: written };
}

/** The readers' clicks of `rows` by (code, day, browser, OS). */
function familyRowsOf(rows: readonly HeldRow[]): FamilyCountRow[] {
  const byKey = new Map<string, FamilyCountRow>();
  for (const row of rows) {
    if ((row.kind !== 'human' && row.kind !== 'qr') || row.clicks === 0) continue;
    const families = familiesOf(row.agent);
    if (families === null) continue;
    const dayMs = row.hourMs - (row.hourMs % DAY_MS);
    const key = `${row.code}\n${dayMs}\n${row.agent.key}`;
    const held = byKey.get(key);
    if (held) held.clicks += row.clicks;
    else {
      byKey.set(key, {
        code: row.code,
        day: new Date(dayMs).toISOString().slice(0, 10),
        browser: families.browser,
        os: families.os,
        clicks: row.clicks,
      });
    }
  }
  return [...byKey.values()];
}

/** One answered request worth counting. */
export interface Click {
  code: string;
  kind: ClickKind;
  country: string;
  referrerHost: string;
  atMs: number;
  /** The request's agent (readAgent): its families are counted for readers' clicks. */
  agent: Agent;
}

export interface ClickHoldingsOptions {
  metrics: Pick<Metrics, 'clicksDropped'>;
  /** Distinct aggregates held at most (CLICK_BUFFER_MAX_KEYS; see ClickBufferOptions.maxKeys). */
  maxKeys: number;
  /** Rows per batch. */
  batchRows: number;
  /** Held keys (the map's and the cells') at which `onFilling` is called after a new key. */
  flushAtKeys: number;
  /** Half full: the buffer may start a flush early. */
  onFilling: () => void;
  /** Cells' batches carry their counts as rows too (someone listens: ClickBufferOptions.onWritten). */
  withRows: boolean;
}

/** What the click buffer does with its holdings (createClickHoldings). */
export type ClickHoldings = ReturnType<typeof createClickHoldings>;

/**
 * Decides where a click is counted and whether there is room for it: a cell's running count when the click
 * has its key, else the map's aggregate for (code, hour, kind, country, referrer), else dropped and counted
 * when `maxKeys` keys are held. Everything held, the cells a flush is still taking and a batch kept for its
 * retry included, counts against `maxKeys`. The flush (click_writer.ts) takes from here a batch at a time.
 */
export function createClickHoldings(options: ClickHoldingsOptions) {
  const batchRows = options.batchRows;
  const flushAtKeys = options.flushAtKeys;
  const onFilling = options.onFilling;
  const withRows = options.withRows;
  /** Aggregates by their key (keyOf). */
  let buffer = new Map<string, HeldRow>();
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

  function drop(clicks: number): void {
    options.metrics.clicksDropped.inc(clicks);
  }

  /** Adds an aggregate's clicks into the buffer (an unwritten one put back, or a cell's running count). */
  function merge(row: HeldRow): void {
    add(
      row.code,
      row.hourMs,
      row.kind,
      row.country,
      row.referrerHost,
      row.agent,
      row.clicks,
      row.lastClickMs,
    );
  }

  /** Adds clicks to the aggregate of (code, hour, kind, country, referrer), or starts one if there is room. */
  function add(
    code: string,
    hourMs: number,
    kind: ClickKind,
    country: string,
    referrerHost: string,
    agent: Agent,
    clicks: number,
    lastClickMs: number,
  ): void {
    const key = keyOf(code, hourMs, kind, country, referrerHost, agent.key);
    const held = buffer.get(key);
    if (held) {
      held.clicks += clicks;
      if (lastClickMs > held.lastClickMs) held.lastClickMs = lastClickMs;
    } else if (heldKeys() < options.maxKeys) {
      buffer.set(key, { code, hourMs, kind, country, referrerHost, clicks, lastClickMs, agent });
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
    agent: Agent,
  ): void {
    const hourMs = hourOf(atMs);
    if (cell.clicks > 0) {
      if (countIfSameKey(cell, hourMs, kind, country, referrerHost, atMs, agent)) return;
      spill(cell);
    } else if (!cell.listed) {
      if (heldKeys() >= options.maxKeys) {
        drop(1);
        return;
      }
      cell.listed = true;
      cells.push(cell);
    }
    startCount(cell, hourMs, kind, country, referrerHost, atMs, agent);
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
    if (buffer.size + cells.length >= flushAtKeys) onFilling();
  }

  /** Every aggregate held now (cells' running counts merged in), and an empty buffer in its place. */
  function takeAll(): HeldRow[] {
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
    const batch = newBatch(taken, withRows ? taken.map(rowOf) : null);
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

  /**
   * A flush begins: the map's aggregates, taken out (an empty map in their place), and every listed cell made
   * pending (see `pending`); the code cells' map is emptied if it outgrew its bound.
   */
  function startFlush(): HeldRow[] {
    const rows = [...buffer.values()];
    buffer = new Map();
    pending = cells;
    taking = 0;
    cells = [];
    if (codeCells.size > codeCellsMax) codeCells = new Map();
    return rows;
  }

  /** Sets each row's moveLastClick just before its batch is sent (see movesLastClick). */
  function markLastClickMoves(rows: ClickCountRow[]): void {
    for (const row of rows) row.moveLastClick = movesLastClick(codeCells.get(row.code), row.lastClickMs);
  }

  return {
    /** ClickRecorder.record. */
    record(click: Click): void {
      const { code, kind, country, referrerHost, atMs, agent } = click;
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
        if (countIfSameKey(cell, hourMs, kind, country, referrerHost, atMs, agent)) return;
        // Another key of the code: the map's aggregate (the cell keeps its key, so no key is held twice).
        add(code, hourMs, kind, country, referrerHost, agent, 1, atMs);
        flushIfFilling();
        return;
      }
      countInCell(cell, kind, country, referrerHost, atMs, agent);
    },
    cell: newCell,
    /** ClickRecorder.recordInCell. */
    recordInCell(
      handle: ClickCell,
      kind: ClickKind,
      country: string,
      referrerHost: string,
      atMs: number,
      agent: Agent,
    ): void {
      countInCell(handle as Cell, kind, country, referrerHost, atMs, agent);
    },
    heldKeys,
    /** Nothing to write: no aggregate, no listed cell, no batch waiting for its retry. */
    nothingToWrite(): boolean {
      return buffer.size === 0 && cells.length === 0 && !retry;
    },
    /** The batch kept for its retry, if a write failed. */
    retrying(): Batch | null {
      return retry;
    },
    /** Keeps a batch whose write failed for its retry (null: the retry landed). */
    keepForRetry(batch: Batch | null): void {
      retry = batch;
    },
    startFlush,
    markLastClickMoves,
    /** Cells the running flush has not taken yet. */
    cellsPending(): boolean {
      return taking < pending.length;
    },
    takeCells,
    returnPending,
    merge,
    takeAll,
  };
}

/** One more click on the cell's running count when the click has its key; false (nothing done) otherwise. */
function countIfSameKey(
  cell: Cell,
  hourMs: number,
  kind: ClickKind,
  country: string,
  referrerHost: string,
  atMs: number,
  agent: Agent,
): boolean {
  if (
    cell.hourMs !== hourMs ||
    cell.kind !== kind ||
    cell.country !== country ||
    cell.referrerHost !== referrerHost ||
    cell.agentKey !== agent.key
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
  agent: Agent,
): void {
  cell.hourMs = hourMs;
  cell.kind = kind;
  cell.country = country;
  cell.referrerHost = referrerHost;
  cell.clicks = 1;
  cell.lastClickMs = atMs;
  cell.agent = agent;
  cell.agentKey = agent.key;
}

function keyOf(
  code: string,
  hourMs: number,
  kind: string,
  country: string,
  referrerHost: string,
  agentKey: number,
): string {
  return `${code}\n${hourMs}\n${kind}\n${country}\n${referrerHost}\n${agentKey}`;
}
