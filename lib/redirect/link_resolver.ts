import type { Metrics } from '../shared/metrics.ts';
import { getLinkByCode } from '../stores/link_store.ts';
import type { Db } from '../stores/sql.ts';
import { type ServingRecord, toServingRecord } from './serving_record.ts';

/**
 * Answers "what does this code point to" for the redirect hot path. Every `code` here is a link's key
 * (lib/shared/link_key.ts): the code itself on the default short domain, `{domain}/{code}` on another.
 */
export interface LinkResolver {
  /** The serving record for `code`, or null when no such link exists. */
  resolve(code: string): Promise<ServingRecord | null>;
  /**
   * What an in-process cache already knows of a default-domain code, synchronously: the record, null for a
   * cached "no such code", or undefined when only `resolve` can tell. Lets the Node fast path answer an LRU hit
   * without a promise.
   */
  peek?(code: string): ServingRecord | null | undefined;
  /**
   * peek for the bare codes of one short domain (its stored domain, '' the default), picked once per domain by
   * the answerer so a hit on another domain costs what one on the default costs (ADR 0078).
   */
  peekerFor?(domain: string): (code: string) => ServingRecord | null | undefined;
  /** Forgets anything cached about `code` (after an edit, expiry or block). */
  invalidate(code: string): Promise<void>;
  /**
   * Re-reads `code` from Postgres and writes it through every layer (serving store included, so the in-house
   * resolver stays warm), then tells other instances to drop their copies. Used by activities after a change.
   * With `db` (a transaction not yet committed) it reads through that transaction: a change that makes a link
   * reachable reaches the serving store before Postgres shows it to anyone, so "active" in the API always
   * answers a redirect.
   */
  refresh(code: string, db?: Db): Promise<void>;
  /** refresh() for many codes in one pass (one Postgres read, pipelined writes and announcements). */
  refreshMany?(codes: string[]): Promise<void>;
  /** True when an in-process cache holds at least one live link record (readiness: it can serve some codes). */
  hasLiveRecords?(): boolean;
}

/** The simplest resolver: every lookup reads Postgres. */
export function createPostgresResolver(deps: { sql: Db; metrics?: Metrics }): LinkResolver {
  return {
    async resolve(code) {
      const row = await getLinkByCode(deps.sql, code);
      deps.metrics?.lookups.inc({ layer: 'postgres', result: row ? 'hit' : 'miss' });
      return row ? toServingRecord(row) : null;
    },
    async invalidate() {},
    async refresh() {},
  };
}
