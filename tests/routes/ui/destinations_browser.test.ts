// The queue of dead destinations in Chromium, in English and Arabic: linked from the navigation, each link with
// what its checks saw (the redirect chain), its archived copy and the policy; the layout checks of the bilingual
// test (lang/dir, no overflow or overlap, navigation at the start, no English left in Arabic); and the proposed
// retarget of a moved destination applied with one click. Screenshots in test-results/ui-i18n/.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { actOnDestination } from '../../../lib/destinations/act_on_destination.ts';
import { createI18n } from '../../../lib/i18n/translator.ts';
import { type DestinationVerdict, recordArchiveResult } from '../../../lib/stores/destination_state_store.ts';
import { getLinkByCode } from '../../../lib/stores/link_store.ts';
import { destinationDepsOf } from '../../../routes/api/destinations.ts';
import { ROOT } from '../../../scripts/temporal_cli.ts';
import { writeDestinationVerdict } from '../../helpers/destination_verdicts.ts';
import { checkLayout } from '../../helpers/layout_probe.ts';
import { startUiServer, type UiServer } from '../../helpers/ui_server.ts';

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
const codes: Record<string, string> = {};

async function create(json: Record<string, unknown>): Promise<string> {
  const res = await server.h.api('/api/v1/links', { method: 'POST', json });
  assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
  return ((await res.json()) as { code: string }).code;
}

/** A verdict as the destination checks write it, acted on. */
async function verdict(code: string, value: DestinationVerdict, finalUrl: string | null = null) {
  const { h } = server;
  const link = (await getLinkByCode(h.db.sql, code))!;
  await writeDestinationVerdict(h.db.sql, {
    code,
    url: link.targetUrl,
    host: new URL(link.targetUrl).hostname,
    outcome: value === 'moved' ? 'moved' : 'gone',
    verdict: value,
    httpStatus: value === 'moved' ? 301 : 404,
    finalUrl,
    chain:
      value === 'moved'
        ? [{ url: link.targetUrl, status: 301, location: finalUrl }]
        : [
            { url: link.targetUrl, status: 302, location: `${link.targetUrl}/amp` },
            { url: `${link.targetUrl}/amp`, status: 404 },
          ],
  });
  await actOnDestination(destinationDepsOf(h.deps), { code, actor: 'system:test' });
}

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startUiServer({ env: { SAFETY_TRUSTED_HOSTS: 'newsroom.example' } });
  const { h } = server;
  codes.dead = await create({
    url: 'https://elsewhere.example/2025/03/a-report-that-is-gone',
    title: 'تقرير اختفى من موقع المصدر',
  });
  await verdict(codes.dead, 'dead');
  // The checks wrote the row; the archive workflow records the copy in it.
  await recordArchiveResult(h.db.sql, {
    code: codes.dead,
    url: 'https://elsewhere.example/2025/03/a-report-that-is-gone',
    state: 'found',
    archiveUrl:
      'https://web.archive.org/web/20250301000000/https://elsewhere.example/2025/03/a-report-that-is-gone',
    archiveAt: new Date('2025-03-01T00:00:00Z'),
  });
  codes.nocopy = await create({ url: 'https://gone.example/story', title: 'A story without a copy' });
  await verdict(codes.nocopy, 'dead');
  for (const locale of ['en', 'ar']) {
    codes[`moved-${locale}`] = await create({ url: `https://newsroom.example/old/${locale}-story` });
    await verdict(codes[`moved-${locale}`]!, 'moved', `https://newsroom.example/new/${locale}-story`);
  }
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await server?.close();
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

describe('the dead-destination queue in English and Arabic (Chromium)', () => {
  for (const locale of ['en', 'ar'] as const) {
    test(`in ${locale === 'en' ? 'English' : 'Arabic'}: listed from the navigation, chain and copy shown, one-click retarget`, async () => {
      const { t } = createI18n(locale);
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
        await page.getByRole('link', { name: t('nav.destinations') }).click();
        await page.getByRole('heading', { name: t('destinations.heading') }).waitFor();
        assert.equal(new URL(page.url()).pathname, '/ui/destinations');
        const dead = page.locator(`#destination-${codes.dead}`);
        assert.equal(await dead.locator('.report-title').textContent(), 'تقرير اختفى من موقع المصدر');
        await dead.locator('details summary').click();
        assert.equal(await dead.locator('ol.chain li').count(), 2, 'the two hops the check followed');
        assert.match(
          (await dead.getByRole('link', { name: /2025/ }).getAttribute('href')) ?? '',
          /^https:\/\/web\.archive\.org\/web\/20250301000000\//,
        );
        assert.ok(
          ((await page.locator(`#destination-${codes.nocopy}`).textContent()) ?? '').includes(
            t('destinations.noCopy'),
          ),
        );
        await shotAndCheck(page, locale, '20-destinations');

        await page.getByRole('link', { name: t('destinations.state.proposed') }).click();
        await page.waitForURL(/state=proposed/);
        const moved = page.locator(`#destination-${codes[`moved-${locale}`]}`);
        assert.equal(
          await moved.locator('code').last().textContent(),
          `https://newsroom.example/new/${locale}-story`,
        );
        await shotAndCheck(page, locale, '21-destinations-proposed');
        await Promise.all([
          page.waitForURL(/done=retarget/),
          moved.getByRole('button', { name: t('destinations.action.retarget') }).click(),
        ]);
        await page.locator('.notice-good').waitFor();
        assert.equal(
          await page.locator('.notice-good .notice-title').textContent(),
          t('destinations.done.retarget'),
        );
        const link = await getLinkByCode(server.h.db.sql, codes[`moved-${locale}`]!);
        assert.equal(link?.targetUrl, `https://newsroom.example/new/${locale}-story`);
        assert.equal(
          await page.locator(`#destination-${codes[`moved-${locale}`]}`).count(),
          0,
          'left the queue',
        );
        await shotAndCheck(page, locale, '22-destinations-retargeted');
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    });
  }
});
