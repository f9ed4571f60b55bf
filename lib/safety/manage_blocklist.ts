import { ConflictError, NotFoundError } from '../shared/errors.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import {
  deleteBlocklistEntry,
  insertBlocklistEntry,
  listBlocklistEntries,
} from '../stores/blocklist_store.ts';
import type { Db, Sql } from '../stores/sql.ts';
import type { BlocklistEntry, BlocklistInput } from './blocklist_entry.ts';

/** Adds a blocklist entry with an audit entry; 409 when the pattern is already listed. */
export async function addBlocklistEntry(
  sql: Sql,
  input: BlocklistInput,
  actor: string,
): Promise<BlocklistEntry> {
  return sql.begin(async (tx) => {
    const entry = await insertBlocklistEntry(tx, { ...input, createdBy: actor });
    if (!entry) {
      throw new ConflictError(`${input.pattern} is already in the blocklist.`, [
        { path: 'pattern', message: 'is already listed' },
      ]);
    }
    await insertAuditEntry(tx, {
      code: null,
      actor,
      action: 'blocklist.added',
      after: { pattern: entry.pattern, kind: entry.kind, reason: entry.reason },
    });
    return entry;
  });
}

/** Removes a blocklist entry with an audit entry; 404 when there is none. */
export async function removeBlocklistEntry(
  sql: Sql,
  pattern: string,
  actor: string,
): Promise<BlocklistEntry> {
  return sql.begin(async (tx) => {
    const entry = await deleteBlocklistEntry(tx, pattern);
    if (!entry) throw new NotFoundError(`${pattern} is not in the blocklist.`);
    await insertAuditEntry(tx, {
      code: null,
      actor,
      action: 'blocklist.removed',
      before: { pattern: entry.pattern, kind: entry.kind, reason: entry.reason },
    });
    return entry;
  });
}

/**
 * The lower-cased text every target an entry can match contains (its host), so the re-scan after a change
 * reads only those; undefined (re-scan everything) for internationalised hosts, whose targets may be stored
 * in Unicode while the entry is in punycode.
 */
export function getBlocklistRescanScope(entry: Pick<BlocklistEntry, 'pattern' | 'kind'>): string | undefined {
  const host = entry.kind === 'host' ? entry.pattern : new URL(entry.pattern).hostname;
  return host.includes('xn--') ? undefined : host.toLowerCase();
}

/** Entries in pattern order, after `cursor` (a pattern), at most `limit`. */
export function listBlocklist(
  db: Db,
  options: { cursor?: string; limit: number },
): Promise<BlocklistEntry[]> {
  return listBlocklistEntries(db, options);
}
