// Outgoing webhooks in Chromium, in English and Arabic (ADR 0082): from the operations page to the webhooks
// page, an endpoint added with the form (its secret shown once, verified against what the receiver gets with
// the standardwebhooks package), a delivery seen in its log, and "send again" sending the same message again.
// The layout checks of the bilingual test (lang/dir, no overflow or overlap, no English left in Arabic) run on
// every page; screenshots in test-results/ui-i18n/.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { eventually } from '../../../devkit/harness/harness.ts';
import { createI18n } from '../../../lib/i18n/translator.ts';
import { ROOT } from '../../../scripts/temporal_cli.ts';
import { checkLayout } from '../../helpers/layout_probe.ts';
import { startUiServer, type UiServer } from '../../helpers/ui_server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook_receiver.ts';

const SHOTS = join(ROOT, 'test-results', 'ui-i18n');
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
let receiver: WebhookReceiver;
let worker: { stop(): Promise<void> };

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  receiver = await startWebhookReceiver();
  server = await startUiServer({ env: { WEBHOOK_POLL_INTERVAL_MS: '200', WEBHOOK_RETRY_BASE_MS: '100' } });
  worker = await server.h.startWorker();
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await worker?.stop();
  await server?.close();
  await receiver?.close();
});

async function signIn(page: Page) {
  await page.goto(`${server.base}/ui/login`);
  await page.locator('#field-email').fill(ADMIN.email);
  await page.locator('#field-password').fill(ADMIN.password);
  await Promise.all([
    page.waitForURL(/\/ui\/links/),
    page.locator('form[action="/ui/login"] button').click(),
  ]);
}

async function shotAndCheck(page: Page, locale: 'en' | 'ar', name: string) {
  await page.screenshot({ path: join(SHOTS, `${locale}-${name}.png`), fullPage: true });
  await checkLayout(page, `${locale} ${name}`, { dir: locale === 'ar' ? 'rtl' : 'ltr', lang: locale });
}

describe('outgoing webhooks in English and Arabic (Chromium)', () => {
  for (const locale of ['en', 'ar'] as const) {
    test(`in ${locale === 'en' ? 'English' : 'Arabic'}: add an endpoint, see its delivery, send it again`, async () => {
      const { t } = createI18n(locale);
      const path = `/ui-${locale}`;
      const problems: string[] = [];
      const context = await browser.newContext({
        locale: locale === 'ar' ? 'ar-EG' : 'en-GB',
        timezoneId: locale === 'ar' ? 'Africa/Cairo' : 'Europe/London',
        viewport: { width: 1280, height: 900 },
      });
      try {
        const page = await context.newPage();
        page.on('pageerror', (e) => problems.push(e.message));
        await signIn(page);
        await page.goto(`${server.base}/ui/ops`);
        await page.getByRole('link', { name: t('webhooks.open') }).click();
        await page.getByRole('heading', { name: t('webhooks.title'), level: 1 }).waitFor();
        assert.equal(new URL(page.url()).pathname, '/ui/ops/webhooks');
        await shotAndCheck(page, locale, '30-webhooks');

        // A refused address is named on the form, in the page's language.
        await page.locator('#field-url').fill('https://10.1.2.3/hook');
        await page.locator('form[action="/ui/ops/webhooks"] button[type=submit]').click();
        await page.locator('#field-url[aria-invalid="true"]').waitFor();

        await page.locator('#field-url').fill(`${receiver.base}${path}`);
        await page.locator('#field-description').fill(locale === 'ar' ? 'غرفة الأخبار' : 'Newsroom bot');
        await page.locator('form[action="/ui/ops/webhooks"] button[type=submit]').click();
        await page.locator('#webhook-secret').waitFor();
        const secret = (await page.locator('#webhook-secret code.secret').textContent()) ?? '';
        assert.match(secret, /^whsec_/);
        await shotAndCheck(page, locale, '31-webhook-created');
        const [endpoint] = await server.h.db.sql<{ id: number }[]>`
          SELECT id::int FROM webhook_endpoints WHERE url = ${`${receiver.base}${path}`}`;
        const id = endpoint!.id;

        const res = await server.h.api('/api/v1/links', {
          method: 'POST',
          json: { url: `https://example.com/webhooks-ui/${locale}` },
        });
        assert.equal(res.status, 201);
        const [hook] = await eventually(
          async () => (receiver.at(path).length > 0 ? receiver.at(path) : undefined),
          {
            timeoutMs: 30_000,
            what: 'the first delivery',
          },
        );
        assert.equal(
          (new Webhook(secret).verify(hook!.body, hook!.headers) as { type: string }).type,
          'link.created',
        );

        // The endpoint's page: the delivery, delivered, with its attempt.
        const messageId = hook!.headers['webhook-id']!;
        await eventually(
          async () => {
            await page.goto(`${server.base}/ui/ops/webhooks/${id}`);
            const text = (await page.locator(`#delivery-${messageId}`).textContent({ timeout: 1_000 })) ?? '';
            return text.includes(t('webhooks.state.delivered')) ? true : undefined;
          },
          { timeoutMs: 30_000, what: 'the delivery shown as delivered' },
        );
        assert.ok(
          ((await page.textContent('main')) ?? '').includes(secret) === false,
          'the secret is not shown again',
        );
        await page.locator(`#delivery-${messageId} details summary`).click();
        await shotAndCheck(page, locale, '32-webhook-deliveries');

        await Promise.all([
          page.waitForURL(/done=redelivered/),
          page
            .locator(`#delivery-${messageId}`)
            .getByRole('button', { name: t('webhooks.sendAgain') })
            .click(),
        ]);
        assert.equal(
          await page.locator('.notice-good .notice-title').textContent(),
          t('webhooks.done.redelivered'),
        );
        const again = await eventually(
          async () => (receiver.at(path).length >= 2 ? receiver.at(path)[1] : undefined),
          { timeoutMs: 30_000, what: 'the delivery sent again' },
        );
        assert.equal(again.headers['webhook-id'], messageId);
        assert.equal(again.body, hook!.body);
        await shotAndCheck(page, locale, '33-webhook-sent-again');

        // Rotation from the page: a new secret shown once.
        await page.locator('#field-graceSeconds').fill('60');
        await page.getByRole('button', { name: t('webhooks.rotateButton') }).click();
        await page.locator('#webhook-secret').waitFor();
        const rotated = (await page.locator('#webhook-secret code.secret').textContent()) ?? '';
        assert.match(rotated, /^whsec_/);
        assert.notEqual(rotated, secret);
        assert.deepEqual(problems, []);
        // Later links of this file's other locale are not this endpoint's business.
        await server.h.api(`/api/v1/webhooks/${id}`, { method: 'DELETE' });
      } finally {
        await context.close();
      }
    });
  }
});
