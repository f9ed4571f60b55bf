import type { Db } from './sql.ts';

export const BLOCKLIST_KINDS = ['host', 'url_prefix'] as const;
export type BlocklistKind = (typeof BLOCKLIST_KINDS)[number];

/** One row of the local blocklist. */
export interface BlocklistEntry {
  pattern: string;
  kind: BlocklistKind;
  reason: string | null;
  createdBy: string;
  createdAt: Date;
}

const COLUMNS = `pattern, kind, reason, created_by AS "createdBy", created_at AS "createdAt"`;

/** Entries in pattern order, after `cursor` (a pattern), at most `limit`. */
export async function listBlocklistEntries(
  db: Db,
  options: { cursor?: string; limit: number },
): Promise<BlocklistEntry[]> {
  const after = options.cursor === undefined ? db`` : db`WHERE pattern > ${options.cursor}`;
  return db<BlocklistEntry[]>`
    SELECT ${db.unsafe(COLUMNS)} FROM blocklist ${after} ORDER BY pattern LIMIT ${options.limit}`;
}

/** The entry for `pattern`, or null. */
export async function getBlocklistEntry(db: Db, pattern: string): Promise<BlocklistEntry | null> {
  const rows = await db<
    BlocklistEntry[]
  >`SELECT ${db.unsafe(COLUMNS)} FROM blocklist WHERE pattern = ${pattern}`;
  return rows[0] ?? null;
}

/** Adds an entry; null (adding nothing) when the pattern is already listed. */
export async function insertBlocklistEntry(
  db: Db,
  entry: { pattern: string; kind: BlocklistKind; reason: string | null; createdBy: string },
): Promise<BlocklistEntry | null> {
  const rows = await db<BlocklistEntry[]>`
    INSERT INTO blocklist (pattern, kind, reason, created_by)
    VALUES (${entry.pattern}, ${entry.kind}, ${entry.reason}, ${entry.createdBy})
    ON CONFLICT (pattern) DO NOTHING
    RETURNING ${db.unsafe(COLUMNS)}`;
  return rows[0] ?? null;
}

/** Removes an entry; returns it, or null when there was none. */
export async function deleteBlocklistEntry(db: Db, pattern: string): Promise<BlocklistEntry | null> {
  const rows = await db<BlocklistEntry[]>`
    DELETE FROM blocklist WHERE pattern = ${pattern} RETURNING ${db.unsafe(COLUMNS)}`;
  return rows[0] ?? null;
}

/**
 * The entries that could match any of the given targets: host entries naming one of `hostSuffixes`
 * (primary-key lookups) and URL-prefix entries on one of the targets' hosts (the caller compares the prefix, in
 * the form both are normalised to). One query for a whole batch.
 */
export async function listBlocklistCandidates(
  db: Db,
  targets: { hostSuffixes: string[]; host: string }[],
): Promise<BlocklistEntry[]> {
  if (targets.length === 0) return [];
  const suffixes = [...new Set(targets.flatMap((t) => t.hostSuffixes))];
  const hosts = [...new Set(targets.map((t) => t.host))];
  return db<BlocklistEntry[]>`
    SELECT ${db.unsafe(COLUMNS)} FROM blocklist
    WHERE kind = 'host' AND pattern = ANY(${db.array(suffixes)})
    UNION ALL
    SELECT ${db.unsafe(COLUMNS)} FROM blocklist b
    WHERE kind = 'url_prefix' AND EXISTS (SELECT 1 FROM unnest(${db.array(hosts)}::text[]) AS t(host)
                                          WHERE position(t.host in lower(b.pattern)) > 0)`;
}
