// A click counter a caller keeps per code (the hot path keeps one beside its memoised answer): one running aggregate.
import type { ClickCountRow } from '../stores/click_counts_store.ts';
import type { ClickKind } from '../stores/click_stats_store.ts';
import { type Agent, NO_AGENT, NO_FAMILY } from './classify_click.ts';

/** What `cell` hands out: opaque to callers. */
export interface ClickCell {
  readonly code: string;
}

/**
 * A cell inside the buffer: one running aggregate for its code, whether it is in `cells`, and the latest click
 * it last asked Postgres to move the code's last click time to (movesLastClick, click_holdings.ts). A class rather than an
 * object literal, so its objects have a map of their own: as a literal it shared its first seven fields'
 * transitions with the flush's rows and the map's aggregates, and V8 kept no feedback for takeCells' store to
 * `listed`, throwing its optimised code away once per batch (a deopt loop, seen in a CPU profile of the LRU path).
 */
export class Cell implements ClickCountRow {
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
  /**
   * The running count's agent (an interned object, compared by its number `agentKey`, part of the key: its
   * families are worked out at the flush). A reference only: the request path reads no more of it.
   */
  agent: Agent = NO_AGENT;
  agentKey = NO_FAMILY;

  constructor(code: string) {
    this.code = code;
  }
}

/** An aggregate the click buffer holds: a click_counts row and the agent its readers' families come from. */
export interface HeldRow extends ClickCountRow {
  agent: Agent;
}

/** A snapshot of a cell's running count as a row (for onWritten). */
export function rowOf(cell: Cell): ClickCountRow {
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
