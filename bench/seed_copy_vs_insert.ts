// Which way bench/seed_links.ts loads links: Postgres making the rows itself (INSERT … SELECT over
// generate_series, what the tool does) or the same rows streamed in by the client with COPY FROM STDIN. Both load
// the links table of a migrated scratch database with its secondary indexes dropped (as the tool loads) and every
// trigger on; the COPY side is given its rows ready made (copied out of the INSERT's result beforehand), so it is
// timed without the cost of making them: the comparison favours COPY.
//
//   npx tsx bench/seed_copy_vs_insert.ts [links=100000] [rounds=3]
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import postgres from 'postgres';
import { migrateDatabase } from '../lib/stores/migrate.ts';
import type { Sql } from '../lib/stores/sql.ts';
import { seedLinks } from './seed_links.ts';

const LINKS = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const ADMIN_URL =
  process.env.LIFELINE_TEST_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `lifeline_bench_seedcopy_${process.pid}`;
const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
await admin.unsafe(`CREATE DATABASE "${name}"`);
const url = new URL(ADMIN_URL);
url.pathname = `/${name}`;
await migrateDatabase(url.toString());
const sql = postgres(url.toString(), {
  max: 1,
  onnotice: () => {},
  connection: { synchronous_commit: 'off' },
});
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

try {
  // Only the links table is compared: its side tables are emptied, its secondary indexes dropped.
  const indexes = await sql<{ name: string }[]>`
    SELECT indexrelid::regclass::text AS name FROM pg_index WHERE indrelid = 'links'::regclass AND NOT indisprimary`;
  for (const index of indexes) await sql.unsafe(`DROP INDEX ${index.name}`);
  const empty = () =>
    sql`TRUNCATE links, vendor_links, destination_states, audit_log, click_counts, link_click_totals,
                 link_last_clicks, link_sync_queue CASCADE`;
  // The rows COPY will send: exactly what the INSERT makes, as COPY text (search_text left to the trigger).
  await seedLinks(sql as unknown as Sql, { from: 1, to: LINKS, otherDomain: 'x.example' });
  const columns = (
    await sql<{ name: string }[]>`
      SELECT attname AS name FROM pg_attribute
      WHERE attrelid = 'links'::regclass AND attnum > 0 AND NOT attisdropped AND attname <> 'search_text'
      ORDER BY attnum`
  ).map((c) => `"${c.name}"`);
  const chunks: Buffer[] = [];
  for await (const chunk of await sql.unsafe(`COPY links (${columns.join(', ')}) TO STDOUT`).readable()) {
    chunks.push(chunk as Buffer);
  }
  const bytes = Buffer.concat(chunks);
  const timings = { insert: [] as number[], copy: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const way of round % 2 ? (['copy', 'insert'] as const) : (['insert', 'copy'] as const)) {
      await empty();
      await sql`CHECKPOINT`;
      const t = performance.now();
      if (way === 'insert') {
        await seedLinks(sql as unknown as Sql, {
          from: 1,
          to: LINKS,
          otherDomain: 'x.example',
          linksOnly: true,
        });
      } else {
        const writable = await sql.unsafe(`COPY links (${columns.join(', ')}) FROM STDIN`).writable();
        await pipeline(Readable.from([bytes]), writable);
      }
      timings[way].push(performance.now() - t);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const insert = median(timings.insert);
  const copy = median(timings.copy);
  console.log(`\n${LINKS.toLocaleString('en')} links, ${ROUNDS} rounds, medians; load ${load()}`);
  console.log('| way | ms | links/s | vs INSERT … SELECT |');
  console.log('|---|---:|---:|---:|');
  console.log(
    `| INSERT … SELECT generate_series | ${insert.toFixed(0)} | ${((LINKS * 1000) / insert).toFixed(0)} | 1.00× |`,
  );
  console.log(
    `| COPY FROM STDIN (rows ready made) | ${copy.toFixed(0)} | ${((LINKS * 1000) / copy).toFixed(0)} | ${(copy / insert).toFixed(2)}× |`,
  );
} finally {
  await sql.end();
  await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
}
