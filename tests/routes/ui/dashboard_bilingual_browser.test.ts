// The newsroom dashboard and the newsroom logo in Chromium, in English and Arabic: lang/dir, nothing overflowing
// or overlapping, no English left in the Arabic pages outside data; the dashboard's figures as a reader sees
// them (seeded clicks, Bitly's days, two short domains), the window chosen by a plain link with JavaScript off;
// the admin's logo upload on the settings page and the print form offering it. Screenshots in
// test-results/ui-i18n/.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { HARNESS_ADMIN } from '../../../devkit/harness/harness.ts';
import { createI18n } from '../../../lib/i18n/translator.ts';
import { ROOT } from '../../../scripts/temporal_cli.ts';
import { checkLayout } from '../../helpers/layout_probe.ts';
import { startUiServer, type UiServer } from '../../helpers/ui_server.ts';

const SHOTS = join(ROOT, 'test-results', 'ui-i18n');
const DAY = 86_400_000;
const SECOND_DOMAIN = 'desk-two.ui.test';
let server: UiServer;
let browser: Browser;
const codes: Record<string, string> = {};

const hourAgo = (days: number) => {
  const d = new Date(Date.now() - days * DAY);
  d.setUTCMinutes(0, 0, 0);
  return d;
};

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startUiServer({ env: { SHORT_DOMAINS: `127.0.0.1,${SECOND_DOMAIN}` } });
  const { h } = server;
  const create = async (json: Record<string, unknown>) => {
    const res = await h.api('/api/v1/links', { method: 'POST', json });
    assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
    return ((await res.json()) as { code: string }).code;
  };
  codes.cairo = await create({
    url: 'https://news.example/2026/12/cairo-budget',
    title: 'عاجل: خبر من القاهرة عن موازنة العام المقبل',
    tags: ['سياسة', 'مصر'],
  });
  codes.match = await create({
    url: 'https://news.example/2026/12/match',
    title: 'Council votes on the 2026 budget',
    tags: ['رياضة'],
  });
  codes.desk = await create({
    url: 'https://news.example/2026/12/desk',
    title: 'من المكتب الثاني',
    domain: SECOND_DOMAIN,
  });
  await h.db.sql`UPDATE links SET site = 'news.example', post_id = 11 WHERE code = ${codes.cairo}`;
  for (const [code, days, n] of [
    [codes.cairo, 0, 40],
    [codes.cairo, 2, 25],
    [codes.match, 0, 6],
    [codes.match, 12, 30],
    // A link on another short domain is stored under its key, `{domain}/{code}`.
    [`${SECOND_DOMAIN}/${codes.desk}`, 1, 8],
  ] as const)
    await h.db.sql`
      INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks)
      VALUES (${code}, ${hourAgo(days)}, 'human', 'EG', '', ${n})`;
  await h.db.sql`
    INSERT INTO vendor_daily_clicks (code, vendor, day, clicks)
    VALUES (${codes.cairo}, 'bitly', ${hourAgo(2).toISOString().slice(0, 10)}::date, 22)`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
    ],
  });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function signIn(page: Page) {
  await page.goto(`${server.base}/ui/login`);
  await page.locator('#field-email').fill(HARNESS_ADMIN.email);
  await page.locator('#field-password').fill(HARNESS_ADMIN.password);
  await Promise.all([
    page.waitForURL(/\/ui\/links/),
    page.locator('form[action="/ui/login"] button').click(),
  ]);
}

async function shotAndCheck(page: Page, locale: 'en' | 'ar', name: string) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SHOTS, `${locale}-${name}.png`), fullPage: true });
  await checkLayout(page, `${locale} ${name}`, { dir: locale === 'ar' ? 'rtl' : 'ltr', lang: locale });
}

/** A small PNG logo. */
function logoPng(): Buffer {
  const png = new PNG({ width: 80, height: 40 });
  for (let i = 0; i < png.data.length; i += 4) png.data.set([11, 61, 145, 255], i);
  return PNG.sync.write(png);
}

describe('the newsroom dashboard and logo in Chromium', () => {
  for (const locale of ['en', 'ar'] as const) {
    const name = locale === 'en' ? 'English' : 'Arabic';
    test(`${name}: the dashboard’s figures, the window by a plain link without JavaScript, the layout`, async () => {
      const { t } = createI18n(locale);
      const context = await browser.newContext({
        locale: locale === 'ar' ? 'ar-EG' : 'en-GB',
        timezoneId: 'Africa/Cairo',
        viewport: { width: 1280, height: 900 },
        javaScriptEnabled: false,
      });
      try {
        const page = await context.newPage();
        await signIn(page);
        await page.getByRole('link', { name: t('nav.dashboard') }).click();
        await page.getByRole('heading', { name: t('dashboard.title'), level: 1 }).waitFor();
        const totals = page.locator('#dashboard-totals');
        const ours = (w: string) =>
          totals.locator(`tr[data-window="${w}"] td[data-ours]`).getAttribute('data-ours');
        assert.deepEqual([await ours('today'), await ours('7d'), await ours('30d')], ['46', '79', '109']);
        assert.equal(
          await totals.locator('tr[data-window="7d"] td[data-bitly]').getAttribute('data-bitly'),
          '22',
        );
        assert.equal(await page.locator('#dashboard-bitly-note').textContent(), t('dashboard.bitlyNote'));
        // The week: the Cairo link first, its tags, its WordPress site, and both short domains.
        assert.equal(
          await page.locator('#dashboard-top tbody tr').first().getAttribute('data-code'),
          codes.cairo,
        );
        assert.equal(await page.locator('#dashboard-tags tbody tr').count(), 3);
        assert.equal(
          await page.locator('#dashboard-sites tbody tr').first().getAttribute('data-key'),
          'news.example',
        );
        assert.deepEqual(
          await page
            .locator('#dashboard-domains tbody tr')
            .evaluateAll((rows) =>
              rows.map(
                (r) => r.textContent?.includes('desk-two.ui.test') || r.textContent?.includes('127.0.0.1'),
              ),
            ),
          [true, true],
        );
        await page.locator('#dashboard-families').getByText(t('detail.familiesDays')).waitFor();
        await shotAndCheck(page, locale, '40-dashboard');

        // Thirty days: the older clicks of the match join the lists (a link, no script).
        await page.getByRole('link', { name: t('dashboard.window.30d') }).click();
        await page.waitForURL(/window=30d/);
        assert.equal(
          await page.getByRole('link', { name: t('dashboard.window.30d') }).getAttribute('aria-current'),
          'page',
        );
        assert.equal(
          await page
            .locator(`#dashboard-top tr[data-code="${codes.match}"] td[data-clicks]`)
            .getAttribute('data-clicks'),
          '36',
        );
        await shotAndCheck(page, locale, '41-dashboard-30d');
      } finally {
        await context.close();
      }
    });

    test(`${name}: the admin uploads the newsroom logo; the print form offers it first`, async () => {
      const { t } = createI18n(locale);
      const context = await browser.newContext({
        locale: locale === 'ar' ? 'ar-EG' : 'en-GB',
        timezoneId: 'Africa/Cairo',
        viewport: { width: 1280, height: 900 },
      });
      try {
        const page = await context.newPage();
        await signIn(page);
        await page.goto(`${server.base}/ui/settings`);
        const card = page.locator('#newsroom-logo');
        await card.getByRole('heading', { name: t('settings.logo.title') }).waitFor();
        await card.locator('input[type=file]').setInputFiles({
          name: 'logo.png',
          mimeType: 'image/png',
          buffer: logoPng(),
        });
        await Promise.all([
          page.waitForURL(/logo=saved/),
          card.getByRole('button', { name: t('settings.logo.upload') }).click(),
        ]);
        await page.locator('#newsroom-logo').getByText(t('settings.logo.saved')).waitFor();
        assert.equal(
          await page.locator('#newsroom-logo img').evaluate((img: HTMLImageElement) => img.naturalWidth),
          80,
        );
        await shotAndCheck(page, locale, '42-settings-logo');

        await page.goto(`${server.base}/ui/links/${codes.cairo}/qr`);
        const newsroom = page.getByRole('radio', { name: t('qr.logoChoice.newsroom') });
        assert.equal(await newsroom.isChecked(), true);
        await shotAndCheck(page, locale, '43-qr-newsroom-logo');
      } finally {
        await context.close();
      }
    });
  }
});
