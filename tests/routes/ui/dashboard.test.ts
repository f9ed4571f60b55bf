// The newsroom dashboard as a browser without JavaScript gets it (real Postgres): the totals of today, 7 and 30
// days against clicks seeded at known days (bots left out, a deleted link counted in the totals but not listed),
// Bitly's counts over the days it reported on, the top links, tags and WordPress sites of each window, and every
// role's access. Then the newsroom logo: an admin uploads it (a PNG; an SVG with a script, a non-image and an
// empty upload refused, naming the field), an editor cannot; the print form offers it first and draws it (the
// PNG decoded back, the logo's colour found), no logo on request; removed, the choice is gone.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import { createUser } from '../../../lib/auth/manage_users.ts';
import { createUiClient, type UiClient } from '../../helpers/ui_client.ts';

const DAY = 86_400_000;
let h: Harness;
let admin: UiClient;
const codes: Record<string, string> = {};
const PASSWORD = 'a long enough password';

/** The start of the UTC hour `days` days ago. */
const hourAgo = (days: number) => {
  const d = new Date(Date.now() - days * DAY);
  d.setUTCMinutes(0, 0, 0);
  return d;
};
const dayAgo = (days: number) => hourAgo(days).toISOString().slice(0, 10);

async function create(json: Record<string, unknown>): Promise<string> {
  const res = await h.api('/api/v1/links', { method: 'POST', json });
  assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
  return ((await res.json()) as { code: string }).code;
}

async function clicks(code: string, days: number, kind: string, n: number, country = '') {
  await h.db.sql`
    INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks)
    VALUES (${code}, ${hourAgo(days)}, ${kind}, ${country}, '', ${n})`;
}

before(async () => {
  h = await createHarness();
  admin = createUiClient(h.app as never);
  assert.equal((await admin.login('admin@example.test', 'correct horse battery')).status, 303);
  codes.budget = await create({
    url: 'https://dash.example/budget',
    title: 'Budget vote',
    tags: ['politics', 'budget'],
  });
  codes.match = await create({ url: 'https://dash.example/match', title: 'The match', tags: ['sport'] });
  codes.post = await create({ url: 'https://dash.example/post', title: 'From WordPress' });
  codes.gone = await create({ url: 'https://dash.example/gone', title: 'Deleted later' });
  await h.db.sql`UPDATE links SET site = 'news.example', post_id = 7 WHERE code = ${codes.post}`;
  // Today: budget 5 people + 2 scans (the 100 bot hits are not clicks), match 3, the deleted link 9.
  await clicks(codes.budget, 0, 'human', 5, 'EG');
  await clicks(codes.budget, 0, 'qr', 2);
  await clicks(codes.budget, 0, 'bot', 100);
  await clicks(codes.match, 0, 'human', 3);
  await clicks(codes.gone, 0, 'human', 9);
  // Earlier: budget 10 three days ago and 100 twenty days ago (1,000 forty days ago: outside every window);
  // match 4 six days ago; the WordPress post 50 eight days ago.
  await clicks(codes.budget, 3, 'human', 10);
  await clicks(codes.budget, 20, 'human', 100);
  await clicks(codes.budget, 40, 'human', 1000);
  await clicks(codes.match, 6, 'human', 4);
  await clicks(codes.post, 8, 'human', 50);
  // A second statement on the same row moves the day's total (the flush's upsert path).
  await h.db.sql`
    UPDATE click_counts SET clicks = clicks + 0 WHERE code = ${codes.match}`;
  assert.equal((await h.api(`/api/v1/links/${codes.gone}`, { method: 'DELETE' })).status, 204);
  // Browser and OS families as the click flush writes them: the week sees the first three, the month all four.
  for (const [code, days, browser, os, n] of [
    [codes.budget, 0, 'chrome', 'android', 5],
    [codes.budget, 0, 'safari', 'ios', 2],
    [codes.match, 6, 'firefox', 'windows', 4],
    [codes.post, 8, 'chrome', 'windows', 50],
  ] as const)
    await h.db.sql`
      INSERT INTO click_families (code, day, browser, os, clicks)
      VALUES (${code!}, ${dayAgo(days)}::date, ${browser}, ${os}, ${n})`;
  // Bitly reported on yesterday, three days ago and ten days ago for the budget link.
  for (const [days, n] of [
    [1, 12],
    [3, 9],
    [10, 40],
  ] as const)
    await h.db.sql`
      INSERT INTO vendor_daily_clicks (code, vendor, day, clicks)
      VALUES (${codes.budget}, 'bitly', ${dayAgo(days)}::date, ${n})`;
});
after(async () => {
  await h?.close();
});

/** The number in `attr` of the element matching `selector`'s opening tag within `html`. */
function attr(html: string, selector: RegExp, name: string): string | null {
  const tag = selector.exec(html);
  if (!tag) return null;
  return new RegExp(`${name}="([^"]*)"`).exec(tag[0])?.[1] ?? null;
}
/** The part of the page from `id`'s element to the next section. */
function section(html: string, id: string): string {
  const start = html.indexOf(`id="${id}"`);
  assert.ok(start >= 0, `section ${id}`);
  const end = html.indexOf('<section', start + 1);
  return html.slice(start, end < 0 ? undefined : end);
}
/** The rows of a table as [data-key or data-code, clicks, links?]. */
function rows(html: string): string[][] {
  // An empty attribute (the group of links without a site) is written without a value.
  return [...html.matchAll(/<tr data-(?:key|code)(?:="([^"]*)")?>([\s\S]*?)<\/tr>/g)].map((m) => [
    m[1] ?? '',
    ...[...m[2]!.matchAll(/data-(?:clicks|links)="(\d+)"/g)].map((n) => n[1]!),
  ]);
}

describe('the newsroom dashboard', () => {
  test('totals of today, 7 and 30 days, Bitly beside them over its days, and the note on what Bitly counts', async () => {
    const res = await admin.get('/ui/dashboard');
    assert.equal(res.status, 200);
    const html = await res.text();
    const totals = section(html, 'dashboard-totals');
    const row = (w: string) => new RegExp(`<tr data-window="${w}">[\\s\\S]*?</tr>`).exec(totals)![0];
    assert.equal(attr(row('today'), /<td data-ours="[^"]*"/, 'data-ours'), '19');
    assert.equal(attr(row('7d'), /<td data-ours="[^"]*"/, 'data-ours'), '33');
    assert.equal(attr(row('30d'), /<td data-ours="[^"]*"/, 'data-ours'), '183');
    // Bitly lags a day: nothing for today.
    assert.match(row('today'), /<td data-bitly>/);
    assert.match(row('today'), /no numbers from Bitly/);
    assert.equal(attr(row('7d'), /<td data-bitly="[^"]*"/, 'data-bitly'), '21');
    assert.match(row('7d'), /2 days reported/);
    assert.equal(attr(row('7d'), /<td data-ours-same-days="[^"]*"/, 'data-ours-same-days'), '10');
    assert.equal(attr(row('30d'), /<td data-bitly="[^"]*"/, 'data-bitly'), '61');
    assert.match(row('30d'), /3 days reported/);
    assert.match(totals, /Bitly counts only the links it fronts or holds, and reports a day late/);
    // The browser and OS families' card is there, waiting for its numbers.
    assert.match(html, /id="dashboard-families"/);
    // The navigation names the page.
    assert.match(html, /<a href="\/ui\/dashboard" aria-current="page">Dashboard<\/a>/);
  });

  test('each window’s top links, tags and sites; a deleted link counted but not listed', async () => {
    const week = await (await admin.get('/ui/dashboard')).text();
    assert.match(week, /href="\/ui\/dashboard\?window=7d" aria-current="page"/);
    assert.deepEqual(rows(section(week, 'dashboard-top')), [
      [codes.budget!, '17'],
      [codes.match!, '7'],
    ]);
    assert.match(section(week, 'dashboard-top'), new RegExp(`href="/ui/links/${codes.budget}"`));
    assert.match(section(week, 'dashboard-top'), /Budget vote/);
    assert.deepEqual(rows(section(week, 'dashboard-tags')), [
      ['budget', '1', '17'],
      ['politics', '1', '17'],
      ['sport', '1', '7'],
    ]);
    assert.deepEqual(rows(section(week, 'dashboard-sites')), [['', '2', '24']]);
    assert.match(section(week, 'dashboard-sites'), /Not from WordPress/);
    // One short domain: no domain table.
    assert.doesNotMatch(week, /id="dashboard-domains"/);

    const month = await (await admin.get('/ui/dashboard?window=30d')).text();
    assert.deepEqual(rows(section(month, 'dashboard-top')), [
      [codes.budget!, '117'],
      [codes.post!, '50'],
      [codes.match!, '7'],
    ]);
    assert.deepEqual(rows(section(month, 'dashboard-sites')), [
      ['', '2', '124'],
      ['news.example', '1', '50'],
    ]);
    const today = await (await admin.get('/ui/dashboard?window=today')).text();
    assert.deepEqual(rows(section(today, 'dashboard-top')), [
      [codes.budget!, '7'],
      [codes.match!, '3'],
    ]);
    // The newsroom's browsers and systems over the window, most first, as the link page names them.
    const families = (html: string, id: string) => {
      const part = section(html, 'dashboard-families');
      const from = part.indexOf(`id="${id}"`);
      const next = part.indexOf('id="dashboard-', from + 1);
      return rows(part.slice(from, next < 0 ? undefined : next));
    };
    assert.deepEqual(families(week, 'dashboard-browsers'), [
      ['chrome', '5'],
      ['firefox', '4'],
      ['safari', '2'],
    ]);
    assert.deepEqual(families(week, 'dashboard-systems'), [
      ['android', '5'],
      ['windows', '4'],
      ['ios', '2'],
    ]);
    assert.match(section(week, 'dashboard-families'), /<bdi dir="auto">Chrome<\/bdi>/);
    assert.deepEqual(families(month, 'dashboard-browsers'), [
      ['chrome', '55'],
      ['firefox', '4'],
      ['safari', '2'],
    ]);
    assert.deepEqual(families(month, 'dashboard-systems')[0], ['windows', '54']);
    // Anything else is the default window.
    const other = await (await admin.get('/ui/dashboard?window=year')).text();
    assert.match(other, /href="\/ui\/dashboard\?window=7d" aria-current="page"/);
  });

  test('every role sees it; signed out goes to the sign-in page', async () => {
    for (const role of ['viewer', 'editor', 'moderator'] as const) {
      const email = `dash-${role}@example.test`;
      await createUser(h.db.sql, { email, name: null, role, password: PASSWORD }, 'test');
      const client = createUiClient(h.app as never);
      assert.equal((await client.login(email, PASSWORD)).status, 303);
      const res = await client.get('/ui/dashboard');
      assert.equal(res.status, 200, role);
      assert.match(await res.text(), /data-ours="19"/);
    }
    const anon = createUiClient(h.app as never);
    const res = await anon.get('/ui/dashboard');
    assert.equal(res.status, 303);
  });
});

/** A 120×60 PNG logo in a dark red no code module has. */
function pngLogo(): Uint8Array {
  const png = new PNG({ width: 120, height: 60 });
  for (let i = 0; i < png.data.length; i += 4) {
    png.data[i] = 150;
    png.data[i + 1] = 10;
    png.data[i + 2] = 30;
    png.data[i + 3] = 255;
  }
  return new Uint8Array(PNG.sync.write(png));
}
const redShare = (png: PNG) => {
  let red = 0;
  for (let i = 0; i < png.data.length; i += 4)
    if (png.data[i] === 150 && png.data[i + 1] === 10 && png.data[i + 2] === 30) red++;
  return red / (png.width * png.height);
};
const file = (bytes: Uint8Array | string, name: string, type: string) =>
  new File([typeof bytes === 'string' ? bytes : Buffer.from(bytes)], name, { type });

describe('the newsroom logo', () => {
  test('an admin uploads it; refused files name the field and store nothing; an editor may not', async () => {
    const editorEmail = 'logo-editor@example.test';
    await createUser(
      h.db.sql,
      { email: editorEmail, name: null, role: 'editor', password: PASSWORD },
      'test',
    );
    const editor = createUiClient(h.app as never);
    assert.equal((await editor.login(editorEmail, PASSWORD)).status, 303);
    const editorSettings = await (await editor.get('/ui/settings')).text();
    assert.doesNotMatch(editorSettings, /id="newsroom-logo"/);
    const refusedEditor = await editor.postMultipart('/ui/settings/logo', {
      logo: file(pngLogo(), 'logo.png', 'image/png'),
    });
    assert.equal(refusedEditor.status, 403);

    const settings = await (await admin.get('/ui/settings')).text();
    assert.match(settings, /id="newsroom-logo"/);
    assert.match(settings, /No newsroom logo yet\./);
    const count = async () => (await h.db.sql`SELECT count(*)::int AS n FROM newsroom_logo`)[0]!.n;
    for (const [bytes, name, message] of [
      [
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        'evil.svg',
        /Logo must be a plain SVG drawing/,
      ],
      [
        '<svg xmlns="http://www.w3.org/2000/svg"><image href="https://tracker.example/p.png"/></svg>',
        'remote.svg',
        /Logo must be a plain SVG drawing/,
      ],
      [
        '<svg xmlns="http://www.w3.org/2000/svg"><rect onclick="alert(1)" width="4" height="4"/></svg>',
        'handler.svg',
        /Logo must be a plain SVG drawing/,
      ],
      ['GIF89a not a logo', 'logo.gif', /Logo must be a PNG or SVG image/],
      ['', 'empty.png', /Logo is required: choose a file to upload/],
    ] as const) {
      await admin.get('/ui/settings');
      const res = await admin.postMultipart('/ui/settings/logo', {
        logo: file(bytes, name, 'image/svg+xml'),
      });
      assert.equal(res.status, 422, name);
      assert.match(await res.text(), message, name);
      assert.equal(await count(), 0, name);
    }
    await admin.get('/ui/settings');
    const big = await admin.postMultipart('/ui/settings/logo', {
      logo: file(new Uint8Array(300 * 1024), 'big.png', 'image/png'),
    });
    assert.equal(big.status, 422);
    assert.match(await big.text(), /Logo must be at most 256 KiB/);

    // A plain SVG drawing with a gradient (a fragment reference) is fine; then the PNG replaces it.
    await admin.get('/ui/settings');
    const svg = await admin.postMultipart('/ui/settings/logo', {
      logo: file(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><defs><linearGradient id="g"><stop offset="0" stop-color="#900"/></linearGradient></defs><rect width="10" height="10" fill="url(#g)"/></svg>',
        'plain.svg',
        'image/svg+xml',
      ),
    });
    assert.equal(svg.status, 303, await svg.clone().text());
    await admin.get('/ui/settings');
    const saved = await admin.postMultipart('/ui/settings/logo', {
      logo: file(pngLogo(), 'logo.png', 'image/png'),
    });
    assert.equal(saved.status, 303);
    assert.equal(saved.headers.get('Location'), '/ui/settings?logo=saved#newsroom-logo');
    const page = await (await admin.get('/ui/settings?logo=saved')).text();
    assert.match(page, /Newsroom logo saved\./);
    assert.match(page, /Current logo: PNG, 1 KiB, uploaded on .* by/);
    const preview = /<img src="data:image\/png;base64,([^"]+)"/.exec(page);
    assert.ok(preview, 'the preview travels in the page');
    assert.deepEqual(new Uint8Array(Buffer.from(preview[1]!, 'base64')), pngLogo());
    assert.equal(await count(), 1);
  });

  test('the print form offers it first and draws it; no logo on request; removed, the choice is gone', async () => {
    const code = codes.budget!;
    const form = await (await admin.get(`/ui/links/${code}/qr`)).text();
    assert.match(form, /name="logoChoice" value="newsroom" checked/);
    const draw = async (fields: Record<string, string>) => {
      await admin.get(`/ui/links/${code}/qr`);
      const res = await admin.postMultipart(`/ui/links/${code}/qr`, {
        format: 'png',
        size: '512',
        ...fields,
      });
      assert.equal(res.status, 200, await res.clone().text());
      const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
      assert.equal(
        jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data,
        `${h.config.shortBaseUrl}/${code}?qr=1`,
      );
      return png;
    };
    const withLogo = await draw({ logoChoice: 'newsroom' });
    assert.ok(redShare(withLogo) > 0.01, `the newsroom logo is drawn (${redShare(withLogo)})`);
    assert.equal(redShare(await draw({ logoChoice: 'none' })), 0);

    await admin.get('/ui/settings');
    const removed = await admin.post('/ui/settings/logo/remove', {});
    assert.equal(removed.status, 303);
    const after = await (await admin.get(`/ui/links/${code}/qr`)).text();
    assert.doesNotMatch(after, /value="newsroom"/);
    assert.match(after, /name="logoChoice" value="none" checked/);
    // Asked for anyway (an old form): the field says there is none.
    await admin.get(`/ui/links/${code}/qr`);
    const refused = await admin.postMultipart(`/ui/links/${code}/qr`, {
      format: 'png',
      size: '512',
      logoChoice: 'newsroom',
    });
    assert.equal(refused.status, 422);
    assert.match(await refused.text(), /none has been uploaded/);
  });
});
