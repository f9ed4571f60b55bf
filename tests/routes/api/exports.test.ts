// CSV exports for people: the filtered links list (API and UI, the same filters as the list), streamed in
// keyset pages, and a link's clicks by day (ours beside Bitly's), country and referrer. UTF-8 with a BOM, RFC
// 4180 quoting, formula-safe cells; parsed back here with an independent RFC 4180 reader.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, createLinkCode, type Harness } from '../../../devkit/harness/harness.ts';
import { toCsv, toCsvCell, toCsvRow } from '../../../lib/shared/csv.ts';
import { expectFieldProblem, expectProblem } from '../../helpers/problem.ts';
import { createUiClient } from '../../helpers/ui_client.ts';

let h: Harness;
before(async () => {
  h = await createHarness({ env: { TRUSTED_COUNTRY_HEADER: 'CF-IPCountry' } });
});
after(async () => {
  await h.close();
});

/** RFC 4180, strictly: fields separated by commas, records by CRLF, quoted fields with "" for a quote. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (ch === '"') {
        quoted = false;
        i++;
      } else {
        field += ch;
        i++;
      }
    } else if (ch === '"' && field === '') {
      quoted = true;
      i++;
    } else if (ch === ',') {
      row.push(field);
      field = '';
      i++;
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 2;
    } else {
      assert.ok(ch !== '\n' && ch !== '\r' && ch !== '"', `bare ${JSON.stringify(ch)} at ${i}`);
      field += ch;
      i++;
    }
  }
  assert.equal(field, '', 'the document ends with CRLF');
  assert.equal(row.length, 0);
  return rows;
}

/** The body as bytes (BOM checked) and as parsed rows. */
async function readCsv(res: Response): Promise<string[][]> {
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get('Content-Type'), 'text/csv; charset=utf-8; header=present');
  assert.match(
    res.headers.get('Content-Disposition') ?? '',
    /^attachment; filename="lifeline-[\w.-]+\.csv"$/,
  );
  assert.equal(res.headers.get('Cache-Control'), 'private, no-store');
  const bytes = new Uint8Array(await res.arrayBuffer());
  assert.deepEqual([...bytes.slice(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 byte-order mark');
  return parseCsv(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes.slice(3)));
}

describe('CSV cells', () => {
  test('RFC 4180 quoting, CRLF records, numbers as numbers, formulas defused', () => {
    assert.equal(toCsvCell('plain'), 'plain');
    assert.equal(toCsvCell('a,b'), '"a,b"');
    assert.equal(toCsvCell('say "hi"'), '"say ""hi"""');
    assert.equal(toCsvCell('two\nlines'), '"two\nlines"');
    assert.equal(toCsvCell(null), '');
    assert.equal(toCsvCell(-3), '-3', 'a number is never prefixed');
    for (const danger of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) {
      assert.ok(toCsvCell(danger).startsWith("'") || toCsvCell(danger).startsWith(`"'`), danger);
    }
    assert.equal(toCsvCell('=HYPERLINK("http://evil","x")'), `"'=HYPERLINK(""http://evil"",""x"")"`);
    assert.equal(toCsvRow(['a', 1, null]), 'a,1,\r\n');
    assert.equal(toCsv(['h'], [['x']]), '\uFEFFh\r\nx\r\n');
  });
});

describe('GET /api/v1/links.csv', () => {
  const tagged: string[] = [];
  before(async () => {
    tagged.push(
      await createLinkCode(h, {
        url: 'https://news.example/%D8%A7%D9%84%D8%B9%D8%B1%D8%A8%D9%8A%D8%A9/',
        tags: ['export', '-minus'],
        utm: { campaign: 'حملة' },
      }),
    );
    tagged.push(await createLinkCode(h, { url: 'https://news.example/a,b?x="y"', tags: ['export'] }));
    await h.db.sql`UPDATE links SET title = 'عنوان عربي، مع فاصلة' WHERE code = ${tagged[0]!}`;
    await h.db.sql`UPDATE links SET title = ${'=HYPERLINK("http://evil.example","click")\nsecond line'}
                   WHERE code = ${tagged[1]!}`;
    // Enough links for several keyset pages (500 per page).
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner, tags, created_at)
      SELECT 'bulk' || lpad(i::text, 5, '0'), 'https://news.example/bulk/' || i, 'active', 'clean', 'api', 'test',
             ARRAY['bulk'], now() - make_interval(secs => i)
      FROM generate_series(1, 1203) AS i`;
  });

  test('every matching link, every field, Arabic and awkward text intact, formulas defused', async () => {
    const rows = await readCsv(await h.api('/api/v1/links.csv?tag=export&sort=code'));
    const [header, ...records] = rows;
    assert.deepEqual(header, [
      'Code',
      'Short URL',
      'Destination URL',
      'Title',
      'Status',
      'Safety',
      'Made in',
      'Site',
      'Post ID',
      'Tags',
      'UTM campaign',
      'UTM source',
      'UTM medium',
      'Expires (UTC)',
      'Created (UTC)',
      'Last changed (UTC)',
      'Bitly copy',
    ]);
    assert.equal(records.length, 2);
    // Keyed by the Short URL column: a code that starts with "-" is written "'-…" in the Code column.
    const byCode = new Map(records.map((r) => [r[1]!.split('/').pop(), r]));
    const arabic = byCode.get(tagged[0]!)!;
    assert.equal(arabic[1], `http://sho.rt.test/${tagged[0]}`);
    assert.equal(arabic[2], 'https://news.example/%D8%A7%D9%84%D8%B9%D8%B1%D8%A8%D9%8A%D8%A9/');
    assert.equal(arabic[3], 'عنوان عربي، مع فاصلة');
    assert.equal(arabic[9], 'export -minus');
    assert.equal(arabic[10], 'حملة');
    assert.match(arabic[14]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const awkward = byCode.get(tagged[1]!)!;
    // Stored in canonical form (`"` in a query is percent-encoded, as WHATWG writes it).
    assert.equal(awkward[2], 'https://news.example/a,b?x=%22y%22');
    assert.equal(awkward[3], `'=HYPERLINK("http://evil.example","click")\nsecond line`);
  });

  test('streams every page of a large result, in order, each link once', async () => {
    const res = await h.api('/api/v1/links.csv?tag=bulk');
    assert.ok(res.body, 'a stream');
    const [, ...records] = await readCsv(res);
    assert.equal(records.length, 1203);
    assert.equal(new Set(records.map((r) => r[0])).size, 1203);
    assert.deepEqual(
      records.slice(0, 3).map((r) => r[0]),
      ['bulk00001', 'bulk00002', 'bulk00003'],
      'newest first, as the list',
    );
    const oldest = await readCsv(await h.api('/api/v1/links.csv?tag=bulk&sort=oldest'));
    assert.equal(oldest[1]![0], 'bulk01203');
  });

  test('bad filters are 422s naming them; without a key, 401', async () => {
    await expectFieldProblem(await h.api('/api/v1/links.csv?status=nope'), 422, 'status');
    await expectFieldProblem(await h.api('/api/v1/links.csv?cursor=abc'), 422, 'cursor');
    await expectProblem(await h.app.request('/api/v1/links.csv'), 401);
  });
});

describe('clicks CSV', () => {
  test('by day (with Bitly beside ours), by country and by referrer; 404 and 422 as documented', async () => {
    const code = await createLinkCode(h, { url: 'https://news.example/clicks-export' });
    const ua = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36';
    for (const [country, referer, n] of [
      ['SA', 'https://t.co/x', 3],
      ['EG', '', 2],
      ['SA', 'https://www.facebook.com/', 1],
    ] as const) {
      for (let i = 0; i < n; i++) {
        await h.app.request(`/${code}`, {
          headers: { 'User-Agent': ua, 'CF-IPCountry': country, ...(referer ? { Referer: referer } : {}) },
        });
      }
    }
    await h.app.request(`/${code}`, { headers: { 'User-Agent': 'Slackbot-LinkExpanding 1.0' } });
    await h.deps.clicks.flush();
    const today = new Date().toISOString().slice(0, 10);
    await h.db.sql`
      INSERT INTO vendor_links (code, vendor, vendor_id, state) VALUES (${code}, 'bitly', ${`sho.rt/${code}`}, 'synced')`;
    await h.db.sql`
      INSERT INTO vendor_daily_clicks (code, vendor, day, clicks) VALUES (${code}, 'bitly', ${today}::date, 11)`;

    const days = await readCsv(await h.api(`/api/v1/links/${code}/clicks.csv`));
    assert.deepEqual(days[0], [
      'Day (UTC)',
      'People',
      'of which QR scans',
      'Link previews',
      'Bots and HEAD requests',
      'Bitly',
      'Difference (ours − Bitly)',
      'Answered by',
    ]);
    assert.ok(days.length >= 31);
    assert.deepEqual(
      days.find((r) => r[0] === today),
      [today, '6', '0', '1', '0', '11', '-5', 'Lifeline'],
    );
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    assert.deepEqual(
      days.find((r) => r[0] === yesterday)?.slice(5),
      ['', '', 'Lifeline'],
      'not pulled: empty cells',
    );

    const countries = await readCsv(await h.api(`/api/v1/links/${code}/clicks.csv?by=country`));
    assert.deepEqual(countries, [
      ['Country code', 'Country', 'People'],
      ['SA', 'Saudi Arabia', '4'],
      ['EG', 'Egypt', '2'],
    ]);
    const referrers = await readCsv(await h.api(`/api/v1/links/${code}/clicks.csv?by=referrer`));
    assert.deepEqual(referrers, [
      ['Referrer host', 'People'],
      ['t.co', '3'],
      ['(direct or hidden)', '2'],
      ['www.facebook.com', '1'],
    ]);
    await expectFieldProblem(await h.api(`/api/v1/links/${code}/clicks.csv?by=week`), 422, 'by');
    await expectFieldProblem(
      await h.api(`/api/v1/links/${code}/clicks.csv?from=2020-01-01&to=2026-01-01`),
      422,
      'from',
    );
    await expectProblem(await h.api('/api/v1/links/nope-nope/clicks.csv'), 404);
  });
});

describe('UI downloads', () => {
  test('signed in only; the list page’s filters; dates in the editor’s time zone', async () => {
    const anonymous = await h.app.request('/ui/links.csv?tag=export');
    assert.equal(anonymous.status, 303);
    assert.match(anonymous.headers.get('Location') ?? '', /^\/ui\/login\?next=/);

    const ui = createUiClient(h.app as never);
    await ui.login('admin@example.test', 'correct horse battery');
    ui.cookies.set('lifeline_tz', 'Asia/Riyadh');
    // The list page links to the download with its filters.
    const page = await (await ui.get('/ui/links?tag=export&status=')).text();
    assert.match(page, /href="\/ui\/links\.csv\?tag=export"/);
    // The form sends empty filters too: they mean "any".
    const rows = await readCsv(await ui.get('/ui/links.csv?q=&status=&tag=export&sort=code'));
    // The API's columns, with the destination as people read it beside the exact one.
    const api = await readCsv(await h.api('/api/v1/links.csv?tag=export&sort=code'));
    assert.deepEqual(rows[0], [
      ...api[0]!.slice(0, 3),
      'Destination (readable)',
      ...api[0]!.slice(3).map((c) => c.replace('(UTC)', '(Asia/Riyadh)')),
    ]);
    assert.equal(rows[0]![15], 'Created (Asia/Riyadh)');
    assert.equal(rows.length, 3);
    assert.match(rows[1]![15]!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const arabicRow = rows.find((r) => r[4] === 'عنوان عربي، مع فاصلة')!;
    assert.equal(arabicRow[2], 'https://news.example/%D8%A7%D9%84%D8%B9%D8%B1%D8%A8%D9%8A%D8%A9/', 'exact');
    assert.equal(arabicRow[3], 'https://news.example/العربية/', 'readable');
    // Words in cells in the editor's language; the API keeps its codes.
    assert.deepEqual([arabicRow[5], arabicRow[7]], ['Active', 'API']);
    assert.deepEqual([api[1]![4], api[1]![6]], ['active', 'api']);
    const bad = await ui.get('/ui/links.csv?status=nope');
    assert.equal(bad.status, 422);

    const code = rows[1]![1]!.split('/').pop()!;
    const detail = await (await ui.get(`/ui/links/${code}?days=7`)).text();
    assert.ok(detail.includes(`/ui/links/${code}/clicks.csv?days=7&amp;by=country`));
    const clicks = await readCsv(await ui.get(`/ui/links/${code}/clicks.csv?days=7&by=day`));
    assert.equal(clicks.length, 1 + 8, 'seven days back to today');
  });

  test('an editor reading Arabic downloads Arabic column names and words; data stays as it is', async () => {
    const ui = createUiClient(h.app as never);
    await ui.login('admin@example.test', 'correct horse battery');
    const arabic = { 'Accept-Language': 'ar-EG,ar;q=0.9' };
    const rows = await readCsv(await ui.get('/ui/links.csv?tag=export&sort=code', arabic));
    assert.deepEqual(rows[0]!.slice(0, 6), [
      'الرمز',
      'الرابط القصير',
      'رابط الوجهة',
      'الوجهة (مقروءة)',
      'العنوان',
      'الحالة',
    ]);
    assert.equal(rows[0]![15], 'أُنشئ (\u2068UTC\u2069)', 'the zone isolated in a right-to-left name');
    const row = rows.find((r) => r[4] === 'عنوان عربي، مع فاصلة')!;
    assert.deepEqual(
      [row[3], row[4], row[5], row[6], row[7]],
      ['https://news.example/العربية/', 'عنوان عربي، مع فاصلة', 'نشط', 'سليم', 'الواجهة البرمجية'],
    );
    assert.equal(row[11], 'حملة');

    const code = await createLinkCode(h, { url: 'https://news.example/clicks-export-ar' });
    await h.app.request(`/${code}`, {
      headers: { 'User-Agent': 'Mozilla/5.0 Chrome/131.0 Safari/537.36', 'CF-IPCountry': 'EG' },
    });
    await h.deps.clicks.flush();
    await h.db.sql`
      INSERT INTO vendor_links (code, vendor, vendor_id, state) VALUES (${code}, 'bitly', ${`sho.rt/${code}`}, 'synced')`;
    const today = new Date().toISOString().slice(0, 10);
    await h.db.sql`
      INSERT INTO vendor_daily_clicks (code, vendor, day, clicks) VALUES (${code}, 'bitly', ${today}::date, 4)`;
    const days = await readCsv(await ui.get(`/ui/links/${code}/clicks.csv?days=7&by=day`, arabic));
    assert.deepEqual(days[0], [
      'اليوم (UTC)',
      'أشخاص',
      'منهم عبر رمز QR',
      'معاينات الروابط',
      'روبوتات وطلبات HEAD',
      'Bitly',
      'الفرق (أرقامنا − \u2068Bitly\u2069)',
      'أجاب عنه',
    ]);
    assert.deepEqual(
      days.find((r) => r[0] === today),
      [today, '1', '0', '0', '0', '4', '-3', 'Lifeline'],
    );
    const countries = await readCsv(await ui.get(`/ui/links/${code}/clicks.csv?days=7&by=country`, arabic));
    assert.deepEqual(countries, [
      ['رمز الدولة', 'الدولة', 'أشخاص'],
      ['EG', 'مصر', '1'],
    ]);
    // The same download in English reads as the API's.
    const english = await readCsv(await ui.get(`/ui/links/${code}/clicks.csv?days=7&by=country`));
    assert.deepEqual(english[0], ['Country code', 'Country', 'People']);
  });
});
