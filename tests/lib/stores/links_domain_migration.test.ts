// Migration 0100 (several short domains, ADR 0078) on a database that already has links, as every deployed one
// does: the rows stay byte for byte what they were and belong to the default domain; afterwards a code is unique
// per domain, and the check ties a row's domain to its key.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runner } from 'node-pg-migrate';
import postgres from 'postgres';
import { ROOT } from '../../../scripts/temporal_cli.ts';

const admin = () =>
  process.env.LIFELINE_TEST_POSTGRES_ADMIN_URL ?? `postgres://${userInfo().username}@127.0.0.1:5432/postgres`;
const name = `lifeline_mig_dom_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
let url: string;
let sql: postgres.Sql;

const migrate = (count: number) =>
  runner({
    databaseUrl: url,
    dir: join(ROOT, 'migrations'),
    migrationsTable: 'schema_migrations',
    ignorePattern: '\\..*|.*\\.md',
    direction: 'up',
    count,
    singleTransaction: true,
    checkOrder: true,
    logger: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
  });

before(async () => {
  const a = postgres(admin(), { max: 1, onnotice: () => {} });
  await a.unsafe(`CREATE DATABASE "${name}"`);
  await a.end();
  const u = new URL(admin());
  u.pathname = `/${name}`;
  url = u.toString();
  sql = postgres(url, { max: 2, onnotice: () => {} });
});
after(async () => {
  await sql?.end();
  const a = postgres(admin(), { max: 1, onnotice: () => {} });
  await a.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await a.end();
});

/** Every column of every link as text, in code order: what "unchanged" is compared on. */
const snapshot = async (columns: string) =>
  (await sql.unsafe(`SELECT ${columns} FROM links ORDER BY code`)).map((r) => JSON.stringify(r));

describe('migration 0100 (links.domain)', () => {
  test('existing links keep every column and key, on the default domain; codes are then unique per domain', async () => {
    const files = readdirSync(join(ROOT, 'migrations'))
      .filter((f) => f.endsWith('.sql'))
      .sort();
    const before0100 = files.findIndex((f) => f >= '0100');
    assert.ok(before0100 > 0, 'migration 0100 is in migrations/');
    await migrate(before0100);
    await sql`
      INSERT INTO links (code, target_url, status, origin, owner, title, tags, site, post_id) VALUES
        ('mig-a1', 'https://news.example/a', 'active', 'api', 'k1', 'A', '{x,y}', NULL, NULL),
        ('mig-b2', 'https://news.example/b', 'gone', 'wordpress', 'wp', NULL, '{}', 'site-mig', 41),
        ('MIG-c3', 'https://news.example/c', 'pending', 'ui', 'u', 'ج', '{}', NULL, NULL)`;
    await sql`INSERT INTO vendor_links (code, vendor, vendor_id, state) VALUES ('mig-a1', 'bitly', 'sho.rt/mig-a1', 'synced')`;
    const columns = (
      await sql<{ column_name: string }[]>`
        SELECT column_name FROM information_schema.columns WHERE table_name = 'links' ORDER BY ordinal_position`
    ).map((r) => r.column_name);
    const before = await snapshot(columns.join(', '));

    const ran = await migrate(Number.POSITIVE_INFINITY);
    assert.ok(
      ran.some((m) => m.name.startsWith('0100_')),
      'migration 0100 ran',
    );

    assert.deepEqual(await snapshot(columns.join(', ')), before, 'no column of an existing row changed');
    assert.deepEqual(
      (await sql<{ code: string; domain: string }[]>`SELECT code, domain FROM links ORDER BY code`).map(
        (r) => [r.code, r.domain],
      ),
      [
        ['MIG-c3', ''],
        ['mig-a1', ''],
        ['mig-b2', ''],
      ],
      'existing rows are the default domain’s, under their own codes',
    );
    const [constraint] = await sql<{ convalidated: boolean }[]>`
      SELECT convalidated FROM pg_constraint WHERE conname = 'links_domain_key_check'`;
    assert.equal(constraint?.convalidated, true, 'the check was validated against the existing rows');

    // The same code on another domain is another link; on the same domain it is taken.
    await sql`
      INSERT INTO links (code, domain, target_url, status, origin, owner)
      VALUES ('two.example/mig-a1', 'two.example', 'https://news.example/other', 'active', 'api', 'k1')`;
    await assert.rejects(
      sql`INSERT INTO links (code, domain, target_url, status, origin, owner)
          VALUES ('two.example/mig-a1', 'two.example', 'https://news.example/again', 'active', 'api', 'k1')`,
      (error: { code?: string }) => error.code === '23505',
    );
    // A key must carry its row's domain, and the default domain's keys carry none.
    for (const [code, domain] of [
      ['three.example/mig-x', 'two.example'],
      ['two.example/mig-y', ''],
      ['mig-z', 'two.example'],
      ['two.example/a/b', 'two.example'],
    ] as const) {
      await assert.rejects(
        sql`INSERT INTO links (code, domain, target_url, status, origin, owner)
            VALUES (${code}, ${domain}, 'https://news.example/x', 'active', 'api', 'k1')`,
        (error: { code?: string }) => error.code === '23514',
        `${code} on "${domain}" is refused`,
      );
    }
    // The vendor row of an existing link still references it.
    const [vendor] = await sql<{ code: string }[]>`
      SELECT v.code FROM vendor_links v JOIN links l USING (code) WHERE v.vendor = 'bitly'`;
    assert.equal(vendor?.code, 'mig-a1');
  });
});
