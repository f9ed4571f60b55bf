// The editor UI in a real browser (Debian's Chromium driven by playwright-core): the whole journey of an
// editor, screenshots of every page under test-results/ui/, and CSRF attempts from another site.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import jsQR from 'jsqr';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { getFreePort } from '../../../scripts/dev_server.ts';
import { ROOT } from '../../../scripts/temporal_cli.ts';
import { startUiServer, type UiServer } from '../../helpers/ui_server.ts';

const SHOTS = join(ROOT, 'test-results', 'ui');
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };

let server: UiServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const problems: string[] = [];

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startUiServer({ env: { TEMPORAL_UI_URL: 'http://127.0.0.1:8233' } });
  await server.h.startWorker();
  await seed();
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
});

/** A fresh browser profile (no cookies) with one page. */
async function openPage() {
  await context?.close();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.base });
  page = await context.newPage();
  // Anything the CSP blocks, or any script error, is a bug.
  page.on('console', (m) => {
    // Form errors answer 4xx on purpose (409 taken alias, 422 invalid); anything else is a problem.
    if (m.type() === 'error' && !/status of (401|403|409|422) /.test(m.text()))
      problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
}
after(async () => {
  await browser?.close();
  await server?.close();
});

/** Links and clicks so that lists, charts and tables have something to show. */
async function seed() {
  const { h } = server;
  await h.api('/api/v1/links', {
    method: 'POST',
    json: { url: 'https://www.example-news.com/an-older-story', alias: 'taken-alias', tags: ['demo'] },
  });
  const stories = ['city-budget', 'storm-warning', 'election-night', 'festival-lineup', 'derby-report'];
  for (const [i, slug] of stories.entries()) {
    const res = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: `https://www.example-news.com/2026/11/${slug}`, tags: [i % 2 ? 'politics' : 'culture'] },
    });
    const { code } = (await res.json()) as { code: string };
    for (let d = 0; d < 14; d++) {
      const hour = new Date(Date.now() - d * 86_400_000);
      hour.setUTCMinutes(0, 0, 0);
      await h.db.sql`
        INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks) VALUES
          (${code}, ${hour}, 'human', 'FR', 'twitter.com', ${20 + d * 3}),
          (${code}, ${hour}, 'preview', '', 'slack.com', ${4 + (d % 3)}),
          (${code}, ${hour}, 'bot', 'US', '', ${2 + (d % 4)})`;
    }
  }
}

async function shot(name: string, options: { fullPage?: boolean } = {}) {
  // From the top, so the sticky header is where a reader sees it.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: options.fullPage ?? true });
}

describe('the editor UI in Chromium', () => {
  test('log in, create a link (a taken alias first), find it, QR, edit, history, log out', async () => {
    const base = server.base;
    await openPage();
    await page.goto(`${base}/ui`);
    assert.match(page.url(), /\/ui\/login\?next=/);
    await shot('01-login');
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/ui/links`);
    await page.getByRole('heading', { name: 'Links' }).waitFor();
    await shot('02-links');

    // Create: the alias is checked as you type, and again by the server on submit.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New link' }).click();
    await page.waitForURL(`${base}/ui/links/new`);
    await page.getByLabel('Destination URL').fill('https://www.example-news.com/2026/11/21/council-votes');
    await page.getByLabel(/Custom alias/).fill('taken-alias');
    await page.locator('#field-alias-message', { hasText: 'is taken' }).waitFor();
    await page.locator('#field-url-message', { hasText: 'Looks good' }).waitFor();
    await page.getByLabel(/Tags/).fill('politics, city');
    await shot('03-new-link-taken-alias');
    await page.getByRole('button', { name: 'Create short link' }).click();
    await page.locator('#field-alias-message', { hasText: 'is taken' }).waitFor();
    assert.equal(
      await page.getByLabel('Destination URL').inputValue(),
      'https://www.example-news.com/2026/11/21/council-votes',
    );
    await shot('04-new-link-conflict');
    await page.getByLabel(/Custom alias/).fill('council-vote');
    await page.locator('#field-alias-message', { hasText: 'is available' }).waitFor();
    await page.getByRole('button', { name: 'Create short link' }).click();
    await page.waitForURL(`${base}/ui/links/council-vote?created=1`);
    await page.getByText('Short link created').waitFor();

    // The copy button (an island) puts the short URL on the clipboard.
    await page.getByRole('button', { name: /Copy link/ }).click();
    await page.getByText('Copied ✓').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${base}/council-vote`);
    await shot('05-link-created');

    // Find it by search.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Links' }).click();
    await page.getByRole('searchbox', { name: 'Search' }).fill('council-v');
    await page.getByRole('searchbox', { name: 'Search' }).press('Enter');
    await page.waitForURL(/q=council-v/);
    const rows = page.locator('.links-table tbody tr');
    assert.equal(await rows.count(), 1);
    await shot('06-search');
    await rows.first().locator('a.code-link').click();
    await page.waitForURL(`${base}/ui/links/council-vote`);

    // The QR code downloads as a PNG that decodes back to the short URL (marked as a scan), which redirects.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download PNG' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'council-vote-qr.png');
    const png = PNG.sync.read(readFileSync((await download.path())!));
    const decoded = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
    assert.equal(decoded?.data, `${base}/council-vote?qr=1`);
    const scan = await fetch(decoded!.data, { redirect: 'manual' });
    assert.equal(scan.status, 301);
    assert.match(
      scan.headers.get('Location') ?? '',
      /^https:\/\/www\.example-news\.com\/2026\/11\/21\/council-votes/,
    );
    assert.equal(
      await page.locator('img.qr').evaluate((img: HTMLImageElement) => img.naturalWidth > 0),
      true,
    );

    // Edit the target with a reason; the history shows who, what and why; redirects follow.
    await page
      .locator('#edit')
      .getByLabel('Destination URL')
      .fill('https://www.example-news.com/2026/11/21/council-votes-updated');
    await page.getByLabel('Reason for the change').fill('Headline and URL changed after the vote');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(/\?saved=1/);
    await page.getByText('Changes saved').waitFor();
    const history = page.locator('.timeline-item').first();
    await history.getByText('Destination changed').waitFor();
    await history.getByText('admin@example.test').waitFor();
    await history.getByText('Headline and URL changed after the vote').waitFor();
    const moved = await fetch(`${base}/council-vote`, { redirect: 'manual' });
    assert.equal(
      moved.headers.get('Location'),
      'https://www.example-news.com/2026/11/21/council-votes-updated',
    );
    await shot('07-link-edited');

    // A link with clicks: the chart and top lists.
    await page.goto(`${base}/ui/links?q=election-night`);
    await page.locator('.links-table a.code-link').first().click();
    await page.locator('.chart rect.series-human').first().waitFor();
    await shot('08-link-with-clicks');

    // Operations (admin): keys and users.
    await page.getByRole('link', { name: 'Operations' }).click();
    await page.getByLabel('Name', { exact: true }).first().fill('Newsletter tool');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('code.secret').waitFor();
    assert.match((await page.locator('code.secret').textContent()) ?? '', /^ll_/);
    await page.locator('#user-email').fill('reporter@example.test');
    await page.locator('#user-name').fill('Rita Reporter');
    await page.getByRole('button', { name: 'Add user' }).click();
    await page.getByText('reporter@example.test can now sign in as editor.').waitFor();
    await page.locator('details.confirm summary', { hasText: 'Disable' }).click();
    await shot('09-operations');

    // Phones: the list and a link page stay usable.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/ui/links`);
    await shot('10-links-mobile');
    await page.goto(`${base}/ui/links/council-vote`);
    await shot('11-link-mobile');
    await page.setViewportSize({ width: 1280, height: 900 });

    // Log out: back at the sign-in page, and the UI is closed again.
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(/\/ui\/login\?signedOut=1/);
    await page.getByText('You are signed out.').waitFor();
    await shot('12-signed-out');
    await page.goto(`${base}/ui/links`);
    assert.match(page.url(), /\/ui\/login/);

    assert.deepEqual(problems, []);
  });

  test('form posts without the CSRF token are rejected, including a real cross-site form', async () => {
    const base = server.base;
    await openPage();
    await page.goto(`${base}/ui/login`);
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/ui/links`);
    const count = async () => (await server.h.db.sql`SELECT count(*)::int AS n FROM links`)[0]!.n as number;
    const before = await count();

    // With the session cookie but no token (a script, or a form that did not come from us).
    const noToken = await page.request.post(`${base}/ui/links/new`, {
      form: { url: 'https://evil.example/1' },
    });
    assert.equal(noToken.status(), 403);
    const forged = await page.request.post(`${base}/ui/links/new`, {
      form: { url: 'https://evil.example/2', _csrf: 'forged-token-forged-token-forged' },
    });
    assert.equal(forged.status(), 403);

    // A page on another site that posts a form to us: the browser sends it, we refuse it.
    const evilPort = await getFreePort();
    const evil: Server = createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end(`<!doctype html><form method="post" action="${base}/ui/links/new">
        <input name="url" value="https://evil.example/3"><button>Win a prize</button></form>`);
    });
    await new Promise<void>((r) => evil.listen(evilPort, 'localhost', r));
    try {
      await page.goto(`http://localhost:${evilPort}/`);
      await page.getByRole('button', { name: 'Win a prize' }).click();
      await page.waitForLoadState();
      assert.ok(page.url().startsWith(base), page.url());
      const body = (await page.textContent('body')) ?? '';
      assert.ok(/could not be accepted|Sign in/.test(body), body.slice(0, 200));
      await shot('13-csrf-refused');
    } finally {
      await new Promise((r) => evil.close(r));
    }
    assert.equal(await count(), before, 'no link was created');
  });
});
