// The analytics parts of the editor UI in a real browser (Debian's Chromium via playwright-core): per-link UTM
// set in the new-link form and carried into the redirect, ours and Bitly's side by side on the link page (the
// comparison card and Bitly's line over our bars), and the CSV downloads as a browser saves them.
// Screenshots under test-results/ui/analytics-*.png.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
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

let server: UiServer;
let browser: Browser;
let page: Page;
const problems: string[] = [];

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startUiServer({ env: { UTM_PARAMS: 'utm_source=lifeline' } });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  page = await context.newPage();
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

describe('analytics in the editor UI', () => {
  test('UTM in the new-link form, ours beside Bitly on the link page, CSV downloads', async () => {
    const { base, h } = server;
    await page.goto(`${base}/ui/login`);
    await page.getByLabel('Email').fill('admin@example.test');
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/ui/links`);

    // A link with its own campaign, set in the form.
    await page.goto(`${base}/ui/links/new`);
    await page.getByLabel('Destination URL').fill('https://www.example-news.com/2026/11/election-results');
    await page.getByText('Advanced').click();
    await page.getByLabel(/Campaign \(utm_campaign\)/).fill('انتخابات');
    await page.getByLabel(/Medium \(utm_medium\)/).fill('push');
    await page.getByRole('button', { name: 'Create short link' }).click();
    await page.waitForURL(/\/ui\/links\/[\w-]+\?created=1/);
    const code = new URL(page.url()).pathname.split('/').pop()!;
    await page.getByText('utm_campaign=انتخابات · utm_medium=push').waitFor();
    const redirect = await fetch(`${base}/${code}`, {
      redirect: 'manual',
      headers: { 'User-Agent': 'Mozilla/5.0' },
    });
    assert.equal(
      redirect.headers.get('Location'),
      'https://www.example-news.com/2026/11/election-results?utm_campaign=%D8%A7%D9%86%D8%AA%D8%AE%D8%A7%D8%A8%D8%A7%D8%AA&utm_medium=push&utm_source=lifeline',
    );

    // Our clicks over two weeks, and Bitly's own counts for the same days (as the scheduled pull stores them).
    await h.db.sql`
      INSERT INTO vendor_links (code, vendor, vendor_id, state, synced_at)
      VALUES (${code}, 'bitly', ${`sho.rt/${code}`}, 'synced', now())`;
    for (let d = 0; d < 14; d++) {
      const hour = new Date(Date.now() - d * 86_400_000);
      hour.setUTCMinutes(0, 0, 0);
      await h.db.sql`
        INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks) VALUES
          (${code}, ${hour}, 'human', 'SA', 't.co', ${30 + d * 2}),
          (${code}, ${hour}, 'preview', '', 'slack.com', 5),
          (${code}, ${hour}, 'bot', 'US', '', 3)`;
      if (d < 10) {
        await h.db.sql`
          INSERT INTO vendor_daily_clicks (code, vendor, day, clicks)
          VALUES (${code}, 'bitly', ${hour.toISOString().slice(0, 10)}::date, ${36 + d * 2 + (d % 3)})`;
      }
    }
    await page.goto(`${base}/ui/links/${code}`);
    const card = page.locator('section', {
      has: page.getByRole('heading', { name: 'Ours and Bitly’s, day by day' }),
    });
    await card.waitFor();
    assert.equal(await card.locator('tbody tr').count(), 10, 'ten days compared');
    await card.getByText('Why the numbers differ').waitFor();
    assert.ok(await card.getByText(/Browser-cached 301s/).isVisible());
    assert.equal(await page.locator('.chart .vendor-line').count(), 1, 'Bitly’s line over our bars');
    assert.equal(await page.locator('.chart .vendor-dot').count(), 10);
    await page.screenshot({ path: join(SHOTS, 'analytics-link-page.png'), fullPage: true });

    // Downloads as a browser saves them.
    const [dayCsv] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'by day' }).click(),
    ]);
    assert.match(dayCsv.suggestedFilename(), new RegExp(`^lifeline-${code}-clicks-by-day-`));
    const dayBytes = readFileSync((await dayCsv.path())!);
    assert.deepEqual([...dayBytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    assert.match(
      dayBytes.toString('utf8'),
      /Day \(UTC\),People,of which QR scans,Link previews,Bots and HEAD requests,Bitly,/,
    );

    await page.goto(`${base}/ui/links`);
    const [listCsv] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    const listText = readFileSync((await listCsv.path())!).toString('utf8');
    assert.ok(listText.startsWith('\uFEFFCode,Short URL,'));
    assert.ok(listText.includes(`${code},${base}/${code},`));
    assert.ok(listText.includes('انتخابات'));
    await page.screenshot({ path: join(SHOTS, 'analytics-links-page.png') });
    assert.deepEqual(problems, []);
  });
});
