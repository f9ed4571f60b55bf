// The staff identity pages in English and in Arabic, in Chromium, with the same layout checks as the rest of the
// UI (tests/helpers/layout_probe.ts; screenshots in test-results/ui-i18n/): the sign-in page with the provider's
// button, the security page (two-step set-up with its QR code, the recovery codes, the sessions table), the
// code step of a sign-in, the users table's role choice, and the page a role without the permission gets.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { HARNESS_ADMIN } from '../../../devkit/harness/harness.ts';
import { createUser } from '../../../lib/auth/manage_users.ts';
import { totpCode, totpStep } from '../../../lib/auth/totp.ts';
import { createI18n } from '../../../lib/i18n/translator.ts';
import { ROOT } from '../../../scripts/temporal_cli.ts';
import { checkLayout } from '../../helpers/layout_probe.ts';
import { startUiServer, type UiServer } from '../../helpers/ui_server.ts';

const SHOTS = join(ROOT, 'test-results', 'ui-i18n');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'];
const PASSWORD = 'a password for the identity pages';

let server: UiServer;
let browser: Browser;

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  // A provider is configured (the sign-in page shows its button); these pages never call it.
  server = await startUiServer({
    env: {
      OIDC_ISSUER_URL: 'http://127.0.0.1:9/never-called',
      OIDC_CLIENT_ID: 'lifeline',
      OIDC_CLIENT_SECRET: 'not-used-by-these-pages',
      OIDC_PROVIDER_NAME: 'Google Workspace',
    },
  });
  for (const locale of ['en', 'ar']) {
    await createUser(
      server.h.db.sql,
      { email: `identity-${locale}@example.test`, name: null, role: 'editor', password: PASSWORD },
      'test',
    );
    await createUser(
      server.h.db.sql,
      { email: `viewer-${locale}@example.test`, name: null, role: 'viewer', password: PASSWORD },
      'test',
    );
  }
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function shotAndCheck(page: Page, locale: 'en' | 'ar', name: string) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SHOTS, `${locale}-identity-${name}.png`), fullPage: true });
  await checkLayout(page, `${locale} identity ${name}`, {
    dir: locale === 'ar' ? 'rtl' : 'ltr',
    lang: locale,
  });
}

async function passwordStep(page: Page, email: string) {
  await page.goto(`${server.base}/ui/login`);
  await page.locator('#field-email').fill(email);
  await page.locator('#field-password').fill(PASSWORD);
  await page.locator('form[action="/ui/login"] button').click();
}

describe('the staff identity pages in English and Arabic (Chromium)', () => {
  for (const locale of ['en', 'ar'] as const) {
    test(`sign-in, two-step verification, sessions, roles in ${locale === 'en' ? 'English' : 'Arabic'}`, async () => {
      const { t } = createI18n(locale);
      const context = await browser.newContext({
        locale: locale === 'ar' ? 'ar-EG' : 'en-GB',
        viewport: { width: 1280, height: 900 },
      });
      try {
        const page = await context.newPage();
        await page.goto(`${server.base}/ui/login`);
        await page
          .getByRole('link', { name: t('login.oidc.button', { provider: 'Google Workspace' }) })
          .waitFor();
        await shotAndCheck(page, locale, '01-login-provider');

        await passwordStep(page, `identity-${locale}@example.test`);
        await page.waitForURL(/\/ui\/links/);
        await page.goto(`${server.base}/ui/account/security`);
        await page.getByRole('heading', { name: t('account.sessions.heading') }).waitFor();
        await shotAndCheck(page, locale, '02-security');

        await page.getByRole('button', { name: t('account.mfa.start') }).click();
        await page.locator('.qr-frame img').waitFor();
        await shotAndCheck(page, locale, '03-mfa-enrol');
        const secret = ((await page.locator('.totp-secret').textContent()) ?? '').replace(/\s/g, '');
        await page.locator('#field-code').fill(await totpCode(secret, totpStep(Date.now())));
        await page.getByRole('button', { name: t('account.mfa.confirm') }).click();
        await page.locator('.recovery-codes li').first().waitFor();
        assert.equal(await page.locator('.recovery-codes li').count(), 10);
        await shotAndCheck(page, locale, '04-recovery-codes');

        // Signed out, then in again: the code step.
        await page.getByRole('button', { name: t('layout.logOut') }).click();
        await passwordStep(page, `identity-${locale}@example.test`);
        await page.waitForURL(/\/ui\/login\/mfa/);
        await page.getByRole('heading', { name: t('mfa.title') }).waitFor();
        await page.locator('#field-code').fill('000000');
        await page.getByRole('button', { name: t('mfa.verify') }).click();
        await page.getByText(t('mfa.wrong')).waitFor();
        await shotAndCheck(page, locale, '05-mfa-code');
        await page.locator('#field-code').fill(await totpCode(secret, totpStep(Date.now()) + 1));
        await page.getByRole('button', { name: t('mfa.verify') }).click();
        await page.waitForURL(/\/ui\/links/);

        // A viewer asks for the new-link form: the page says their role cannot.
        await page.getByRole('button', { name: t('layout.logOut') }).click();
        await passwordStep(page, `viewer-${locale}@example.test`);
        await page.waitForURL(/\/ui\/links/);
        const refused = await page.goto(`${server.base}/ui/links/new`);
        assert.equal(refused?.status(), 403);
        await page.getByText(t('error.forbidden.message')).waitFor();
        await shotAndCheck(page, locale, '06-forbidden');

        // The users table: each account's role is a choice of the four. (The 403 page has no frame to sign out
        // from: the cookies go instead.)
        await context.clearCookies();
        await page.goto(`${server.base}/ui/login`);
        await page.locator('#field-email').fill(HARNESS_ADMIN.email);
        await page.locator('#field-password').fill(HARNESS_ADMIN.password);
        await page.locator('form[action="/ui/login"] button').click();
        await page.waitForURL(/\/ui\/links/);
        await page.goto(`${server.base}/ui/ops#users`);
        const select = page.locator('select[id^="role-of-"]').first();
        assert.equal(await select.locator('option').count(), 4);
        await shotAndCheck(page, locale, '07-users-roles');
      } finally {
        await context.close();
      }
    });
  }
});
