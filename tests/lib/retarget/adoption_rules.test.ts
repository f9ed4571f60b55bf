import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { toAdoptableCode } from '../../../lib/publishing/backfill_adoption.ts';
import { getBreakerBudget } from '../../../lib/publishing/mass_change_breaker.ts';
import { buildListingUrl } from '../../../lib/reconcile/wordpress_listing.ts';
import {
  CSV_MAX_BYTES,
  CSV_MAX_ROWS,
  CSV_SLICE,
  CSV_SLICE_BYTES,
  compileRule,
  parseRetargetCsv,
  parseRetargetCsvInSlices,
  regexProblem,
} from '../../../lib/retarget/retarget_rule.ts';
import { ConfigError, parseConfig } from '../../../lib/shared/config.ts';

// The pure rules of adoption: which back-halves may be adopted, how the listing URL is built, retarget rules,
// CSV parsing, and WORDPRESS_REST_URLS.

type CsvPairs = [string, string][];

describe('adoption rules', () => {
  test('a known short URL is adoptable only on our domains, as a possible code', () => {
    const hosts = ['sho.rt', 'links.news.example'];
    assert.equal(toAdoptableCode('https://sho.rt/3abcDEF', hosts), '3abcDEF');
    assert.equal(toAdoptableCode('http://SHO.rt/Legacy_1/', hosts), 'Legacy_1');
    assert.equal(toAdoptableCode('https://bit.ly/3abcDEF', hosts), null, 'bit.ly is not our domain');
    assert.equal(toAdoptableCode('https://sho.rt/api', hosts), null, 'reserved');
    assert.equal(toAdoptableCode('https://sho.rt/a/b', hosts), null, 'two segments');
    assert.equal(toAdoptableCode('https://sho.rt/%F0%9F%98%80', hosts), null, 'not our alphabet');
    assert.equal(toAdoptableCode('https://user:pw@sho.rt/abc12', hosts), null, 'credentials');
    assert.equal(toAdoptableCode('not a url', hosts), null);
  });

  test('the listing URL follows the contract for pretty and plain permalinks', () => {
    const pretty = buildListingUrl('https://news.example/wp-json/lifeline/v1/', {
      page: '2',
      per_page: '100',
    });
    assert.equal(`${pretty.pathname}${pretty.search}`, '/wp-json/lifeline/v1/posts?page=2&per_page=100');
    const plain = buildListingUrl('https://news.example/index.php?rest_route=/lifeline/v1/', {
      page: '2',
      per_page: '100',
    });
    assert.equal(
      `${plain.pathname}${plain.search}`,
      '/index.php?rest_route=/lifeline/v1/posts&page=2&per_page=100',
    );
  });

  test('prefix and regex rules rewrite; RE2 refuses backtracking-only syntax and stays linear', () => {
    const prefix = compileRule({
      type: 'prefix',
      from: 'https://old.example/',
      to: 'https://new.example/x/',
    });
    assert.equal(prefix.rewrite('https://old.example/a?b=1'), 'https://new.example/x/a?b=1');
    assert.equal(prefix.rewrite('https://other.example/a'), null);
    const regex = compileRule({
      type: 'regex',
      pattern: '^https://old\\.example/(\\d{4})/(.*)$',
      replacement: 'https://new.example/$2?year=$1',
      flags: 'i',
    });
    assert.equal(regex.rewrite('HTTPS://OLD.example/2020/story/'), 'https://new.example/story/?year=2020');
    assert.equal(regex.rewrite('https://old.example/story/'), null);
    assert.match(regexProblem('(a)\\1') ?? '', /no backreferences or lookarounds/);
    assert.match(regexProblem('(?<=a)b') ?? '', /RE2/);
    const evil = compileRule({ type: 'regex', pattern: '(a+)+$', replacement: 'x' });
    const started = performance.now();
    assert.equal(evil.rewrite(`${'a'.repeat(50_000)}!`), null);
    assert.ok(performance.now() - started < 2_000, 'linear, not exponential');
  });

  test('CSV: quoting, a header, duplicates and bad lines named by number', () => {
    const ok = parseRetargetCsv(
      'old,new\r\n"https://a.example/x,y",https://b.example/\n\nhttps://c.example/,"https://d.example/""q"""\n',
    );
    assert.deepEqual(ok.problems, []);
    assert.deepEqual(ok.pairs, [
      { oldUrl: 'https://a.example/x,y', newUrl: 'https://b.example/' },
      { oldUrl: 'https://c.example/', newUrl: 'https://d.example/"q"' },
    ]);
    const bad = parseRetargetCsv(
      'https://a.example/,https://b.example/\nhttps://a.example/,https://c.example/\none\n"open,x\n',
    );
    assert.deepEqual(bad.problems, [
      { line: 2, message: 'repeats the old URL of line 1' },
      { line: 3, message: 'must be two fields: old URL,new URL' },
      { line: 4, message: 'opens a quoted field that is never closed' },
    ]);
    assert.deepEqual(parseRetargetCsv('\n').problems, [{ line: 0, message: 'has no rows' }]);
  });

  test('CSV: quoted fields may hold line breaks; problems name the line their row starts on', async () => {
    const csv =
      '\ufeffold,new\n"https://a.example/x\ny, ""z""",https://b.example/\r\n\n  \n' +
      '"https://c.example/\r\n",https://d.example/\nonly-one\nhttps://a.example/x\ny,"https://e.example/\n\n"\n' +
      '"https://a.example/x\ny, ""z""",https://f.example/\n';
    const parsed = parseRetargetCsv(csv);
    assert.deepEqual(parsed.pairs, [
      { oldUrl: 'https://a.example/x\ny, "z"', newUrl: 'https://b.example/' },
      { oldUrl: 'https://c.example/\r\n', newUrl: 'https://d.example/' },
      { oldUrl: 'y', newUrl: 'https://e.example/\n\n' },
    ]);
    assert.deepEqual(parsed.problems, [
      { line: 8, message: 'must be two fields: old URL,new URL' },
      // An unquoted line break ends its row: "https://a.example/x" alone, then "y" with a quoted field.
      { line: 9, message: 'must be two fields: old URL,new URL' },
      { line: 13, message: 'repeats the old URL of line 2' },
    ]);
    assert.deepEqual(await parseRetargetCsvInSlices(csv), parsed);
  });

  test('CSV refusals: a malformed quote stops the parse at its row; wrong field counts and too many rows', async () => {
    const outOfPlace = 'has a quote out of place (quote the whole field, and write a quote inside it twice)';
    // Where a row ends after a broken quote cannot be known: it is the last problem, with those before it.
    const cases: [string, CsvPairs, number, string][] = [
      [
        'a,b\nc,d\n"e"x,f\ng,h\n',
        [
          ['a', 'b'],
          ['c', 'd'],
        ],
        3,
        outOfPlace,
      ],
      ['a,b\nc,d"e\n', [['a', 'b']], 2, outOfPlace],
      [
        'a,b\n\n"c\nd",e\n"f,g\nh,i\n',
        [
          ['a', 'b'],
          ['c\nd', 'e'],
        ],
        5,
        'opens a quoted field that is never closed',
      ],
    ];
    for (const [csv, pairs, line, message] of cases) {
      const expected = {
        pairs: pairs.map(([oldUrl, newUrl]) => ({ oldUrl, newUrl })),
        problems: [{ line, message }],
      };
      assert.deepEqual(parseRetargetCsv(csv), expected, csv);
      assert.deepEqual(await parseRetargetCsvInSlices(csv), expected, csv);
    }
    assert.deepEqual(parseRetargetCsv('a,b,c\nd\n"e,f",g\n,\nh,i,\n').problems, [
      { line: 1, message: 'must be two fields: old URL,new URL' },
      { line: 2, message: 'must be two fields: old URL,new URL' },
      { line: 4, message: 'both URLs are required' },
      { line: 5, message: 'must be two fields: old URL,new URL' },
    ]);
    const rows = Array.from({ length: CSV_MAX_ROWS + 1 }, (_, i) => `${i},"\n"`);
    const many = rows.join('\n');
    const over = { line: 0, message: `has more than ${CSV_MAX_ROWS} rows` };
    assert.deepEqual(parseRetargetCsv(many).problems, [over]);
    assert.deepEqual((await parseRetargetCsvInSlices(many)).problems, [over]);
    assert.deepEqual(parseRetargetCsv(rows.slice(1).join('\n')).problems, []);
  });

  test('CSV in the web process: parsed in slices with the event loop handed back between, the same result', async () => {
    // The worst shape at the cap: the most rows (tiny distinct lines), then a megabyte-long quoted field.
    const rows: string[] = [];
    let bytes = 0;
    for (let i = 0; bytes < CSV_MAX_BYTES - 64; i++) {
      const row = `a${i},b`;
      rows.push(row);
      bytes += row.length + 1;
    }
    const tiny = rows.join('\n');
    assert.ok(rows.length > 3 * CSV_SLICE && tiny.length > 3 * CSV_SLICE_BYTES);
    // A timer queued before the parse runs before it ends: redirects queued meanwhile are answered.
    const order: string[] = [];
    setTimeout(() => order.push('timer'), 0);
    const sliced = await parseRetargetCsvInSlices(tiny);
    order.push('parsed');
    assert.deepEqual(order, ['timer', 'parsed']);
    assert.deepEqual(sliced, parseRetargetCsv(tiny));

    const field = 'y'.repeat(CSV_MAX_BYTES - 16);
    assert.deepEqual(parseRetargetCsv(`"${field}""",z`).pairs, [{ oldUrl: `${field}"`, newUrl: 'z' }]);
    // A file of nothing but broken lines stops at the 20 problems it lists.
    const broken = parseRetargetCsv('x\n'.repeat(100_000));
    assert.equal(broken.problems.length, 20);
    assert.deepEqual(broken.problems.at(-1), { line: 20, message: 'must be two fields: old URL,new URL' });
  });

  test('WORDPRESS_REST_URLS: site=restUrl pairs; a bad entry names the variable', () => {
    const config = parseConfig({
      WORDPRESS_REST_URLS:
        'news=https://news.example/wp-json/lifeline/v1, blog=https://blog.example/index.php?rest_route=/lifeline/v1/',
    });
    assert.deepEqual(config.wordpressRestUrls, {
      news: 'https://news.example/wp-json/lifeline/v1/',
      blog: 'https://blog.example/index.php?rest_route=/lifeline/v1/',
    });
    assert.deepEqual(parseConfig({}).wordpressRestUrls, {});
    assert.throws(
      () => parseConfig({ WORDPRESS_REST_URLS: 'news=ftp://x/' }),
      (error: unknown) =>
        error instanceof ConfigError && error.problems[0]!.variable === 'WORDPRESS_REST_URLS',
    );
    // The listing is never read over plain http: refused at start-up, loopback (tests) excepted.
    assert.throws(
      () => parseConfig({ WORDPRESS_REST_URLS: 'news=http://news.example/wp-json/lifeline/v1/' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems[0]!.variable === 'WORDPRESS_REST_URLS' &&
        /news: the listing is read over https only/.test(error.problems[0]!.message),
    );
    assert.deepEqual(
      parseConfig({ WORDPRESS_REST_URLS: 'news=http://127.0.0.1:8080/wp-json/lifeline/v1' })
        .wordpressRestUrls,
      {
        news: 'http://127.0.0.1:8080/wp-json/lifeline/v1/',
      },
    );
  });

  test('the WordPress breaker: defaults 2% or 50, whichever is more; a bad share names the variable', () => {
    assert.deepEqual(parseConfig({}).wordpressBreaker, { share: 0.02, min: 50 });
    const config = parseConfig({ WORDPRESS_BREAKER_SHARE: '0.1', WORDPRESS_BREAKER_MIN: '0' });
    assert.deepEqual(config.wordpressBreaker, { share: 0.1, min: 0 });
    assert.equal(getBreakerBudget({ share: 0.02, min: 50 }, 1_000), 50);
    assert.equal(getBreakerBudget({ share: 0.02, min: 50 }, 100_000), 2_000);
    assert.equal(getBreakerBudget({ share: 0.02, min: 50 }, 2_501), 51);
    for (const [variable, value] of [
      ['WORDPRESS_BREAKER_SHARE', '2%'],
      ['WORDPRESS_BREAKER_SHARE', '1.5'],
      ['WORDPRESS_BREAKER_MIN', '-1'],
    ] as const) {
      assert.throws(
        () => parseConfig({ [variable]: value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.problems[0]!.variable === variable &&
          /share between 0 and 1|whole number of links/.test(error.problems[0]!.message),
        `${variable}=${value}`,
      );
    }
  });
});
