// The editor's power tools in English and in Arabic, in Chromium, with the bilingual layout checks of
// bilingual_browser.test.ts (lang/dir, no overflow or overlap, navigation at the start, no English left in
// Arabic): the list's bulk bar and clicks column, the bulk confirmation and the run's page (a worker applies
// it), the CSV import and its dry run, the print QR page, and the link page's stats over chosen dates.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { eventually } from '../../../devkit/harness/harness.ts';
import { createI18n } from '../../../lib/i18n/translator.ts';
import { ROOT } from '../../../scripts/temporal_cli.ts';
import { checkLayout } from '../../helpers/layout_probe.ts';
import { startUiServer, type UiServer } from '../../helpers/ui_server.ts';

const SHOTS = join(ROOT, 'test-results', 'ui-i18n');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'];
const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };

let server: UiServer;
let browser: Browser;
const codes: string[] = [];

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startUiServer();
  await server.h.startWorker();
  for (const [i, title] of [
    'موازنة القاهرة للعام المقبل',
    'Council votes on the budget',
    'الدلتا والمياه',
  ].entries()) {
    const res = await server.h.api('/api/v1/links', {
      method: 'POST',
      json: { url: `https://power.example/story-${i}`, title, tags: ['power-desk'] },
    });
    codes.push(((await res.json()) as { code: string }).code);
  }
  const hour = new Date();
  hour.setUTCMinutes(0, 0, 0);
  await server.h.db.sql`
    INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks) VALUES
      (${codes[0]!}, ${hour}, 'human', 'EG', '', 1234), (${codes[1]!}, ${hour}, 'human', 'GB', '', 56)`;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function openPage(context: BrowserContext, problems: string[]): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of (401|403|404|409|422) /.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return page;
}

async function shotAndCheck(page: Page, locale: 'en' | 'ar', name: string) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SHOTS, `${locale}-power-${name}.png`), fullPage: true });
  await checkLayout(page, `${locale} ${name}`, { dir: locale === 'ar' ? 'rtl' : 'ltr', lang: locale });
}

describe('bulk changes, CSV import, print QR and any dates, in English and Arabic (Chromium)', () => {
  for (const locale of ['en', 'ar'] as const) {
    test(`in ${locale === 'en' ? 'English' : 'Arabic'}`, async () => {
      const { t } = createI18n(locale);
      const problems: string[] = [];
      const context = await browser.newContext({
        locale: locale === 'ar' ? 'ar-EG' : 'en-GB',
        timezoneId: locale === 'ar' ? 'Africa/Cairo' : 'Europe/London',
        viewport: { width: 1280, height: 900 },
      });
      try {
        const page = await openPage(context, problems);
        await page.goto(`${server.base}/ui/login`);
        await page.locator('#field-email').fill(ADMIN.email);
        await page.locator('#field-password').fill(ADMIN.password);
        await Promise.all([
          page.waitForURL(/\/ui\/links/),
          page.locator('form[action="/ui/login"] button').click(),
        ]);

        // The list, most clicked first: the clicks column and the bulk bar.
        await page.goto(`${server.base}/ui/links?tag=power-desk&sort=clicks`);
        assert.equal(await page.locator('.links-table tbody tr').count(), 3);
        assert.equal(
          await page.locator('.clicks-cell').first().textContent(),
          createI18n(locale).number(1234),
        );
        await shotAndCheck(page, locale, '01-list-bulk-bar');

        // The island ticks and clears the whole page.
        await page.locator('input.select-page').check();
        assert.equal(await page.locator('input[name="code"]:checked').count(), 3);
        await page.locator('input.select-page').uncheck();
        assert.equal(await page.locator('input[name="code"]:checked').count(), 0);
        // Tick two, choose "add a tag", review: the confirmation names the count.
        await page.locator(`input[name="code"][value="${codes[0]}"]`).check();
        await page.locator(`input[name="code"][value="${codes[1]}"]`).check();
        await page.locator('#bulk-action').selectOption('tag_add');
        await Promise.all([page.waitForURL(/\/ui\/links\/bulk$/), page.locator('#bulk-form button').click()]);
        await page.getByRole('heading', { name: t('bulk.title') }).waitFor();
        assert.equal(
          await page.locator('.notice .notice-title').first().textContent(),
          t('bulk.count', { count: 2, shown: createI18n(locale).number(2) }),
        );
        await shotAndCheck(page, locale, '02-bulk-confirm');
        const tag = locale === 'ar' ? 'مراجعة' : 'reviewed';
        await page.locator('#field-tag').fill(tag);
        await page.locator('#field-reason').fill(locale === 'ar' ? 'مراجعة المكتب' : 'desk review');
        await Promise.all([
          page.waitForURL(/\/ui\/links\/bulk\/bk_/),
          page.locator('form.bulk-confirm button[type=submit]').click(),
        ]);
        const runUrl = page.url();
        await eventually(
          async () => {
            await page.goto(runUrl);
            return (await page.locator('.bulk-applied').textContent()) === createI18n(locale).number(2)
              ? true
              : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 500, what: 'the bulk change to apply' },
        );
        await shotAndCheck(page, locale, '03-bulk-run');

        // The CSV import: upload, the dry run's table, nothing kept yet.
        await page.goto(`${server.base}/ui/links/import`);
        await shotAndCheck(page, locale, '04-import');
        await page.locator('#field-file').setInputFiles({
          name: 'links.csv',
          mimeType: 'text/csv',
          buffer: Buffer.from(
            `url,title,tags\nhttps://power.example/${locale}-new,عنوان جديد,power-import\nnot a url,,\n`,
          ),
        });
        await Promise.all([
          page.waitForURL(/\/ui\/links\/import$/),
          page.locator('form[action="/ui/links/import"] button[type=submit]').click(),
        ]);
        await page.locator('.import-table').waitFor();
        assert.equal(await page.locator('.import-table tbody tr').count(), 2);
        await shotAndCheck(page, locale, '05-import-preview');
        await Promise.all([
          page.waitForLoadState('load'),
          page.getByRole('button', { name: t('import.importButton', { count: 1 }) }).click(),
        ]);
        await page.getByText(t('import.done', { created: 1, existing: 0, errors: 1 })).waitFor();
        await shotAndCheck(page, locale, '06-import-done');

        // The print QR page, and the link page with its own dates.
        await page.goto(`${server.base}/ui/links/${codes[0]}/qr`);
        await shotAndCheck(page, locale, '07-qr-print');
        const today = new Date().toISOString().slice(0, 10);
        await page.goto(`${server.base}/ui/links/${codes[0]}?from=2020-01-01&to=2020-01-31`);
        assert.equal(await page.locator('#stats-from').inputValue(), '2020-01-01');
        await page.goto(`${server.base}/ui/links/${codes[0]}?from=${today}&to=${today}`);
        await shotAndCheck(page, locale, '08-link-any-dates');
      } finally {
        await context.close();
      }
      assert.deepEqual(problems, []);
    });
  }
});
