// The "Our domains" card of the operations page in Chromium, in English and Arabic: lang/dir, nothing
// overflowing or overlapping, no English left in the Arabic page outside data (names, statuses, issuers), and the
// card's rows as a reader sees them. Screenshots in test-results/ui-i18n/.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { HARNESS_ADMIN } from '../../../devkit/harness/harness.ts';
import { createI18n } from '../../../lib/i18n/translator.ts';
import { upsertDomainFactRead } from '../../../lib/stores/domain_watch_store.ts';
import { ROOT } from '../../../scripts/temporal_cli.ts';
import { checkLayout } from '../../helpers/layout_probe.ts';
import { startUiServer, type UiServer } from '../../helpers/ui_server.ts';

const SHOTS = join(ROOT, 'test-results', 'ui-i18n');
const DAY = 86_400_000;
let server: UiServer;
let browser: Browser;

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  // One host for UI and short links (the browser reaches the UI on it); the facts are stored as the worker writes them.
  server = await startUiServer();
  const sql = server.h.db.sql;
  const now = Date.now();
  await upsertDomainFactRead(sql, {
    subject: 'newsroom.example',
    fact: 'registration',
    ok: false,
    expiresAt: new Date(now + 12 * DAY),
    detail: {
      statuses: ['client transfer prohibited', 'client delete prohibited', 'active'],
      registrar: 'Example Registrar, Inc.',
    },
  });
  await upsertDomainFactRead(sql, {
    subject: 'newsroom.example',
    fact: 'lock',
    ok: true,
    expiresAt: null,
    detail: { locks: ['client transfer prohibited', 'client delete prohibited'] },
  });
  await upsertDomainFactRead(sql, {
    subject: 'links.newsroom.example',
    fact: 'certificate',
    ok: true,
    expiresAt: new Date(now + 61 * DAY),
    detail: {
      issuer: "Let's Encrypt — R11",
      names: ['links.newsroom.example'],
      nameMatches: true,
      trusted: true,
    },
  });
  await upsertDomainFactRead(sql, {
    subject: 'links.newsroom.example',
    fact: 'reputation',
    ok: true,
    expiresAt: null,
    detail: { threats: [] },
  });
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

describe('the operations page’s domain card in Chromium', () => {
  for (const locale of ['en', 'ar'] as const) {
    test(`${locale === 'en' ? 'English' : 'Arabic'}: the card’s rows, and the page’s layout`, async () => {
      const { t } = createI18n(locale);
      const context = await browser.newContext({
        locale: locale === 'ar' ? 'ar-EG' : 'en-GB',
        timezoneId: 'Africa/Cairo',
        viewport: { width: 1280, height: 900 },
      });
      try {
        const page = await context.newPage();
        await page.goto(`${server.base}/ui/login`);
        await page.locator('#field-email').fill(HARNESS_ADMIN.email);
        await page.locator('#field-password').fill(HARNESS_ADMIN.password);
        await Promise.all([
          page.waitForURL(/\/ui\/links/),
          page.locator('form[action="/ui/login"] button').click(),
        ]);
        await page.goto(`${server.base}/ui/ops`);
        const card = page.locator('section#domains');
        await card.getByRole('heading', { name: t('domains.title') }).waitFor();
        assert.equal(await card.locator('tbody tr').count(), 4);
        const registration = card.locator('tr[data-fact="newsroom.example registration"]');
        assert.equal(await registration.locator('.badge').textContent(), t('domains.state.bad'));
        assert.match((await registration.textContent()) ?? '', /client transfer prohibited/);
        const certificate = card.locator('tr[data-fact="links.newsroom.example certificate"]');
        assert.equal(await certificate.locator('.badge').textContent(), t('domains.state.good'));
        assert.ok(((await certificate.textContent()) ?? '').includes("Let's Encrypt — R11"));
        await card.scrollIntoViewIfNeeded();
        await page.screenshot({ path: join(SHOTS, `${locale}-30-ops-domains.png`), fullPage: true });
        await checkLayout(page, `${locale} ops domains`, {
          dir: locale === 'ar' ? 'rtl' : 'ltr',
          lang: locale,
        });
      } finally {
        await context.close();
      }
    });
  }
});
