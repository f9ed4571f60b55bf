// Migration 0050 on a database that already has links (the state of every deployed database), and the SQL
// folding it installs, against real Postgres.
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
const name = `lifeline_mig_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
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

describe('migration 0050 (title and readable-URL search)', () => {
  test('on a database with links: every existing link becomes searchable, and later writes keep it so', async () => {
    const files = readdirSync(join(ROOT, 'migrations'))
      .filter((f) => f.endsWith('.sql'))
      .sort();
    const before0050 = files.findIndex((f) => f >= '0050');
    assert.ok(before0050 > 0);
    await migrate(before0050);
    await sql`
      INSERT INTO links (code, target_url, status, origin, owner, title) VALUES
        ('old1', 'https://news.example/2026/%d8%ba%d8%b2%d8%a9-%d8%a7%d9%84%d9%8a%d9%88%d9%85/', 'active', 'wordpress', 'wp', 'أخبار غزة اليوم'),
        ('old2', 'https://news.example/plain-ascii', 'active', 'api', 'k', NULL)`;
    await migrate(Number.POSITIVE_INFINITY);
    const rows = await sql<
      { code: string; search_text: string }[]
    >`SELECT code, search_text FROM links ORDER BY code`;
    assert.deepEqual(
      rows.map((r) => [r.code, r.search_text]),
      [
        ['old1', 'اخبار غزه اليوم\n2026 غزه اليوم'],
        ['old2', '\n'],
      ],
    );
    const find = async (q: string) =>
      (
        await sql<
          { code: string }[]
        >`SELECT code FROM links WHERE search_text LIKE lifeline_search_pattern(${q})`
      ).map((r) => r.code);
    assert.deepEqual(await find('غزة اليوم'), ['old1']);
    // Only a change of title or target recomputes it; other updates leave it (and cost nothing).
    await sql`UPDATE links SET title = 'عنوان جديد' WHERE code = 'old2'`;
    assert.deepEqual(await find('عنوان جديد'), ['old2']);
    await sql`UPDATE links SET status = 'gone' WHERE code = 'old2'`;
    assert.deepEqual(await find('عنوان جديد'), ['old2']);
    // A direct write cannot set a stale value: the trigger recomputes it.
    await sql`INSERT INTO links (code, target_url, status, origin, owner, title, search_text)
              VALUES ('new1', 'https://x.example/', 'active', 'api', 'k', 'صحيح', 'forged')`;
    assert.deepEqual(await find('forged'), []);
    assert.deepEqual(await find('صحيح'), ['new1']);
  });

  test('percent-decoding in SQL: valid UTF-8 decoded, anything else kept as written', async () => {
    const decode = async (s: string) =>
      (await sql<{ v: string }[]>`SELECT lifeline_percent_decode(${s}) AS v`)[0]!.v;
    assert.equal(await decode('/%d8%ba%D8%B2%d8%a9/'), '/غزة/');
    assert.equal(await decode('a%2Fb%20c'), 'a/b c');
    for (const kept of ['%zz', '50%', '%d8', '%C0%AF', '%ED%A0%80', '%F4%90%80%80', '%00', '%ff%fe']) {
      assert.equal(await decode(`x${kept}y`), `x${kept}y`, kept);
    }
    assert.equal(await decode('%ff%d8%a7%d8'), '%ffا%d8');
    assert.equal(await decode('%F0%9F%93%B0'), '📰');
  });

  test('folding: case, compatibility forms, marks, tatweel, letter variants, invisible characters', async () => {
    const fold = async (s: string) =>
      (await sql<{ v: string }[]>`SELECT lifeline_search_fold(${s}) AS v`)[0]!.v;
    for (const [input, folded] of [
      ['ÉTÉ Café', 'ete cafe'],
      ['ﻻ ﺗﻨﺴﻰ', 'لا تنسي'], // presentation forms, alef maksura
      ['مُحَمَّد', 'محمد'], // harakat
      ['عـــاجل', 'عاجل'], // tatweel
      ['أإآٱ', 'اااا'], // alef forms
      ['مدرسة', 'مدرسه'], // teh marbuta
      ['مسؤول مسئول', 'مسوول مسيول'], // hamza seats
      ['کتاب یک', 'كتاب يك'], // Persian keheh and yeh
      ['שָׁלוֹם', 'שלום'], // Hebrew points
      ['a\u200Bb\u200Fc\u202Ed\u2066e', 'abcde'], // zero-width and bidi controls
      ['ＡＢＣ１２３', 'abc123'], // full width
      ['  الرئيس: «لن  نتراجع»؟ ', 'الرييس لن نتراجع'], // punctuation and spaces, Arabic and Latin
      ['/2026/الحرب-في_غزة/?x=1', '2026 الحرب في غزه x 1'],
    ]) {
      assert.equal(await fold(input!), folded, input);
    }
    const pattern = async (s: string) =>
      (await sql<{ v: string | null }[]>`SELECT lifeline_search_pattern(${s}) AS v`)[0]!.v;
    assert.equal(await pattern('مؤتمر صحفي'), '%موتمر صحفي%');
    assert.equal(await pattern('  -50%_off- '), '%50 off%', 'punctuation folds away, so no wildcard is left');
    assert.equal(await pattern('\u064e\u0650'), null, 'only marks: matches nothing');
  });
});
