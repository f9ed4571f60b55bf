// The bench's data: its own Postgres databases (seeded links, click sums), its Redis keys (the serving store's
// records, written in the store's format), and the links file the Map server and nginx are built from.
import { writeFileSync } from 'node:fs';
import { createClient } from '@redis/client';
import postgres from 'postgres';
import { deleteKeysByPrefix } from '../../devkit/harness/redis_keys.ts';
import { migrateDatabase } from '../../lib/stores/migrate.ts';
import { ADMIN_URL, CODE_PREFIX, REDIS_KEY_PREFIX, REDIS_URL, say, toDatabaseUrl } from './bench_settings.ts';

const quiet = { max: 1, onnotice: () => {} };

/** (Re)creates `dbName`, migrates it with this checkout's migrations and seeds `links` active links. */
export async function createBenchDatabase(dbName: string, links: number): Promise<void> {
  const admin = postgres(ADMIN_URL, quiet);
  await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const url = toDatabaseUrl(dbName);
  await migrateDatabase(url);
  const sql = postgres(url, quiet);
  const started = Date.now();
  // Batches of 100k keep each transaction (and the trigram GIN indexes' pending lists) reasonable.
  for (let from = 1; from <= links; from += 100_000) {
    const to = Math.min(links, from + 99_999);
    await sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      SELECT ${CODE_PREFIX} || i, 'https://news.example.com/2026/11/21/story-' || i || '?ref=bench',
             'active', 'clean', 'import', 'bench'
      FROM generate_series(${from}::int, ${to}::int) AS i`;
  }
  await sql`VACUUM ANALYZE links`;
  await sql.end();
  say(
    `seeded ${links.toLocaleString('en')} links in ${dbName} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

/**
 * Adds the bench's `links` active links to an existing database (BENCH_ARCHIVE_DATABASE) where they are missing,
 * the same rows createBenchDatabase writes; what else it holds is left alone.
 */
export async function addBenchLinks(dbName: string, links: number): Promise<void> {
  const sql = postgres(toDatabaseUrl(dbName), quiet);
  const [{ n }] = await sql<
    [{ n: number }]
  >`SELECT count(*)::int AS n FROM links WHERE code LIKE ${`${CODE_PREFIX}%`}`;
  if (n !== links) {
    await sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      SELECT ${CODE_PREFIX} || i, 'https://news.example.com/2026/11/21/story-' || i || '?ref=bench',
             'active', 'clean', 'import', 'bench'
      FROM generate_series(1, ${links}::int) AS i
      ON CONFLICT DO NOTHING`;
    await sql`ANALYZE links`;
  }
  const [{ total }] = await sql<[{ total: number }]>`SELECT count(*)::int AS total FROM links`;
  await sql.end();
  say(`${dbName}: ${links.toLocaleString('en')} bench links among ${total.toLocaleString('en')}`);
}

/**
 * Gives codes 1..`codes` three routing rules (Arabic readers, iPhones, Egypt; lib/links/routing_rules.ts's stored
 * shape, restated here), or takes them away again (`on` false), bumping `version` as an edit would. The servers
 * of a path start after this, so their LRUs fill from the rows as they then are.
 */
export async function setBenchRules(dbName: string, codes: number, on: boolean): Promise<void> {
  const sql = postgres(toDatabaseUrl(dbName), quiet);
  const rules = on
    ? JSON.stringify([
        { kind: 'language', values: ['ar'], target: 'https://news.example.com/ar/edition?ref=bench' },
        { kind: 'device', values: ['ios'], target: 'https://apps.example.com/ios?ref=bench' },
        { kind: 'country', values: ['EG'], target: 'https://news.example.com/eg?ref=bench' },
      ])
    : null;
  await sql`
    UPDATE links SET routing_rules = ${rules}::text::jsonb, version = version + 1
    WHERE code IN (SELECT ${CODE_PREFIX} || i FROM generate_series(1, ${codes}::int) AS i)`;
  await sql.end();
  say(`${on ? 'set' : 'removed'} three routing rules on ${codes.toLocaleString('en')} links`);
}

/**
 * True when `dbName` exists and holds exactly `links` links (a run with BENCH_KEEP_DATABASE=1 left it): seeding a
 * million links takes minutes on a loaded machine, so such a run reuses it.
 */
export async function benchDatabaseHolds(dbName: string, links: number): Promise<boolean> {
  const admin = postgres(ADMIN_URL, quiet);
  const [found] = await admin`SELECT 1 AS one FROM pg_database WHERE datname = ${dbName}`;
  await admin.end();
  if (found === undefined) return false;
  const sql = postgres(toDatabaseUrl(dbName), quiet);
  try {
    const [row] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM links`;
    return Number(row?.n) === links;
  } catch {
    return false;
  } finally {
    await sql.end();
  }
}

export async function dropBenchDatabase(dbName: string): Promise<void> {
  const admin = postgres(ADMIN_URL, quiet);
  await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
}

/**
 * Writes `code<TAB>target` for every active link of `dbName`: what the Map server loads and nginx's map is
 * generated from, so every server answers from the same data Postgres holds. Returns the number of lines.
 */
export async function writeLinksFile(dbName: string, path: string): Promise<number> {
  const sql = postgres(toDatabaseUrl(dbName), quiet);
  const rows = await sql<{ code: string; target_url: string }[]>`
    SELECT code, target_url FROM links WHERE status = 'active' AND code LIKE ${`${CODE_PREFIX}%`} ORDER BY code`;
  await sql.end();
  for (const r of rows) {
    if (/[\t\n]/.test(r.code + r.target_url))
      throw new Error(`link ${r.code} cannot be written as one TSV line`);
  }
  writeFileSync(path, rows.map((r) => `${r.code}\t${r.target_url}\n`).join(''));
  return rows.length;
}

/**
 * Writes the serving store's record of codes 1..`codes` into Redis as our serving store does: key
 * `{prefix}link:{code}`, value `{version}|[url, status, safety, redirectStatus, expiresAtMs, expiredUrl]`
 * (lib/serving/serving_store.ts; the format is restated here, not imported, so a change to it shows up as
 * misses in the lookup counters instead of silently matching).
 */
export async function seedServingStore(dbName: string, keyPrefix: string, codes: number): Promise<void> {
  const sql = postgres(toDatabaseUrl(dbName), quiet);
  const rows = await sql<
    {
      code: string;
      target_url: string;
      status: string;
      safety: string;
      redirect_status: number | null;
      expires_at: Date | null;
      expired_url: string | null;
      version: number;
    }[]
  >`
    SELECT code, target_url, status, safety, redirect_status, expires_at, expired_url, version
    FROM links WHERE code IN (SELECT ${CODE_PREFIX} || i FROM generate_series(1, ${codes}::int) AS i)`;
  await sql.end();
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  for (let at = 0; at < rows.length; at += 1000) {
    const pairs: [string, string][] = rows
      .slice(at, at + 1000)
      .map((r) => [
        `${keyPrefix}link:${r.code}`,
        `${r.version}|${JSON.stringify([
          r.target_url,
          r.status,
          r.safety,
          r.redirect_status,
          r.expires_at ? r.expires_at.getTime() : null,
          r.expired_url,
        ])}`,
      ]);
    await client.mSet(pairs);
  }
  await client.quit();
  say(`wrote ${rows.length.toLocaleString('en')} serving-store records under ${keyPrefix}link:`);
}

/** Deletes our keys (and only ours: the bench's prefix) from the bench's Redis database, by SCAN. */
export async function clearBenchRedis(): Promise<void> {
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  const deleted = await deleteKeysByPrefix(client, REDIS_KEY_PREFIX);
  await client.quit();
  if (deleted > 0) say(`deleted ${deleted} bench keys from ${REDIS_URL}`);
}

/** Clicks recorded in click_counts, summed by kind (human, bot, preview, qr, head). */
export async function sumClicksByKind(dbName: string): Promise<Record<string, number>> {
  const sql = postgres(toDatabaseUrl(dbName), quiet);
  const rows = await sql<{ kind: string; clicks: string }[]>`
    SELECT kind, sum(clicks)::text AS clicks FROM click_counts GROUP BY kind`;
  await sql.end();
  return Object.fromEntries(rows.map((r) => [r.kind, Number(r.clicks)]));
}
