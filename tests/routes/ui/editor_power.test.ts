// The editor's power tools through the UI as a browser without JavaScript posts them (real Postgres and
// Temporal): the bulk bar's selection to the confirmation and the run; the CSV import's dry run (nothing kept,
// every row's outcome) and the import (through the batch creation and the sync queue), with a file too large or
// too long refused; the clicks column and its sort (totals kept by click_counts' triggers); the link page's
// stats over any dates; the print QR form.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import { createUser } from '../../../lib/auth/manage_users.ts';
import { createUiClient, type UiClient } from '../../helpers/ui_client.ts';

let h: Harness;
let admin: UiClient;
const EDITOR = { email: 'ed@example.test', password: 'an editor password here' };

before(async () => {
  h = await createHarness();
  admin = createUiClient(h.app as never);
  assert.equal((await admin.login('admin@example.test', 'correct horse battery')).status, 303);
  await createUser(
    h.db.sql,
    { email: EDITOR.email, name: 'Ed', role: 'editor', password: EDITOR.password },
    'test',
  );
});
after(async () => {
  await h?.close();
});

async function create(json: Record<string, unknown>): Promise<string> {
  const res = await h.api('/api/v1/links', { method: 'POST', json });
  assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
  return ((await res.json()) as { code: string }).code;
}

const csvFile = (text: string, name = 'links.csv') => new File([text], name, { type: 'text/csv' });
const linkCount = async () => (await h.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM links`)[0]!.n;

describe('bulk changes from the list', () => {
  test('ticked links → confirmation with the count → run page; a filter selection counts its matches', async () => {
    const codes = [
      await create({ url: 'https://ui-bulk.example/1', tags: ['ui-bulk'] }),
      await create({ url: 'https://ui-bulk.example/2', tags: ['ui-bulk'] }),
      await create({ url: 'https://ui-bulk.example/3', tags: ['ui-bulk'] }),
    ];
    const list = await (await admin.get('/ui/links?tag=ui-bulk')).text();
    assert.match(list, /<form id="bulk-form" method="post" action="\/ui\/links\/bulk"/);
    assert.equal((list.match(/name="code" value="[^"]+" form="bulk-form"/g) ?? []).length, 3);
    assert.match(list, /or all 3 links matching these filters/);

    const review = await admin.post('/ui/links/bulk', {
      step: 'review',
      action: 'tag_add',
      code: codes.slice(0, 2),
      tag: 'ui-bulk',
    });
    assert.equal(review.status, 200);
    const page = await review.text();
    assert.match(page, /2 links will change/);
    assert.equal((page.match(/type="hidden" name="code"/g) ?? []).length, 2);

    // Confirmed without the tag: the field is named and nothing starts.
    const refused = await admin.post('/ui/links/bulk', { step: 'apply', action: 'tag_add', code: codes });
    assert.equal(refused.status, 422);
    assert.match(await refused.text(), /Tag is required for tag_add/);
    assert.equal((await h.db.sql`SELECT count(*)::int AS n FROM bulk_changes`)[0]!.n, 0);

    // Every link matching the list's filters: the count, then the run.
    const all = await admin.post('/ui/links/bulk', {
      step: 'review',
      action: 'tag_add',
      all: '1',
      'filter-tag': 'ui-bulk',
    });
    const allPage = await all.text();
    assert.match(allPage, /3 links will change/);
    assert.match(allPage, /name="filter-tag" value="ui-bulk"/);
    const started = await admin.post('/ui/links/bulk', {
      step: 'apply',
      action: 'tag_add',
      tag: 'checked',
      all: '1',
      'filter-tag': 'ui-bulk',
    });
    assert.equal(started.status, 303, await started.clone().text());
    const [run] = await h.db.sql<{ selection: unknown; params: unknown }[]>`
      SELECT selection, params FROM bulk_changes ORDER BY created_at DESC LIMIT 1`;
    assert.deepEqual(run, { selection: { filter: { tag: 'ui-bulk' } }, params: { tag: 'checked' } });
    const progress = await admin.get(started.headers.get('Location')!);
    assert.equal(progress.status, 200);
    assert.match(await progress.text(), /Add the tag “checked”/);
  });

  test('an editor’s run is recorded with its user and shows its progress page in the list’s language', async () => {
    const editor = createUiClient(h.app as never);
    assert.equal((await editor.login(EDITOR.email, EDITOR.password)).status, 303);
    const code = await create({ url: 'https://ui-bulk.example/editor' });
    await editor.get('/ui/links');
    const res = await editor.post('/ui/links/bulk', {
      step: 'apply',
      action: 'block',
      reason: 'spam wave',
      code: [code],
    });
    assert.equal(res.status, 303, await res.clone().text());
    const location = res.headers.get('Location')!;
    assert.match(location, /^\/ui\/links\/bulk\/bk_/);
    const [run] = await h.db.sql<{ requestedBy: string; mayManagePostLinks: boolean; action: string }[]>`
      SELECT requested_by AS "requestedBy", may_manage_post_links AS "mayManagePostLinks", action
      FROM bulk_changes ORDER BY created_at DESC LIMIT 1`;
    assert.deepEqual(run, {
      requestedBy: `user:${EDITOR.email}`,
      mayManagePostLinks: false,
      action: 'block',
    });
    const progress = await (await editor.get(location)).text();
    assert.match(progress, /Bulk change/);
    assert.match(progress, /spam wave/);
  });
});

describe('CSV import', () => {
  test('the dry run lists every row’s outcome and keeps nothing; the import creates the good rows only', async () => {
    await create({ url: 'https://ui-import.example/already', title: 'Already here' });
    await create({ url: 'https://ui-import.example/taken', alias: 'import-taken' });
    const csv = [
      'url,code,title,tags,expires_at',
      'https://ui-import.example/a,import-a,First story,politics;cairo,',
      'not a url,,Broken,,',
      `${h.config.shortBaseUrl}/loop,,Points at ourselves,,`,
      'https://ui-import.example/b,import-taken,Taken alias,,',
      'https://ui-import.example/c,import-c,Twice,,',
      'https://ui-import.example/d,import-c,Twice again,,',
      'https://ui-import.example/e,,"Quoted, with a comma",sport,2099-01-01T00:00:00Z',
      // The same url and options again: answered with the row above's link (dedupe), not a second one.
      'https://ui-import.example/e,,"Quoted, with a comma",sport,2099-01-01T00:00:00Z',
      'https://ui-import.example/f,,Past expiry,,2001-01-01T00:00:00Z',
    ].join('\n');
    const before = await linkCount();
    await admin.get('/ui/links/import');
    const preview = await admin.postMultipart('/ui/links/import', { step: 'preview', file: csvFile(csv) });
    assert.equal(preview.status, 200);
    const html = await preview.text();
    assert.equal(await linkCount(), before, 'the dry run keeps nothing');
    assert.equal((await h.db.sql`SELECT count(*)::int AS n FROM link_sync_queue`)[0]!.n, 0);
    assert.match(html, /If imported: 3 new, 1 already there, 5 with errors/);
    const outcomes = [...html.matchAll(/<tr class="import-(\w+)">/g)].map((m) => m[1]);
    assert.deepEqual(outcomes, [
      'create',
      'error',
      'error',
      'error',
      'create',
      'error',
      'create',
      'existing',
      'error',
    ]);
    assert.match(html, /must not point at the short domain itself/);
    assert.match(html, /code is taken/);
    assert.match(html, /expires_at must be in the future/);
    assert.match(html, /Import 3 links/);

    // The file travels back with the form; the import creates the three good rows.
    const carried = /<textarea name="csv"[^>]*>([\s\S]*?)<\/textarea>/.exec(html)![1]!;
    const imported = await admin.postMultipart('/ui/links/import', {
      step: 'import',
      csv: carried
        .replaceAll('&quot;', '"')
        .replaceAll('&amp;', '&')
        .replaceAll('&lt;', '<')
        .replaceAll('&gt;', '>'),
    });
    assert.equal(imported.status, 200);
    const done = await imported.text();
    assert.match(done, /Imported: 3 new, 1 already there, 5 with errors/);
    assert.equal(await linkCount(), before + 3);
    const [a] = await h.db.sql<{ title: string; tags: string[]; origin: string; owner: string }[]>`
      SELECT title, tags, origin, owner FROM links WHERE code = 'import-a'`;
    assert.deepEqual(a, {
      title: 'First story',
      tags: ['politics', 'cairo'],
      origin: 'ui',
      owner: 'user:admin@example.test',
    });
    // Through the batch creation: audited and queued for the serving store and Bitly.
    // No worker runs in this file, so the rows wait in the queue for the drainer.
    const queued = await h.db.sql<{ code: string }[]>`
      SELECT code FROM link_sync_queue WHERE code IN ('import-a', 'import-c')`;
    assert.equal(queued.length, 2);
    const audited = await h.db
      .sql`SELECT 1 FROM audit_log WHERE code = 'import-a' AND action = 'link.created'`;
    assert.equal(audited.length, 1);
  });

  test('a file it cannot take is refused whole with a clear message: size, rows, columns', async () => {
    await admin.get('/ui/links/import');
    const tooLong = [
      'url',
      ...Array.from({ length: 1001 }, (_, i) => `https://ui-import.example/n${i}`),
    ].join('\n');
    let res = await admin.postMultipart('/ui/links/import', { step: 'preview', file: csvFile(tooLong) });
    assert.equal(res.status, 422);
    assert.match(await res.text(), /CSV file has more than 1000 rows/);
    res = await admin.postMultipart('/ui/links/import', {
      step: 'preview',
      file: csvFile(`url,color\nhttps://ui-import.example/x,red\n`),
    });
    assert.equal(res.status, 422);
    assert.match(await res.text(), /has columns Lifeline does not know: color/);
    res = await admin.postMultipart('/ui/links/import', { step: 'preview', file: csvFile('title\nx\n') });
    assert.match(await res.text(), /Needs a url column/);
    const big = `url\n${'https://ui-import.example/'.padEnd(2000, 'x')}\n`.repeat(600);
    res = await admin.postMultipart('/ui/links/import', { step: 'preview', file: csvFile(big) });
    assert.equal(res.status, 413, 'over the upload limit: refused before it is read');
    // In Arabic too.
    const ar = createUiClient(h.app as never);
    await ar.login('admin@example.test', 'correct horse battery');
    await ar.get('/ui/links/import', { 'Accept-Language': 'ar' });
    res = await ar.postMultipart(
      '/ui/links/import',
      { step: 'preview', file: csvFile('title\nx\n') },
      { headers: { 'Accept-Language': 'ar' } },
    );
    assert.match(await res.text(), /يحتاج إلى عمود url/);
  });
});

describe('clicks column and sort', () => {
  test('totals follow click_counts (readers only), and the list sorts by them with paging both ways', async () => {
    const few = await create({ url: 'https://ui-clicks.example/few', tags: ['clicks-sort'] });
    const many = await create({ url: 'https://ui-clicks.example/many', tags: ['clicks-sort'] });
    const none = await create({ url: 'https://ui-clicks.example/none', tags: ['clicks-sort'] });
    const mid = await create({ url: 'https://ui-clicks.example/mid', tags: ['clicks-sort'] });
    const hour = new Date();
    hour.setUTCMinutes(0, 0, 0);
    await h.db.sql`
      INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks) VALUES
        (${many}, ${hour}, 'human', 'EG', '', 40), (${many}, ${hour}, 'qr', '', '', 5),
        (${many}, ${hour}, 'bot', '', '', 900), (${mid}, ${hour}, 'human', '', '', 12),
        (${few}, ${hour}, 'human', '', '', 3)`;
    // A later flush adds to an existing row (ON CONFLICT ... DO UPDATE, as the click writer does).
    await h.db.sql`
      INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks)
      VALUES (${few}, ${hour}, 'human', '', '', 2)
      ON CONFLICT (code, hour, kind, country, referrer_host) DO UPDATE SET clicks = click_counts.clicks + EXCLUDED.clicks`;
    const totals = await h.db.sql<{ code: string; clicks: number }[]>`
      SELECT code, clicks FROM link_click_totals WHERE code IN (${many}, ${mid}, ${few}) ORDER BY clicks DESC`;
    assert.deepEqual(
      totals.map((t) => [t.code, t.clicks]),
      [
        [many, 45],
        [mid, 12],
        [few, 5],
      ],
    );

    const html = await (await admin.get('/ui/links?tag=clicks-sort&sort=clicks')).text();
    const order = [...html.matchAll(/name="code" value="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(order, [many, mid, few, none]);
    assert.match(html, /class="num clicks-cell">45</);

    // The API pages by clicks both ways with its cursors.
    const page1 = (await (await h.api('/api/v1/links?tag=clicks-sort&sort=clicks&limit=2')).json()) as {
      items: { code: string }[];
      nextCursor: string;
    };
    assert.deepEqual(
      page1.items.map((i) => i.code),
      [many, mid],
    );
    const page2 = (await (
      await h.api(`/api/v1/links?tag=clicks-sort&sort=clicks&limit=2&cursor=${page1.nextCursor}`)
    ).json()) as { items: { code: string }[]; prevCursor: string };
    assert.deepEqual(
      page2.items.map((i) => i.code),
      [few, none],
    );
    const back = (await (
      await h.api(`/api/v1/links?tag=clicks-sort&sort=clicks&limit=2&cursor=${page2.prevCursor}`)
    ).json()) as { items: { code: string }[] };
    assert.deepEqual(
      back.items.map((i) => i.code),
      [many, mid],
    );
  });
});

describe('stats over any dates', () => {
  test('from/to on the link page pick the window; a refused window names the field; the API takes the same', async () => {
    const code = await create({ url: 'https://ui-range.example/story' });
    const day = (d: string) => new Date(`${d}T12:00:00Z`);
    await h.db.sql`
      INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks) VALUES
        (${code}, ${day('2025-03-02')}, 'human', '', '', 7),
        (${code}, ${day('2025-03-20')}, 'human', '', '', 100)`;
    const html = await (await admin.get(`/ui/links/${code}?from=2025-03-01&to=2025-03-10`)).text();
    assert.match(html, /name="from" type="date" value="2025-03-01"/);
    assert.match(html, /<span class="stat-value">7<\/span>/);
    const wide = await (await admin.get(`/ui/links/${code}?from=2025-03-01&to=2025-03-31`)).text();
    assert.match(wide, /<span class="stat-value">107<\/span>/);
    const bad = await admin.get(`/ui/links/${code}?from=2025-03-10&to=2025-03-01`);
    assert.equal(bad.status, 422);
    assert.match(await bad.text(), /From must not be after the end day/);
    const notADay = await admin.get(`/ui/links/${code}?from=2025-02-30&to=2025-03-01`);
    assert.match(await notADay.text(), /must be a calendar day/);
    const tooLong = await admin.get(`/ui/links/${code}?from=2023-01-01&to=2025-03-01`);
    assert.match(await tooLong.text(), /the window may span at most 366 days/);
    const api = (await (await h.api(`/api/v1/links/${code}/stats?from=2025-03-01&to=2025-03-10`)).json()) as {
      clicks: number;
    };
    assert.equal(api.clicks, 7);
    assert.equal((await h.api(`/api/v1/links/${code}/stats?from=2025-03-10&to=2025-03-01`)).status, 422);
  });
});

describe('print QR codes from the link page', () => {
  test('the form makes a PNG that decodes; a low-contrast choice is refused in the form', async () => {
    const code = await create({ url: 'https://ui-qr.example/story' });
    const form = await admin.get(`/ui/links/${code}/qr`);
    assert.equal(form.status, 200);
    const res = await admin.postMultipart(`/ui/links/${code}/qr`, {
      format: 'png',
      size: '512',
      foreground: '#1a237e',
      background: '#ffffff',
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('Content-Type'), 'image/png');
    assert.equal(res.headers.get('Content-Disposition'), `attachment; filename="${code}-qr.png"`);
    const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
    assert.equal(
      jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data,
      `${h.config.shortBaseUrl}/${code}?qr=1`,
    );
    await admin.get(`/ui/links/${code}/qr`);
    const refused = await admin.postMultipart(`/ui/links/${code}/qr`, {
      format: 'pdf',
      size: '40',
      foreground: '#cccccc',
      background: '#ffffff',
      logo: new File([new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>')], 'logo.svg'),
    });
    assert.equal(refused.status, 422);
    const page = await refused.text();
    assert.match(page, /Code colour has too little contrast with the background/);
    assert.match(page, /An SVG logo goes into an SVG code only/);
    await admin.get(`/ui/links/${code}/qr`);
    const pdf = await admin.postMultipart(`/ui/links/${code}/qr`, { format: 'pdf', size: '40' });
    assert.equal(pdf.headers.get('Content-Type'), 'application/pdf');
  });
});
