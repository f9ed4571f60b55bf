import type { ServingRecord } from './serving_record.ts';

/**
 * The serving store as reconciliation and failover checks read it (the hot path's ServingStore has this
 * method): what the in-house front would answer from the store itself, not from Postgres behind it.
 */
export interface ServingReplica {
  /** Several records at once, in the order asked; null where the store has none. */
  getMany(codes: string[]): Promise<(ServingRecord | null)[]>;
  /**
   * Drops a record. Used before rewriting a stale one: a store that refuses to overwrite a record claiming
   * a newer version than Postgres's would otherwise keep the wrong answer.
   */
  delete?(code: string): Promise<void>;
}
