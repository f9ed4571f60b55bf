// Seeds N links (10,000,000 is the target) in every state the schema has, with their audit, click, Bitly,
// destination and sync-queue rows in fixed proportions, into a database of its own that it creates and
// migrates: the ground the 10M list, search and export measurements stand on (docs/BENCHMARKS.md, "Ten million
// links"; ADR 0089).
//
//   npx tsx bench/seed_links.ts [links=10000000] [--database=lifeline_10m] [--chunk=250000] [--jobs=2] [--index-jobs=2] [--fresh]
//     [--other-domain=x.example]
//
// Rows are made by Postgres itself (INSERT … SELECT over generate_series, one transaction per chunk of links
// with their side rows), not sent by this process: the load is bound by the server's trigger, constraint and
// index work, which COPY would pay alike (ADR 0089 has the measurement). On a database it made, the secondary
// indexes of the big tables are dropped before the first chunk and built again after the last one (their
// definitions are kept in the table `seed_links_progress` until then, so a run stopped half-way resumes where it
// stopped and still rebuilds them). Every trigger stays on (the folded search text of each link, the click
// totals), every CHECK, foreign key and primary key is checked row by row as it goes in, and the unique
// (site, post_id) index is checked when it is built again.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import postgres from 'postgres';
import { migrateDatabase } from '../lib/stores/migrate.ts';
import type { Db, Sql } from '../lib/stores/sql.ts';
import { AR_WORDS, EN_WORDS } from './headline_words.ts';

/** The proportions of what `seedLinks` makes, per link (documented in docs/BENCHMARKS.md, "Ten million links"). */
export const SEED_PROPORTIONS = {
  // By i % 100 (the state):
  status: {
    'active (clean, no expiry)': 0.65,
    'active, expiring in the future': 0.05,
    'expired (status)': 0.05,
    'active but past expires_at (not yet swept)': 0.02,
    'deleted (gone, deleted_at)': 0.03,
    'gone (unpublished post, kept)': 0.02,
    'blocked (status and verdict)': 0.01,
    'active, verdict blocked': 0.01,
    'active, verdict warn': 0.03,
    pending: 0.01,
    'active, verdict unknown': 0.02,
    'active, on the other short domain': 0.05,
    'active, imported': 0.05,
  },
  origin: { wordpress: 0.4, api: 0.3, ui: 0.2, import: 0.1 },
  title: { arabic: 0.6, english: 0.3, none: 0.1 },
  tagged: 5 / 7,
  routingRules: 0.001,
  auditRowsPerLink: 'one link.created each; link.updated for 1 in 10; link.deleted / link.expired for those',
  clickRowsPerClickedLink: 3,
  clicked: 0.3,
  // Every other link, but not pending ones or those on the other short domain.
  bitlyRow: 0.47,
  destinationStateRow: 0.1,
  syncQueueRow: 0.0001,
} as const;

const SECTIONS = ['politics', 'sport', 'culture', 'world', 'business'];
export const SEED_SITES = ['site-0', 'site-1', 'site-2', 'site-3'];

/** Link i's code (without its domain): `s` and i in hex, so codes sort and never collide. */
export const seedCode = (i: number) => `s${i.toString(16)}`;
/** Link i's Arabic headline, as seeded (the bench searches for parts of it). */
export const seedArabicTitle = (i: number) =>
  `${AR_WORDS[i % 30]} ${AR_WORDS[Math.floor(i / 30) % 30]} ${AR_WORDS[Math.floor(i / 900) % 30]} رقم ${i}`;
/** Link i's English headline, as seeded. */
export const seedEnglishTitle = (i: number) =>
  `${EN_WORDS[i % 30]} ${EN_WORDS[Math.floor(i / 30) % 30]} ${EN_WORDS[Math.floor(i / 900) % 30]} no. ${i}`;
/** Which title link i has: its headline language by (i / 10) % 10. */
export const seedTitleLanguage = (i: number): 'ar' | 'en' | null => {
  const lang = Math.floor(i / 10) % 10;
  return lang < 6 ? 'ar' : lang < 9 ? 'en' : null;
};
/** Whether link i is listed (not deleted): i % 100 outside 77..79. */
export const seedIsListed = (i: number) => !(i % 100 >= 77 && i % 100 <= 79);

/** WordPress writes non-Latin slugs percent-encoded in lower case. */
const slug = (w: string) => encodeURIComponent(w).toLowerCase();

export interface SeedOptions {
  /** Links i = from … to (1-based, inclusive). */
  from: number;
  to: number;
  /** A second short domain: 5% of links live there (code `{domain}/{code}`); none: they stay on the default. */
  otherDomain?: string | undefined;
  /** The links alone, without their side rows (bench/seed_copy_vs_insert.ts compares the links statement). */
  linksOnly?: boolean;
  /** Runs last in the chunk's transaction (the tool records the chunk as done there). */
  alsoInTransaction?: ((tx: Db) => Promise<unknown>) | undefined;
}

/**
 * Inserts links from … to and their side rows, in one transaction (so a chunk is all there or not at all).
 * Deterministic: link i is the same whichever chunk makes it.
 */
export async function seedLinks(sql: Sql, options: SeedOptions): Promise<void> {
  const { from, to } = options;
  const other = options.otherDomain ?? '';
  const ar = AR_WORDS;
  const arSlug = AR_WORDS.map(slug);
  // Outside the chunk's transaction: chunks loaded side by side would otherwise wait on each other here.
  await sql`
    INSERT INTO wordpress_sites (site, rest_url, seen_at)
    SELECT s, 'https://' || s || '.news.example/wp-json/', now() FROM unnest(${SEED_SITES}::text[]) AS s
    WHERE NOT EXISTS (SELECT 1 FROM wordpress_sites AS w WHERE w.site = s)
    ON CONFLICT (site) DO NOTHING`;
  await sql.begin(async (tx) => {
    // v = i % 100 is the state; o = (i / 100) % 10 the origin; lang = (i / 10) % 10 the headline's language.
    await tx`
      INSERT INTO links (code, domain, target_url, status, safety, safety_reason, safety_checked_at, origin, site,
                         post_id, title, owner, expires_at, expired_url, redirect_status, tags, dedupe_key,
                         source_version, deleted_at, created_at, updated_at, version, utm_campaign, utm_source,
                         routing_rules)
      SELECT CASE WHEN other_domain THEN ${other} || '/' ELSE '' END || 's' || to_hex(i),
             CASE WHEN other_domain THEN ${other} ELSE '' END,
             url, status, safety,
             CASE WHEN safety IN ('blocked', 'warn') THEN 'seeded verdict' END,
             CASE WHEN safety <> 'unknown' THEN created END,
             origin,
             CASE WHEN origin = 'wordpress' THEN 'site-' || (i % 4) END,
             CASE WHEN origin = 'wordpress' THEN i END,
             title,
             CASE origin WHEN 'wordpress' THEN 'wordpress:site-' || (i % 4) WHEN 'ui' THEN 'editor' || (i % 20) || '@newsroom.example'
                         WHEN 'import' THEN 'import:bitly' ELSE 'apikey:' || (1 + i % 3) END,
             CASE WHEN v BETWEEN 60 AND 64 THEN now() + ((1 + i % 365) || ' days')::interval
                  WHEN v BETWEEN 70 AND 76 THEN created + interval '30 days' END,
             CASE WHEN v IN (72, 73) THEN 'https://www.example-news.com/archive/' || i END,
             CASE WHEN i % 50 = 1 THEN 302 WHEN i % 50 = 2 THEN 308 END,
             CASE WHEN i % 7 < 5 THEN
               ARRAY[(ARRAY['politics','sport','culture','world','business'])[1 + (i / 7) % 5], 'batch-' || (i % 1000)]
               || CASE WHEN i % 7 = 0 THEN ARRAY['breaking'] ELSE '{}'::text[] END
             ELSE '{}'::text[] END,
             CASE WHEN origin = 'api' THEN md5(url) END,
             CASE WHEN origin = 'wordpress' THEN created END,
             CASE WHEN v BETWEEN 77 AND 79 THEN created + interval '40 days' END,
             created,
             created + ((i % 50) || ' hours')::interval,
             1 + i % 3,
             CASE WHEN i % 20 = 0 THEN 'newsletter' END,
             CASE WHEN i % 20 = 0 THEN 'lifeline' END,
             CASE WHEN i % 1000 = 7 THEN jsonb_build_array(jsonb_build_object(
               'kind', 'language', 'values', jsonb_build_array('ar'), 'target', url || '?lang=ar')) END
      FROM (
        SELECT i, v, o, lang, other_domain, created,
               CASE WHEN v BETWEEN 60 AND 69 OR v BETWEEN 75 AND 76 OR v BETWEEN 83 AND 86 OR v >= 88 THEN 'active'
                    WHEN v BETWEEN 70 AND 74 THEN 'expired'
                    WHEN v BETWEEN 77 AND 81 THEN 'gone'
                    WHEN v = 82 THEN 'blocked'
                    WHEN v = 87 THEN 'pending'
                    ELSE 'active' END AS status,
               CASE WHEN v IN (82, 83) THEN 'blocked' WHEN v BETWEEN 84 AND 86 THEN 'warn'
                    WHEN v IN (87, 88, 89) THEN 'unknown' ELSE 'clean' END AS safety,
               CASE WHEN v BETWEEN 95 AND 99 THEN 'import'
                    WHEN v IN (80, 81) OR o < 4 THEN 'wordpress'
                    WHEN o < 7 THEN 'api' WHEN o < 9 THEN 'ui' ELSE 'import' END AS origin,
               CASE WHEN lang < 6 THEN
                      (${ar}::text[])[1 + i % 30] || ' ' || (${ar}::text[])[1 + (i / 30) % 30] || ' '
                      || (${ar}::text[])[1 + (i / 900) % 30] || ' رقم ' || i
                    WHEN lang < 9 THEN
                      initcap((${EN_WORDS}::text[])[1 + i % 30]) || ' ' || (${EN_WORDS}::text[])[1 + (i / 30) % 30] || ' '
                      || (${EN_WORDS}::text[])[1 + (i / 900) % 30] || ' no. ' || i
               END AS title,
               'https://www.example-news.com/' || (${SECTIONS}::text[])[1 + (i / 7) % 5] || '/'
                 || to_char(created, 'YYYY/MM') || '/'
                 || CASE WHEN lang < 6
                      THEN (${arSlug}::text[])[1 + i % 30] || '-' || (${arSlug}::text[])[1 + (i / 30) % 30]
                           || '-' || (${arSlug}::text[])[1 + (i / 900) % 30] || '-' || i
                      ELSE 'story-' || i || '-' || left(md5(i::text), 8) END
                 || CASE WHEN i % 20 = 0 THEN '?utm_source=lifeline' ELSE '' END AS url
        FROM (
          SELECT i, i % 100 AS v, (i / 100) % 10 AS o, (i / 10) % 10 AS lang,
                 ${other !== ''} AND i % 100 BETWEEN 90 AND 94 AS other_domain,
                 timestamptz '2021-01-01 00:00:00+00' + (i * 15 || ' seconds')::interval AS created
          FROM generate_series(${from}::int, ${to}::int) AS i
        ) AS base
      ) AS l`;
    if (options.linksOnly) return;
    // The Bitly copy of every other link that left pending: mostly synced, a few failed or in collision.
    await tx`
      INSERT INTO vendor_links (code, vendor, vendor_id, state, synced_url, last_error, attempts, synced_at, updated_at)
      SELECT code, 'bitly', 'bit.ly/' || code,
             CASE WHEN i % 200 = 0 THEN 'failed' WHEN i % 500 = 2 THEN 'collision' ELSE 'synced' END,
             CASE WHEN i % 200 = 0 THEN NULL ELSE target_url END,
             CASE WHEN i % 200 = 0 THEN 'seeded failure' END,
             CASE WHEN i % 200 = 0 THEN 3 ELSE 1 END,
             CASE WHEN i % 200 = 0 THEN NULL ELSE created_at END, created_at
      FROM (SELECT i, l.code, l.target_url, l.created_at FROM generate_series(${from}::int, ${to}::int) AS i
            JOIN links AS l ON l.code = 's' || to_hex(i) COLLATE "C"
            WHERE i % 2 = 0 AND l.status <> 'pending') AS s`;
    // A link-rot record for one link in ten (each verdict).
    await tx`
      INSERT INTO destination_states (code, url, host, outcome, verdict, verdict_at, http_status, checks, failures,
                                      checked_at, next_check_at)
      SELECT l.code, l.target_url, 'www.example-news.com',
             (ARRAY['ok','ok','ok','ok','ok','ok','moved','gone','unreachable', NULL])[1 + (i / 10) % 10],
             (ARRAY['ok','ok','ok','ok','ok','ok','moved','dead','suspect','unchecked'])[1 + (i / 10) % 10],
             CASE WHEN (i / 10) % 10 < 9 THEN l.created_at + interval '1 day' END,
             (ARRAY[200,200,200,200,200,200,301,404,NULL,NULL]::smallint[])[1 + (i / 10) % 10],
             CASE WHEN (i / 10) % 10 < 9 THEN 1 ELSE 0 END,
             CASE WHEN (i / 10) % 10 BETWEEN 7 AND 8 THEN 1 ELSE 0 END,
             CASE WHEN (i / 10) % 10 < 9 THEN l.created_at + interval '1 day' END,
             l.created_at + interval '8 days'
      FROM generate_series(${from}::int, ${to}::int) AS i
      JOIN links AS l ON l.code = 's' || to_hex(i) COLLATE "C"
      WHERE i % 10 = 5`;
    // The audit trail: a creation for every link; an edit for one in ten; the deletion or expiry where it happened.
    await tx`
      INSERT INTO audit_log (code, actor, action, before, after, reason, created_at)
      SELECT l.code, l.owner, a.action,
             CASE WHEN a.action <> 'link.created' THEN jsonb_build_object('status', 'active') END,
             jsonb_build_object('url', l.target_url, 'status', CASE WHEN a.action = 'link.created'
               THEN CASE WHEN l.status = 'pending' THEN 'pending' ELSE 'active' END ELSE l.status END),
             NULL, a.at
      FROM links AS l
      CROSS JOIN LATERAL (VALUES
        ('link.created', l.created_at, true),
        ('link.updated', l.updated_at, right(l.code, 1) = '3'),
        ('link.deleted', l.deleted_at, l.deleted_at IS NOT NULL),
        ('link.expired', l.expires_at, l.status = 'expired')) AS a(action, at, happened)
      WHERE a.happened AND l.code IN (
        SELECT CASE WHEN ${other !== ''} AND i % 100 BETWEEN 90 AND 94 THEN ${other} || '/' ELSE '' END
               || 's' || to_hex(i)
        FROM generate_series(${from}::int, ${to}::int) AS i)`;
    // Clicks for three links in ten (not pending ones): two human hours and a bot's; the totals follow by trigger.
    await tx`
      INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks)
      SELECT l.code, date_trunc('hour', l.created_at) + (c.h || ' hours')::interval, c.kind, c.country, c.referrer,
             CASE WHEN c.kind = 'bot' THEN 2 ELSE 1 + (i * c.m) % 97 END
      FROM generate_series(${from}::int, ${to}::int) AS i
      JOIN links AS l ON l.code = CASE WHEN ${other !== ''} AND i % 100 BETWEEN 90 AND 94 THEN ${other} || '/' ELSE '' END
                                  || 's' || to_hex(i) COLLATE "C"
      CROSS JOIN (VALUES (1, 'human', 'EG', 'facebook.com', 7), (2, 'human', 'SA', '', 13),
                         (1, 'bot', '', '', 1)) AS c(h, kind, country, referrer, m)
      WHERE (i / 3) % 10 < 3 AND l.status <> 'pending'`;
    await tx`
      INSERT INTO link_last_clicks (code, last_clicked_at)
      SELECT l.code, date_trunc('hour', l.created_at) + interval '2 hours 10 minutes'
      FROM generate_series(${from}::int, ${to}::int) AS i
      JOIN links AS l ON l.code = CASE WHEN ${other !== ''} AND i % 100 BETWEEN 90 AND 94 THEN ${other} || '/' ELSE '' END
                                  || 's' || to_hex(i) COLLATE "C"
      WHERE (i / 3) % 10 < 3 AND l.status <> 'pending'`;
    await tx`
      INSERT INTO link_sync_queue (code, reason, enqueued_at, next_attempt_at)
      SELECT 's' || to_hex(i), 'seeded', now(), now() + interval '1 day'
      FROM generate_series(${from}::int, ${to}::int) AS i
      WHERE i % 10000 = 3`;
    await options.alsoInTransaction?.(tx);
  });
}

// ---------------------------------------------------------------------------------------------------------
// The command: a database of its own, indexes dropped for the load and built again after it.

/** The tables whose secondary indexes are dropped during a load into a database the tool made. */
const LOADED_TABLES = [
  'links',
  'audit_log',
  'click_counts',
  'link_click_totals',
  'vendor_links',
  'destination_states',
  'link_last_clicks',
];

const TEST_DATABASE = /^lifeline_t_/;

function argValue(name: string): string | undefined {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg?.slice(name.length + 3);
}

const say = (message: string) => console.log(`[seed ${new Date().toISOString().slice(11, 19)}] ${message}`);
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function main() {
  const count = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 10_000_000);
  const database = argValue('database') ?? 'lifeline_10m';
  const chunk = Number(argValue('chunk') ?? 250_000);
  const otherDomain = argValue('other-domain') ?? 'x.example';
  const fresh = process.argv.includes('--fresh');
  const jobs = Number(argValue('jobs') ?? 2);
  const indexJobs = Number(argValue('index-jobs') ?? jobs);
  if (!Number.isInteger(count) || count < 1) throw new Error('links: a positive whole number');
  if (!/^[a-z_][a-z0-9_]*$/.test(database) || TEST_DATABASE.test(database) || database === 'lifeline') {
    throw new Error(`--database=${database}: a name of its own (lower case), not a test or the dev database`);
  }
  const adminUrl =
    process.env.LIFELINE_TEST_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  if (fresh) await admin.unsafe(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  const [exists] = await admin`SELECT 1 FROM pg_database WHERE datname = ${database}`;
  if (!exists) await admin.unsafe(`CREATE DATABASE "${database}"`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  await migrateDatabase(url.toString());
  // One connection per job; index builds get a large sort memory, and nothing waits for the WAL flush.
  const sql = postgres(url.toString(), {
    max: Math.max(jobs, indexJobs),
    onnotice: () => {},
    connection: { maintenance_work_mem: '1GB', synchronous_commit: 'off' },
  });

  await sql`CREATE TABLE IF NOT EXISTS seed_links_progress (
    key text PRIMARY KEY, indexes text[] NOT NULL DEFAULT '{}')`;
  await sql`CREATE TABLE IF NOT EXISTS seed_links_chunks (from_i integer PRIMARY KEY, to_i integer NOT NULL)`;
  let [progress] = await sql<
    { indexes: string[] }[]
  >`SELECT indexes FROM seed_links_progress WHERE key = 'links'`;
  if (!progress) {
    const [row] = await sql<{ links: string }[]>`SELECT count(*) AS links FROM links`;
    const links = row?.links ?? 0;
    if (Number(links) > 0) {
      throw new Error(`${database} holds links the tool did not make: seed into a new database (--fresh)`);
    }
    // Secondary indexes only: primary keys stay (the foreign keys and the side rows' joins use them).
    const indexes = await sql<{ name: string; def: string }[]>`
      SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
      FROM pg_index AS i
      WHERE i.indrelid = ANY(${LOADED_TABLES}::regclass[]) AND NOT i.indisprimary
      ORDER BY 1`;
    [progress] = await sql<{ indexes: string[] }[]>`
      INSERT INTO seed_links_progress (key, indexes) VALUES ('links', ${indexes.map((i) => i.def)})
      RETURNING indexes`;
    for (const index of indexes) await sql.unsafe(`DROP INDEX ${index.name}`);
    say(`dropped ${indexes.length} secondary indexes for the load (kept in seed_links_progress)`);
  }
  const doneChunks = new Set(
    (await sql<{ from_i: number }[]>`SELECT from_i FROM seed_links_chunks`).map((r) => r.from_i),
  );
  const todo: number[] = [];
  for (let from = 1; from <= count; from += chunk) if (!doneChunks.has(from)) todo.push(from);
  const alreadyDone = count - todo.reduce((sum, from) => sum + Math.min(chunk, count - from + 1), 0);
  const started = performance.now();
  let loadedNow = 0;
  say(
    `seeding ${todo.length} chunks of ${chunk.toLocaleString('en')} links into ${database}, ${jobs} at a time (load ${load()})`,
  );
  const loadJob = async () => {
    for (let from = todo.shift(); from !== undefined; from = todo.shift()) {
      const to = Math.min(count, from + chunk - 1);
      const t = performance.now();
      await seedLinks(sql as unknown as Sql, {
        from,
        to,
        otherDomain,
        alsoInTransaction: (tx) => tx`INSERT INTO seed_links_chunks (from_i, to_i) VALUES (${from}, ${to})`,
      });
      loadedNow += to - from + 1;
      const s = (performance.now() - t) / 1000;
      say(
        `links ${from.toLocaleString('en')} … ${to.toLocaleString('en')} (${((to - from + 1) / s).toFixed(0)} links/s in this chunk; ` +
          `${(alreadyDone + loadedNow).toLocaleString('en')} done, ${((loadedNow * 1000) / (performance.now() - started)).toFixed(0)} links/s overall; load ${load()})`,
      );
    }
  };
  await Promise.all(Array.from({ length: jobs }, loadJob));
  const loaded = performance.now();
  const buildTimes: string[] = [];
  // The trigram indexes take longest (the URLs' most): start them first, so the others fill in beside them.
  const cost = (def: string) =>
    /gin \(target_url/.test(def) ? 3 : /gin \(search_text/.test(def) ? 2 : /USING gin/.test(def) ? 1 : 0;
  const defs = [...progress!.indexes].sort((a, b) => cost(b) - cost(a));
  const buildJob = async () => {
    for (let def = defs.shift(); def !== undefined; def = defs.shift()) {
      const t = performance.now();
      const name = /^CREATE (?:UNIQUE )?INDEX (\S+)/.exec(def)![1]!;
      await sql.unsafe(def.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX IF NOT EXISTS '));
      buildTimes.push(`${name} ${((performance.now() - t) / 1000).toFixed(0)} s`);
      say(`built ${name} in ${((performance.now() - t) / 1000).toFixed(1)} s (load ${load()})`);
    }
  };
  await Promise.all(Array.from({ length: indexJobs }, buildJob));
  const built = performance.now();
  await sql`ANALYZE`;
  await sql`DROP TABLE seed_links_progress, seed_links_chunks`;
  const rows = await sql<{ table: string; rows: string; size: string }[]>`
    SELECT c.relname AS table, c.reltuples::bigint::text AS rows,
           pg_size_pretty(pg_total_relation_size(c.oid)) AS size
    FROM pg_class AS c WHERE c.relname = ANY(${[...LOADED_TABLES, 'link_sync_queue']}) ORDER BY c.relname`;
  const [sized] = await sql<
    { size: string }[]
  >`SELECT pg_size_pretty(pg_database_size(current_database())) AS size`;
  const size = sized?.size;
  const loadS = (loaded - started) / 1000;
  console.log(
    `\n${database}: ${count.toLocaleString('en')} links (${loadedNow.toLocaleString('en')} this run, ${jobs} jobs)`,
  );
  console.log(
    `load ${loadS.toFixed(0)} s (${(loadedNow / loadS).toFixed(0)} links/s with their side rows), ` +
      `indexes ${((built - loaded) / 1000).toFixed(0)} s, analyze ${((performance.now() - built) / 1000).toFixed(0)} s, ` +
      `total ${((performance.now() - started) / 1000).toFixed(0)} s; database ${size}; load average ${load()}`,
  );
  for (const r of rows) console.log(`  ${r.table}: ~${Number(r.rows).toLocaleString('en')} rows, ${r.size}`);
  if (buildTimes.length) console.log(`  index builds: ${buildTimes.join(', ')}`);
  await sql.end();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
