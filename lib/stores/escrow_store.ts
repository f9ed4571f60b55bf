// The SQL of escrow exports and restores (lib/escrow): one read-only snapshot streamed table by table as JSON
// lines, and the bulk load of those lines back into a database. Every column of a table is exported by name
// (row_to_json), so a column added by a later migration is carried without touching this file.
import type { Readable } from 'node:stream';
import { CopyBinaryLines } from './copy_binary_lines.ts';
import type { CopyColumn, CopyColumnKind } from './copy_text_rows.ts';
import { type Db, quoteIdent, type Sql, type Tx } from './sql.ts';

/**
 * The tables an export carries, in load order (a table's foreign keys point at tables before it), each with
 * the columns its lines are ordered by (a stable order makes two exports of the same data byte-identical).
 * `orderBy` is the table's primary key, column for column: the export reads each table along it, in one COPY
 * (tests/lib/escrow/escrow_order.test.ts checks every table has it).
 * `history`: audit entries and click aggregates, left out of a `--links-only` export.
 */
export const ESCROW_TABLES = [
  { table: 'links', orderBy: ['code'], history: false, codeColumn: true },
  { table: 'vendor_links', orderBy: ['code', 'vendor'], history: false, codeColumn: true },
  { table: 'reports', orderBy: ['code', 'reporter_hash'], history: false, codeColumn: true },
  { table: 'blocklist', orderBy: ['pattern'], history: false, codeColumn: false },
  { table: 'audit_log', orderBy: ['id'], history: true, codeColumn: true },
  {
    table: 'click_counts',
    orderBy: ['code', 'hour', 'kind', 'country', 'referrer_host'],
    history: true,
    codeColumn: true,
  },
  { table: 'link_last_clicks', orderBy: ['code'], history: true, codeColumn: true },
  { table: 'click_families', orderBy: ['code', 'day', 'browser', 'os'], history: true, codeColumn: true },
  { table: 'webhook_endpoints', orderBy: ['id'], history: false, codeColumn: false },
] as const;

/**
 * Columns an export never carries: outgoing webhooks' signing secrets (and what only matters while one is in
 * use). A restore makes a new secret per endpoint and leaves it switched off until an admin rotates it and
 * switches it on (docs/ESCROW.md).
 */
export const OMITTED_ESCROW_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  webhook_endpoints: [
    'secret',
    'previous_secret',
    'previous_secret_until',
    'secret_rotated_at',
    'paused_until',
  ],
};

/** Why a restored endpoint is off: its secret was not exported. */
export const RESTORED_WEBHOOK_REASON =
  'restored from an escrow export without its secret: rotate the secret, then switch it on';

/**
 * Columns an older export may carry in a table that no longer has them, and where their values live now:
 * `links.last_clicked_at` moved to link_last_clicks (migration 0071, ADR 0026). A restore loads them there.
 */
export const MOVED_ESCROW_COLUMNS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  links: { last_clicked_at: 'link_last_clicks' },
};
export type EscrowTable = (typeof ESCROW_TABLES)[number]['table'];
export const ESCROW_TABLE_NAMES = ESCROW_TABLES.map((t) => t.table) as [EscrowTable, ...EscrowTable[]];

/** What a snapshot transaction offers the exporter. */
export interface EscrowSnapshot {
  /** The snapshot's time (the transaction's start, UTC ISO). */
  snapshotAt: string;
  /** The newest migration applied to the exported database. */
  lastMigration: string;
  /** The digest of the exported database's search folding (searchFoldDigest); null where it has none. */
  searchFold: string | null;
  /** Link counts by status, and how many were deleted (their codes stay reserved). */
  linkCounts: { total: number; deleted: number; byStatus: Record<string, number> };
  /** The table's columns in their stored order. */
  columnsOf(table: EscrowTable): Promise<string[]>;
  /**
   * The table's rows as JSON lines (each row's compact JSON object, keys = column names, and a newline) in
   * pieces of about `bytes`, in the key's order. `rows` counts the lines in the piece.
   */
  streamLines(table: EscrowTable, bytes: number): AsyncIterable<{ lines: Buffer; rows: number }>;
  /**
   * Whether other connections can read this same snapshot side by side (`shareSnapshot`). Not on embedded PGlite:
   * it serves every client from one session, so a second transaction would wait for this one to end.
   */
  shareable: boolean;
  /**
   * Runs `work` with a reader on another connection of the pool whose transaction imports this snapshot
   * (`pg_export_snapshot` / `SET TRANSACTION SNAPSHOT`, as `pg_dump --jobs` does): it sees exactly what this one
   * sees. Only while this snapshot's own `work` runs, and only when `shareable`.
   */
  shareSnapshot<R>(work: (reader: EscrowReader) => Promise<R>): Promise<R>;
}

/** What reads tables from a snapshot, on its own connection or on one that shares it. */
export type EscrowReader = Pick<EscrowSnapshot, 'columnsOf' | 'streamLines'>;

/**
 * Runs `work` inside one REPEATABLE READ, READ ONLY transaction: every table it streams is read from the same
 * snapshot, whatever commits meanwhile, on this connection or on others that import it. Times come out in UTC so
 * the JSON is the same wherever it runs.
 */
export async function withEscrowSnapshot<T>(
  sql: Sql,
  work: (snapshot: EscrowSnapshot) => Promise<T>,
): Promise<T> {
  return (await sql.begin('isolation level repeatable read read only', async (tx) => {
    await tx`SET LOCAL timezone = 'UTC'`;
    const [meta] = await tx<{ snapshotAt: string; lastMigration: string | null; pglite: boolean }[]>`
      SELECT to_json(now())#>>'{}' AS "snapshotAt",
             (SELECT name FROM schema_migrations ORDER BY run_on DESC, id DESC LIMIT 1) AS "lastMigration",
             version() LIKE '%(PGlite %' AS pglite`;
    const searchFold = await searchFoldDigest(tx);
    const byStatusRows = await tx<{ status: string; n: number; deleted: number }[]>`
      SELECT status, count(*)::int AS n, count(deleted_at)::int AS deleted FROM links GROUP BY status`;
    const byStatus: Record<string, number> = {};
    let total = 0;
    let deleted = 0;
    for (const row of byStatusRows) {
      byStatus[row.status] = row.n;
      total += row.n;
      deleted += row.deleted;
    }
    // Every table from here on is read in its key's order (after the count above, which needs no order).
    await steerToKeyOrder(tx);
    const shareable = !meta!.pglite;
    let snapshotId: Promise<string> | undefined;
    let open = true;
    try {
      return await work({
        snapshotAt: meta!.snapshotAt,
        lastMigration: meta!.lastMigration ?? '',
        searchFold,
        linkCounts: { total, deleted, byStatus },
        columnsOf: (table) => listExportedColumns(tx, table),
        async *streamLines(table, bytes) {
          yield* streamCopy(tx, table, bytes);
        },
        shareable,
        async shareSnapshot(share) {
          if (!shareable) throw new Error('this database cannot share a snapshot between connections');
          if (!open) throw new Error('the snapshot has ended');
          snapshotId ??= tx<{ id: string }[]>`SELECT pg_export_snapshot() AS id`.then(([row]) => row!.id);
          const id = await snapshotId;
          return (await sql.begin('isolation level repeatable read read only', async (other) => {
            // Must be the transaction's first statement (BEGIN aside).
            await other.unsafe(`SET TRANSACTION SNAPSHOT '${id.replace(/'/g, "''")}'`);
            await other`SET LOCAL timezone = 'UTC'`;
            await steerToKeyOrder(other);
            return share({
              columnsOf: (table) => listExportedColumns(other, table),
              async *streamLines(table, bytes) {
                yield* streamCopy(other, table, bytes);
              },
            });
          })) as Awaited<ReturnType<typeof share>>;
        },
      });
    } finally {
      open = false;
    }
  })) as T;
}

/**
 * The statement an export reads `table` with: each row's JSON text, in its primary key's order (the webhook
 * endpoints' secrets left out).
 */
export async function escrowSelect(db: Db, table: EscrowTable): Promise<string> {
  const spec = ESCROW_TABLES.find((t) => t.table === table)!;
  const source = OMITTED_ESCROW_COLUMNS[table]
    ? `(SELECT ${(await listExportedColumns(db, table)).map(quoteIdent).join(', ')} FROM ${spec.table})`
    : spec.table;
  const keys = spec.orderBy.map((c) => `t.${quoteIdent(c)}`);
  return `SELECT row_to_json(t)::text FROM ${source} t ORDER BY ${keys.join(', ')}`;
}

/**
 * Leaves the planner one way to give a table in its key's order, for the rest of the transaction: walking the
 * primary key. Each of the export's transactions is steered once, before its first table. A sort (whole or incremental) and a sequential scan are switched off rather than priced, so the
 * choice does not follow the table's size or physical order (ADR 0095). The export's transaction runs nothing
 * else that these settings would slow.
 */
export async function steerToKeyOrder(tx: Tx): Promise<void> {
  await tx`SET LOCAL enable_sort = off`;
  await tx`SET LOCAL enable_incremental_sort = off`;
  await tx`SET LOCAL enable_seqscan = off`;
}

/**
 * A table's rows as JSON lines through one `COPY (SELECT row_to_json(t)::text … ORDER BY <key>) TO STDOUT` in
 * binary form: each row's text arrives length-prefixed, is copied to the output as bytes and never becomes a
 * JavaScript string (reading pages of rows as strings spent most of a 10M-link export's time on that side). The plan walks
 * the primary key (the transaction is steered to it, steerToKeyOrder): a sort would read and sort the whole table
 * before its first row. A consumer that stops early cancels the statement and the rest is drained, so the
 * transaction's connection is left ready for its rollback.
 */
async function* streamCopy(
  tx: Tx,
  table: EscrowTable,
  bytes: number,
): AsyncGenerator<{ lines: Buffer; rows: number }> {
  const query = tx.unsafe(`COPY (${await escrowSelect(tx, table)}) TO STDOUT (FORMAT binary)`);
  const stream = (await query.readable()) as unknown as Readable;
  const lines = new CopyBinaryLines(Math.max(1 << 16, bytes + (bytes >> 2)));
  let done = false;
  try {
    for await (const chunk of stream.iterator({ destroyOnReturn: false })) {
      lines.push(chunk as Buffer);
      if (lines.pending >= bytes) yield lines.take();
    }
    lines.end();
    done = true;
    if (lines.pending > 0) yield lines.take();
  } finally {
    if (!done) {
      // Stopped part-way (cancelled, a failed write): end the statement and read what is still on its way.
      const drained = new Promise<void>((resolve) => {
        stream.once('close', resolve);
        stream.once('end', resolve);
        stream.once('error', () => resolve());
      });
      if (!stream.destroyed && !stream.readableEnded) {
        void query.cancel();
        stream.resume();
        await drained;
      }
    }
  }
}

/** The size of each of `tables` on disk (its heap, without indexes): what its export will roughly weigh. */
export async function listTableSizes(db: Db, tables: readonly string[]): Promise<Map<string, number>> {
  const rows = await db<{ table: string; bytes: number }[]>`
    SELECT c.relname AS table, pg_relation_size(c.oid) AS bytes
    FROM pg_class c
    WHERE c.relnamespace = to_regnamespace(current_schema()) AND c.relkind = 'r'
      AND c.relname = ANY(${db.array([...tables])}::text[])`;
  return new Map(rows.map((r) => [r.table, r.bytes]));
}

/** A table's column names in their stored order. */
export async function listTableColumns(db: Db, table: string): Promise<string[]> {
  const rows = await db<{ column: string }[]>`
    SELECT column_name AS "column" FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = ${table} ORDER BY ordinal_position`;
  return rows.map((r) => r.column);
}

/**
 * How each of `columns` of `table` takes a value in COPY text (copy_text_rows.ts): arrays as array literals, json
 * and jsonb as JSON text, everything else as its text. In the order given.
 */
export async function listCopyColumns(
  db: Db,
  table: string,
  columns: readonly string[],
): Promise<CopyColumn[]> {
  const rows = await db<{ column: string; kind: CopyColumnKind }[]>`
    SELECT a.attname AS "column",
           CASE WHEN t.typcategory = 'A' THEN 'array'
                WHEN t.typname IN ('json', 'jsonb') THEN 'json'
                ELSE 'scalar' END AS kind
    FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
    WHERE a.attrelid = to_regclass(${quoteIdent(table)}) AND a.attnum > 0 AND NOT a.attisdropped`;
  const kinds = new Map(rows.map((r) => [r.column, r.kind]));
  return columns.map((name) => {
    const kind = kinds.get(name);
    if (kind === undefined) throw new Error(`${table} has no column ${name}`);
    return { name, kind };
  });
}

/**
 * Refreshes `table`'s planner statistics and returns its columns' average widths in bytes (pg_stats): a restore
 * analyzes the links as soon as they are in (its checks and key joins then plan on real numbers) and starts the
 * index builds over the widest columns first (a trigram index's build time grows with the text it indexes).
 */
export async function analyzeColumnWidths(db: Db, table: string): Promise<Map<string, number>> {
  await db.unsafe(`ANALYZE ${quoteIdent(table)}`);
  const rows = await db<{ column: string; width: number }[]>`
    SELECT attname AS "column", avg_width AS width FROM pg_stats
    WHERE schemaname = current_schema() AND tablename = ${table}`;
  return new Map(rows.map((r) => [r.column, r.width]));
}

/** Whether `db` is embedded PGlite (one session for every client: no second reader, no COPY FROM STDIN). */
export async function isEmbeddedPglite(db: Db): Promise<boolean> {
  const [row] = await db<{ pglite: boolean }[]>`SELECT version() LIKE '%(PGlite %' AS pglite`;
  return row!.pglite;
}

/** A table's columns as an export carries them (OMITTED_ESCROW_COLUMNS left out). */
async function listExportedColumns(db: Db, table: string): Promise<string[]> {
  const omitted = OMITTED_ESCROW_COLUMNS[table] ?? [];
  return (await listTableColumns(db, table)).filter((c) => !omitted.includes(c));
}

/** Names of the migrations applied to this database. */
export async function listAppliedMigrations(db: Db): Promise<string[]> {
  const rows = await db<{ name: string }[]>`SELECT name FROM schema_migrations ORDER BY id`;
  return rows.map((r) => r.name);
}

/** Rows already in the tables a restore loads (the blocklist aside: its entries never conflict with links). */
export async function countRestoreTargetRows(db: Db): Promise<Record<string, number>> {
  const [row] = await db<Record<string, number>[]>`
    SELECT (SELECT count(*) FROM links)::int AS links,
           (SELECT count(*) FROM vendor_links)::int AS vendor_links,
           (SELECT count(*) FROM reports)::int AS reports,
           (SELECT count(*) FROM audit_log)::int AS audit_log,
           (SELECT count(*) FROM click_counts)::int AS click_counts,
           (SELECT count(*) FROM link_last_clicks)::int AS link_last_clicks,
           (SELECT count(*) FROM click_families)::int AS click_families,
           (SELECT count(*) FROM webhook_endpoints)::int AS webhook_endpoints`;
  return row!;
}

/**
 * The plain (non-constraint) indexes of `tables`, with the statement that recreates each (storage parameters
 * included). Loading into an empty table and building its indexes afterwards is several times faster than
 * maintaining them row by row (the trigram GIN indexes above all).
 */
export async function listPlainIndexes(
  tx: Tx,
  tables: readonly string[],
): Promise<{ name: string; definition: string; table: string }[]> {
  return tx<{ name: string; definition: string; table: string }[]>`
    SELECT i.indexname AS name, i.indexdef AS definition, i.tablename AS table
    FROM pg_indexes i
    WHERE i.schemaname = current_schema() AND i.tablename = ANY(${tx.array([...tables])}::text[])
      AND NOT EXISTS (
        SELECT 1 FROM pg_constraint c
        WHERE c.conname = i.indexname AND c.connamespace = (SELECT oid FROM pg_namespace WHERE nspname = i.schemaname))
    ORDER BY i.tablename, i.indexname`;
}

/**
 * The foreign keys of `tables` (vendor mappings and reports point at links), with what recreates each. A restore
 * into an empty database drops them for the load and adds them again before it commits: adding one checks every
 * row in one join, where a row-by-row check locks the link each row points at (millions of writes to `links`).
 */
export async function listForeignKeys(
  tx: Tx,
  tables: readonly string[],
): Promise<{ table: string; name: string; definition: string }[]> {
  return tx<{ table: string; name: string; definition: string }[]>`
    SELECT r.relname AS table, c.conname AS name, pg_get_constraintdef(c.oid) AS definition
    FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid
    WHERE c.contype = 'f' AND c.connamespace = to_regnamespace(current_schema())
      AND r.relname = ANY(${tx.array([...tables])}::text[])
    ORDER BY r.relname, c.conname`;
}

export async function dropForeignKeys(
  tx: Tx,
  keys: readonly { table: string; name: string }[],
): Promise<void> {
  for (const key of keys) {
    await tx.unsafe(`ALTER TABLE ${quoteIdent(key.table)} DROP CONSTRAINT ${quoteIdent(key.name)}`);
  }
}

/** Adds the keys again; each is checked against every row as it is added. */
export async function addForeignKeys(
  tx: Tx,
  keys: readonly { table: string; name: string; definition: string }[],
): Promise<void> {
  for (const key of keys) {
    await tx.unsafe(
      `ALTER TABLE ${quoteIdent(key.table)} ADD CONSTRAINT ${quoteIdent(key.name)} ${key.definition}`,
    );
  }
}

export async function dropIndexes(tx: Tx, names: readonly string[]): Promise<void> {
  for (const name of names) await tx.unsafe(`DROP INDEX ${quoteIdent(name)}`);
}

/**
 * Builds one index from its definition, in a transaction of its own (several run side by side on separate
 * connections: a GIN build uses one core). Index builds of a restore may use more memory than a session usually
 * does (sorts, GIN lists): at least 256 MB, or the server's own setting where an operator sized it larger (a
 * trigram GIN build of ten million rows runs several times faster with a gigabyte).
 */
export async function buildIndex(sql: Sql, definition: string, backends?: Set<number>): Promise<void> {
  await sql.begin(async (tx) => {
    const [me] = await tx<{ pid: number }[]>`
      SELECT pg_backend_pid() AS pid,
             set_config('maintenance_work_mem',
                        CASE WHEN pg_size_bytes(current_setting('maintenance_work_mem')) < 256 * 1024 * 1024
                             THEN '256MB' ELSE current_setting('maintenance_work_mem') END, true)`;
    // While it builds, `backends` names its server process: cancelBackends stops it.
    backends?.add(me!.pid);
    try {
      await tx.unsafe(definition);
    } finally {
      backends?.delete(me!.pid);
    }
  });
}

/** Cancels what the server processes `pids` are running (index builds of this restore). */
export async function cancelBackends(sql: Sql, pids: readonly number[]): Promise<void> {
  if (pids.length === 0) return;
  await sql`SELECT pg_cancel_backend(pid) FROM unnest(${sql.array([...pids])}::int[]) AS pid`;
}

/**
 * Empties the tables a restore into an empty database loads (the blocklist aside: it may hold entries from before,
 * and a restore only adds to it), and what points at their rows: they held nothing before the restore began
 * (countRestoreTargetRows), so whatever they hold came from it.
 */
export async function emptyRestoredTables(tx: Tx): Promise<void> {
  const tables = ESCROW_TABLES.filter((t) => t.table !== 'blocklist').map((t) => quoteIdent(t.table));
  await tx.unsafe(`TRUNCATE ${tables.join(', ')} CASCADE`);
}

/** The foreign keys among `keys` that `tables` do not have now (by name). */
export async function listMissingForeignKeys<K extends { table: string; name: string }>(
  db: Db,
  keys: readonly K[],
): Promise<K[]> {
  const rows = await db<{ name: string }[]>`
    SELECT conname AS name FROM pg_constraint
    WHERE contype = 'f' AND connamespace = to_regnamespace(current_schema())
      AND conname = ANY(${db.array(keys.map((k) => k.name))}::text[])`;
  const present = new Set(rows.map((r) => r.name));
  return keys.filter((k) => !present.has(k.name));
}

/** Which of `names` are indexes of this schema now. */
export async function listExistingIndexes(db: Db, names: readonly string[]): Promise<string[]> {
  const rows = await db<{ name: string }[]>`
    SELECT indexname AS name FROM pg_indexes
    WHERE schemaname = current_schema() AND indexname = ANY(${db.array([...names])}::text[])`;
  return rows.map((r) => r.name);
}

/**
 * Codes of the export a merge-restore saw and those it inserted (the other tables' rows attach only to the
 * inserted ones; the difference is what it left alone).
 */
export async function createInsertedCodesTable(tx: Tx): Promise<void> {
  await tx`CREATE TEMP TABLE escrow_export_codes (code text COLLATE "C" PRIMARY KEY) ON COMMIT DROP`;
  await tx`CREATE TEMP TABLE escrow_inserted_codes (code text COLLATE "C" PRIMARY KEY) ON COMMIT DROP`;
}

/** In a merge: how many exported codes the database already had (left unchanged), and the first few. */
export async function listSkippedCodes(
  tx: Tx,
  limit: number,
): Promise<{ count: number; examples: string[] }> {
  const [row] = await tx<{ n: number }[]>`
    SELECT count(*)::int AS n FROM escrow_export_codes e
    WHERE NOT EXISTS (SELECT 1 FROM escrow_inserted_codes i WHERE i.code = e.code)`;
  const examples = await tx<{ code: string }[]>`
    SELECT e.code FROM escrow_export_codes e
    WHERE NOT EXISTS (SELECT 1 FROM escrow_inserted_codes i WHERE i.code = e.code)
    ORDER BY e.code LIMIT ${limit}`;
  return { count: row!.n, examples: examples.map((r) => r.code) };
}

/**
 * Inserts a batch of exported rows (`jsonArray`: a JSON array of row objects keyed by column name) into
 * `table`, naming `columns` (columns absent from the export take their defaults). `merge`: rows whose key is
 * taken are skipped, never changed; code-bound rows of other tables load only for codes this restore inserted
 * (links record theirs in escrow_inserted_codes). Returns how many rows were inserted.
 */
export async function insertEscrowRows(
  tx: Tx,
  input: {
    table: EscrowTable;
    columns: readonly string[];
    jsonArray: string;
    merge: boolean;
    /** links only: the rows carry last_clicked_at (an export made before migration 0071). */
    lastClickedAt?: boolean;
  },
): Promise<number> {
  if (input.table === 'links' && input.lastClickedAt) await insertMovedLastClicks(tx, input);
  // A restored webhook endpoint gets a fresh secret nobody knows (pg_strong_random through gen_random_uuid) and
  // stays off until an admin rotates it: its exported secret never left the database.
  const extra =
    input.table === 'webhook_endpoints'
      ? [
          [
            'secret',
            `'whsec_' || encode(decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'), 'base64')`,
          ],
          ['enabled', 'false'],
          ['disabled_reason', `'${RESTORED_WEBHOOK_REASON}'`],
        ]
      : [];
  const loaded = input.columns.filter((c) => !extra.some(([name]) => name === c));
  const cols = [...loaded, ...extra.map(([name]) => name!)].map(quoteIdent).join(', ');
  const picked = [...loaded.map((c) => `r.${quoteIdent(c)}`), ...extra.map(([, value]) => value!)].join(', ');
  const from = `json_populate_recordset(null::${input.table}, $1::text::json) r`;
  if (input.table === 'links') {
    if (!input.merge) {
      const result = await tx.unsafe(`INSERT INTO links (${cols}) SELECT ${picked} FROM ${from}`, [
        input.jsonArray,
      ]);
      return result.count;
    }
    const [row] = await tx.unsafe<{ n: number }[]>(
      `WITH batch AS MATERIALIZED (SELECT * FROM ${from}),
            seen AS (INSERT INTO escrow_export_codes SELECT code FROM batch ON CONFLICT DO NOTHING),
            ins AS (INSERT INTO links (${cols}) SELECT ${picked} FROM batch r ON CONFLICT DO NOTHING RETURNING code),
            kept AS (INSERT INTO escrow_inserted_codes SELECT code FROM ins RETURNING 1)
       SELECT count(*)::int AS n FROM kept`,
      [input.jsonArray],
    );
    return row!.n;
  }
  const spec = ESCROW_TABLES.find((t) => t.table === input.table)!;
  const where =
    input.merge && spec.codeColumn ? 'WHERE r.code IN (SELECT code FROM escrow_inserted_codes)' : '';
  const conflict = input.merge || input.table === 'blocklist' ? 'ON CONFLICT DO NOTHING' : '';
  const result = await tx.unsafe(
    `INSERT INTO ${input.table} (${cols}) SELECT ${picked} FROM ${from} ${where} ${conflict}`,
    [input.jsonArray],
  );
  return result.count;
}

/** The functions that fold a link's title and URL into `links.search_text` (migration 0050), and its trigger. */
const SEARCH_FOLD_FUNCTIONS = [
  'lifeline_decode_escape_run',
  'lifeline_percent_decode',
  'lifeline_search_fold',
  'lifeline_search_text',
  'links_set_search_text',
];

/**
 * A digest of how this database folds search text: the MD5 of its folding functions' definitions as Postgres
 * prints them. Two databases with the same digest store the same `search_text` for the same title and URL, so a
 * restore may take the exported column as it is (ADR 0092); null when the functions are missing.
 */
export async function searchFoldDigest(db: Db): Promise<string | null> {
  const [row] = await db<{ digest: string | null; n: number }[]>`
    SELECT md5(string_agg(pg_get_functiondef(p.oid), E'\n' ORDER BY p.proname, p.oid)) AS digest, count(*)::int AS n
    FROM pg_proc p
    WHERE p.pronamespace = to_regnamespace(current_schema()) AND p.proname = ANY(${SEARCH_FOLD_FUNCTIONS}::text[])`;
  return row && row.n === SEARCH_FOLD_FUNCTIONS.length ? row.digest : null;
}

/**
 * Switches the row trigger that folds `search_text` off (`on` false) or on again, inside the restore's
 * transaction (a failure puts it back with everything else).
 */
export async function setSearchTextTrigger(tx: Tx, on: boolean): Promise<void> {
  await tx.unsafe(`ALTER TABLE links ${on ? 'ENABLE' : 'DISABLE'} TRIGGER links_search_text`);
}

/** How many of `codes` hold a `search_text` other than what this database's folding makes of their row. */
export async function countSearchTextMismatches(tx: Tx, codes: readonly string[]): Promise<number> {
  const [row] = await tx<{ n: number }[]>`
    SELECT count(*)::int AS n FROM links
    WHERE code = ANY(${tx.array([...codes])}::text[])
      AND search_text IS DISTINCT FROM lifeline_search_text(title, target_url)`;
  return row!.n;
}

/** Folds every link's `search_text` again (before the indexes are built, so each row is written once). */
export async function refoldSearchText(tx: Tx): Promise<number> {
  const result = await tx`
    UPDATE links SET search_text = lifeline_search_text(title, target_url)
    WHERE search_text IS DISTINCT FROM lifeline_search_text(title, target_url)`;
  return result.count;
}

/** What a restored link's safety reason says until its re-scan. */
export const RESTORED_SAFETY_REASON = 'restored from an escrow export; not re-scanned yet';

/**
 * A link row as a restore loads it (changed in place). Its safety verdict is not taken on the row's word: a
 * `warn` or `blocked` verdict stays (a row may only make a link more cautious), anything else becomes `unknown`,
 * and every link is due a re-scan (no check time). Only the keys the export has are set: a column an older export
 * lacks keeps its default.
 */
export function asRestoredLink(row: Record<string, unknown>): Record<string, unknown> {
  const kept = row.safety === 'warn' || row.safety === 'blocked';
  if ('safety' in row && !kept) row.safety = 'unknown';
  if ('safety_reason' in row && !kept) row.safety_reason = RESTORED_SAFETY_REASON;
  if ('safety_checked_at' in row) row.safety_checked_at = null;
  return row;
}

/**
 * An older export's links.last_clicked_at, loaded into link_last_clicks. Run before the links themselves, so in a
 * merge only codes this restore is about to insert count (none of them is in the database yet).
 */
async function insertMovedLastClicks(tx: Tx, input: { jsonArray: string; merge: boolean }): Promise<void> {
  const fresh = input.merge ? 'AND NOT EXISTS (SELECT 1 FROM links AS l WHERE l.code = r.code)' : '';
  await tx.unsafe(
    `INSERT INTO link_last_clicks (code, last_clicked_at)
     SELECT r.code, r.last_clicked_at FROM json_to_recordset($1::text::json) AS r(code text, last_clicked_at timestamptz)
     WHERE r.last_clicked_at IS NOT NULL ${fresh}
     ON CONFLICT (code) DO NOTHING`,
    [input.jsonArray],
  );
}

/** After loading audit entries with their ids, the next id continues after the largest. */
export async function resetAuditSequence(tx: Tx): Promise<void> {
  await tx`
    SELECT setval(pg_get_serial_sequence('audit_log', 'id'), GREATEST((SELECT max(id) FROM audit_log), 1),
                  (SELECT max(id) FROM audit_log) IS NOT NULL)`;
}

/** After loading endpoints with their ids, the next id continues after the largest. */
export async function resetWebhookEndpointSequence(tx: Tx): Promise<void> {
  await tx`
    SELECT setval(pg_get_serial_sequence('webhook_endpoints', 'id'),
                  GREATEST((SELECT max(id) FROM webhook_endpoints), 1),
                  (SELECT max(id) FROM webhook_endpoints) IS NOT NULL)`;
}

/** Refreshes planner statistics after a bulk load (outside the loading transaction). */
export async function analyzeTables(sql: Sql, tables: readonly string[]): Promise<void> {
  for (const table of tables) await sql.unsafe(`ANALYZE ${quoteIdent(table)}`);
}
