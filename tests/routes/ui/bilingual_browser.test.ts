// The editor UI in English and in Arabic, in Chromium: every page is rendered in both languages, screenshot
// (test-results/ui-i18n/), and checked from its laid-out boxes: <html lang dir>, no sideways scrolling, no
// text outside its box, nothing overlapping, the main navigation at the inline-start side, and no English
// left in the Arabic pages. The analytics parts are on them: the UTM fields (with the deployment's UTM_PARAMS and
// a refused value), Bitly's line over our bars and the ours-beside-Bitly card with its known causes, the CSV
// download buttons. Then: the user's setting wins over the browser; searching in Arabic.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { createUser } from '../../../lib/auth/manage_users.ts';
import { createI18n } from '../../../lib/i18n/translator.ts';
import { ROOT } from '../../../scripts/temporal_cli.ts';
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
const EDITOR = { email: 'rania@example.test', password: 'a long editor password' };
/** Percent-encodes the bytes of non-ASCII letters in lower case, as WordPress writes non-Latin slugs. */
const wp = (s: string) =>
  s.replace(/[^\x21-\x7e]/gu, (ch) =>
    [...new TextEncoder().encode(ch)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
  );
const CAIRO_TITLE = 'عاجل: خبر من القاهرة عن موازنة العام المقبل';
const CHECKED_URL = 'https://www.example-news.com/2026/11/flood';
const CHECKED_FINAL = 'https://example-news.com/2026/11/flood-defences-hold/';
const CHECKED_TITLE = 'الدفاعات ضد الفيضانات صامدة — Flood defences hold';
const CAIRO_URL = `https://news.example/2026/11/${wp('موازنة')}-${wp('القاهرة')}-${wp('المقبل')}/`;
/** The deployment's second short domain (the first is the server's own address). */
const SECOND_DOMAIN = 'desk-two.ui.test';
/** Text without its bidirectional isolation marks (U+2068, U+2069). */
const unisolated = (s: string) => s.replace(/[\u2068\u2069]/g, '');

let server: UiServer;
let browser: Browser;
const codes: Record<string, string> = {};
const started = Date.now();

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startUiServer({
    // A second short domain: the new-link form offers the choice (ADR 0078).
    env: { UTM_PARAMS: 'utm_source=lifeline&utm_medium=social', SHORT_DOMAINS: `127.0.0.1,${SECOND_DOMAIN}` },
  });
  await seed();
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await server?.close();
  process.stderr.write(`  bilingual browser test: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
});

async function create(json: Record<string, unknown>): Promise<string> {
  const res = await server.h.api('/api/v1/links', { method: 'POST', json });
  assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
  return ((await res.json()) as { code: string }).code;
}

/**
 * Links with Arabic and English titles and slugs, clicks (and Bitly's own counts for the Cairo link), per-link
 * UTM values, a history, a second user and a finished run.
 */
async function seed() {
  const { h } = server;
  codes.cairo = await create({
    url: CAIRO_URL,
    title: CAIRO_TITLE,
    tags: ['سياسة', 'مصر'],
    utm: { campaign: 'موازنة-2026', medium: 'email' },
  });
  codes.council = await create({
    url: 'https://www.example-news.com/2026/11/21/council-votes-on-the-budget',
    title: 'Council votes on the 2026 budget',
    tags: ['politics'],
  });
  codes.long = await create({
    url: `https://news.example/${wp('تحقيق-طويل-جدا-عن-المياه-والزراعة-في-دلتا-النيل-وما-ينتظر-الفلاحين')}?utm_campaign=${wp('حملة')}`,
    title:
      'تحقيق: كيف تغيّر المياه شكل الزراعة في دلتا النيل، وما الذي ينتظر الفلاحين في السنوات العشر المقبلة؟',
    tags: ['تحقيقات', 'مياه', 'زراعة', 'الدلتا'],
  });
  codes.lookalike = await create({ url: 'https://xn--80ak6aa92e.com/login', title: 'رابط مريب' });
  // Crawl on create: a link the editor gave no title, as its first destination check left it (the page's title,
  // where it lands after two redirects, TLS).
  codes.checked = await create({ url: CHECKED_URL });
  await h.db.sql`
    INSERT INTO destination_states (code, url, host, outcome, verdict, verdict_at, http_status, final_url, chain, tls,
      page_title, checks, checked_at, next_check_at)
    VALUES (${codes.checked}, ${CHECKED_URL}, 'www.example-news.com', 'ok', 'ok', now(), 200, ${CHECKED_FINAL},
      ${h.db.sql.json([
        { url: CHECKED_URL, status: 301, location: 'https://example-news.com/2026/11/flood' },
        { url: 'https://example-news.com/2026/11/flood', status: 302, location: CHECKED_FINAL },
        { url: CHECKED_FINAL, status: 200 },
      ])},
      ${h.db.sql.json({ protocol: 'TLSv1.3', issuer: 'R11', validTo: '2027-02-01T00:00:00.000Z', error: null })},
      ${CHECKED_TITLE}, 1, now(), now() + interval '7 days')`;
  // One printed code per language's run of the rules editor: Arabic readers to the Arabic edition.
  for (const locale of ['en', 'ar']) {
    codes[`rules-${locale}`] = await create({
      url: `https://www.example-news.com/2026/12/01/budget-explained-${locale}`,
      title: 'The budget, explained',
      rules: [
        {
          kind: 'language',
          values: ['ar'],
          target: `https://news.example/ar/2026/12/01/${wp('الموازنة')}-${locale}`,
        },
      ],
    });
  }
  await h.api(`/api/v1/links/${codes.cairo}`, {
    method: 'PATCH',
    json: {
      title: `${CAIRO_TITLE} (محدَّث)`,
      tags: ['سياسة', 'مصر', 'اقتصاد'],
      utm: { source: 'newsletter' },
      reason: 'تحديث العنوان بعد التصويت',
    },
  });
  for (let d = 0; d < 14; d++) {
    const hour = new Date(Date.now() - d * 86_400_000);
    hour.setUTCMinutes(0, 0, 0);
    await h.db.sql`
      INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks) VALUES
        (${codes.cairo}, ${hour}, 'human', 'EG', 'facebook.com', ${40 + d * 7}),
        (${codes.cairo}, ${hour}, 'human', 'SA', 'x.com', ${10 + d}),
        (${codes.cairo}, ${hour}, 'qr', 'EG', '', ${d % 3}),
        (${codes.cairo}, ${hour}, 'preview', '', 'whatsapp.net', ${4 + (d % 3)}),
        (${codes.cairo}, ${hour}, 'bot', 'US', '', ${2 + (d % 4)})`;
    // Readers' browsers and systems, per day (migration 0125).
    await h.db.sql`
      INSERT INTO click_families (code, day, browser, os, clicks) VALUES
        (${codes.cairo}, ${hour.toISOString().slice(0, 10)}::date, 'chrome', 'android', ${25 + d * 4}),
        (${codes.cairo}, ${hour.toISOString().slice(0, 10)}::date, 'safari', 'ios', ${15 + d * 3}),
        (${codes.cairo}, ${hour.toISOString().slice(0, 10)}::date, 'facebook', 'ios', ${5 + d}),
        (${codes.cairo}, ${hour.toISOString().slice(0, 10)}::date, 'samsung', 'android', ${5 + d})
      ON CONFLICT DO NOTHING`;
    // Bitly's own count, pulled for ten of the fourteen days (one of them a failover day).
    if (d < 10) {
      await h.db.sql`
        INSERT INTO vendor_daily_clicks (code, vendor, day, clicks)
        VALUES (${codes.cairo}, 'bitly', ${hour.toISOString().slice(0, 10)}::date, ${58 + d * 6 + (d % 3)})`;
    }
  }
  await h.db.sql`
    INSERT INTO vendor_links (code, vendor, vendor_id, state, synced_at)
    VALUES (${codes.cairo}, 'bitly', ${`sho.rt/${codes.cairo}`}, 'synced', now())`;
  await h.db.sql`
    INSERT INTO ops_runs (kind, workflow_id, status, report, started_at, finished_at) VALUES
      ('reconcile', 'reconcile:manual:1', 'succeeded',
       '{"repair": true, "read": 4, "durationMs": 1234, "linksPerSecond": 3.2}', now() - interval '1 hour', now())`;
  await createUser(
    h.db.sql,
    { email: EDITOR.email, name: 'رانيا المحررة', role: 'editor', password: EDITOR.password },
    'test',
  );
}

async function newContext(locale: 'en-GB' | 'ar-EG', viewport = { width: 1280, height: 900 }) {
  return browser.newContext({
    locale,
    timezoneId: locale === 'ar-EG' ? 'Africa/Cairo' : 'Europe/London',
    viewport,
    acceptDownloads: false,
  });
}

/** A page that records script errors and CSP refusals (any is a bug). */
async function openPage(context: BrowserContext, problems: string[]): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of (401|403|404|409|422) /.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return page;
}

async function signIn(page: Page, who: { email: string; password: string }) {
  await page.goto(`${server.base}/ui/login`);
  await page.locator('#field-email').fill(who.email);
  await page.locator('#field-password').fill(who.password);
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

describe('the editor UI in English and Arabic (Chromium)', () => {
  for (const locale of ['en', 'ar'] as const) {
    test(`every page in ${locale === 'en' ? 'English' : 'Arabic'}: lang/dir, no overflow, no overlap, navigation at the start`, async () => {
      const { t } = createI18n(locale);
      const problems: string[] = [];
      const context = await newContext(locale === 'ar' ? 'ar-EG' : 'en-GB');
      try {
        const page = await openPage(context, problems);
        // The browser's language decides until the user sets one.
        await page.goto(`${server.base}/ui/login`);
        await page.getByRole('heading', { name: t('login.title') }).waitFor();
        await shotAndCheck(page, locale, '01-login');

        await signIn(page, ADMIN);
        await page.getByRole('heading', { name: t('links.title') }).waitFor();
        assert.equal(
          await page.getByRole('link', { name: t('export.links') }).getAttribute('href'),
          '/ui/links.csv',
        );
        await shotAndCheck(page, locale, '02-links');

        await page.goto(`${server.base}/ui/links?q=${encodeURIComponent('القاهرة')}`);
        assert.equal(await page.locator('.links-table tbody tr').count(), 1);
        await shotAndCheck(page, locale, '03-search');

        // The new-link form, then the same form after a refused submit (errors next to fields, in the language).
        await page.goto(`${server.base}/ui/links/new`);
        await shotAndCheck(page, locale, '04-new-link');
        // Advanced: the UTM fields, with the deployment's UTM_PARAMS named.
        await page.locator('details.advanced summary').click();
        await page.locator('#field-utmCampaign').waitFor();
        assert.equal(
          await page
            .locator('fieldset', { has: page.locator('#field-utmCampaign') })
            .locator('.hint code')
            .textContent(),
          'utm_source=lifeline&utm_medium=social',
        );
        await shotAndCheck(page, locale, '04b-new-link-utm');
        await page.locator('#field-url').fill('ftp://news.example/x');
        await page.locator('#field-alias').fill('ab');
        await page.locator('#field-tags').fill('ok, two words');
        // A campaign longer than GA4 keeps (the field's maxlength stops typing; a form can still send it).
        await page.locator('#field-utmCampaign').evaluate((el) => el.removeAttribute('maxlength'));
        await page.locator('#field-utmCampaign').fill('حملة'.repeat(26));
        await page.locator('form[action="/ui/links/new"] button[type=submit]').click();
        await page.locator('.notice-bad').waitFor();
        assert.equal(
          await page.locator('.notice-bad .notice-title').textContent(),
          t('form.fixThese', { count: 4 }),
        );
        assert.ok(
          await page.locator('#field-utmCampaign-message').isVisible(),
          'the UTM error, next to its field',
        );
        await shotAndCheck(page, locale, '05-new-link-errors');

        // Several short domains: the chooser names them (the default first), and a link made on the second one
        // shows it on its page and in the list filtered by it.
        await page.goto(`${server.base}/ui/links/new`);
        const chooser = page.locator('#field-domain');
        assert.equal(
          await page.locator('label[for="field-domain"]').first().textContent(),
          t('field.domain'),
        );
        assert.deepEqual((await chooser.locator('option').allTextContents()).map(unisolated), [
          unisolated(t('new.domainDefault', { domain: '127.0.0.1' })),
          SECOND_DOMAIN,
        ]);
        await page.locator('#field-url').fill(`https://news.example/${locale}/desk-two-story`);
        await chooser.selectOption(SECOND_DOMAIN);
        await page.locator('form[action="/ui/links/new"] button[type=submit]').click();
        await page.waitForURL(/created=1/);
        const heading = (await page.locator('h1.short-url-heading bdi').textContent()) ?? '';
        assert.match(heading, new RegExp(`^${SECOND_DOMAIN.replace(/\./g, '\\.')}:\\d+/[A-Za-z0-9_-]+$`));
        await shotAndCheck(page, locale, '05b-link-on-second-domain');
        await page.goto(`${server.base}/ui/links?domain=${SECOND_DOMAIN}`);
        const hosts = await page.locator('.links-table tbody tr .code-host').allTextContents();
        assert.ok(
          hosts.length >= 1 && hosts.every((host) => host.startsWith(`${SECOND_DOMAIN}:`)),
          hosts.join(),
        );
        await shotAndCheck(page, locale, '05c-links-second-domain');

        await page.goto(`${server.base}/ui/links/${codes.cairo}`);
        await page.locator('.chart rect.series-human').first().waitFor();
        assert.match((await page.locator('.destination .url').textContent()) ?? '', /موازنة-القاهرة-المقبل/);
        // Analytics on the link's page: Bitly's line over our bars, the comparison card, the downloads, UTM.
        assert.equal(await page.locator('.chart .vendor-dot').count(), 10, 'Bitly’s ten pulled days');
        const comparison = page.locator('section[aria-labelledby="vendor-title"]');
        assert.equal(
          await comparison.locator('h2').textContent(),
          t('comparison.title', { vendor: t('vendor.bitly') }),
        );
        assert.equal(await comparison.locator('tbody tr').count(), 10);
        assert.ok(await comparison.locator('.causes').isVisible(), 'the known causes, open');
        assert.equal(await page.locator('.export-links a[download]').count(), 5);
        // Browsers and operating systems, most first, in the page's language.
        const families = async (title: string) =>
          page
            .locator('.top-list', { has: page.getByRole('heading', { name: title, exact: true }) })
            .locator('tbody th bdi')
            .allTextContents();
        assert.deepEqual(await families(t('detail.topBrowsers')), [
          t('family.browser.chrome'),
          t('family.browser.safari'),
          t('family.browser.facebook'),
          t('family.browser.samsung'),
        ]);
        assert.deepEqual(await families(t('detail.topSystems')), [
          t('family.os.android'),
          t('family.os.ios'),
        ]);
        const byOs = page.locator('.export-links a[href*="by=os"]');
        assert.equal(await byOs.textContent(), t('export.byOs'));
        assert.equal(
          await page
            .locator('.fact', { hasText: t('detail.utm') })
            .locator('dd')
            .textContent(),
          'utm_campaign=موازنة-2026 · utm_source=newsletter · utm_medium=email',
        );
        assert.equal(await page.locator('#field-utmSource').inputValue(), 'newsletter');
        await shotAndCheck(page, locale, '06-link');
        await comparison.scrollIntoViewIfNeeded();
        await comparison.screenshot({ path: join(SHOTS, `${locale}-06b-link-vendor-comparison.png`) });
        await page.goto(`${server.base}/ui/links/${codes.long}`);
        await shotAndCheck(page, locale, '07-link-long-title');
        // Crawl on create on the link's page: the page's title (the editor gave none), where it lands, the
        // redirects followed and TLS.
        await page.goto(`${server.base}/ui/links/${codes.checked}`);
        const check = page.locator('#destination-check');
        assert.equal(await check.locator('h2').textContent(), t('destcheck.title'));
        assert.equal(await check.locator('[data-page-title]').textContent(), CHECKED_TITLE);
        assert.equal(await check.locator('ol.chain li').count(), 3, 'the redirects followed');
        assert.match(
          (await check.locator('.fact', { hasText: t('destcheck.finalUrl') }).textContent()) ?? '',
          /flood-defences-hold/,
        );
        assert.match(
          (await check.locator('.fact', { hasText: t('destcheck.tls') }).textContent()) ?? '',
          /TLSv1\.3/,
        );
        await shotAndCheck(page, locale, '07b-link-destination-check');
        await page.goto(`${server.base}/ui/links/${codes.lookalike}`);
        // A host that imitates another stays in punycode.
        assert.equal(
          await page.locator('.destination .url').textContent(),
          'https://xn--80ak6aa92e.com/login',
        );

        await page.goto(`${server.base}/ui/settings`);
        await shotAndCheck(page, locale, '08-settings');
        await page.goto(`${server.base}/ui/ops`);
        await page.locator('details.confirm summary').first().click();
        await shotAndCheck(page, locale, '09-operations');
        await page.goto(`${server.base}/ui/ops/retarget`);
        await shotAndCheck(page, locale, '09b-mass-retarget');
        const missing = await page.goto(`${server.base}/ui/no-such-page`);
        assert.equal(missing?.status(), 404);
        await shotAndCheck(page, locale, '10-not-found');

        // Phones: the list and a link page, as cards.
        await page.setViewportSize({ width: 390, height: 844 });
        await page.goto(`${server.base}/ui/links`);
        await shotAndCheck(page, locale, '11-links-phone');
        await page.goto(`${server.base}/ui/links/${codes.cairo}`);
        await shotAndCheck(page, locale, '12-link-phone');

        // An editor opening operations: a page of its own, in the language too.
        const editorContext = await newContext(locale === 'ar' ? 'ar-EG' : 'en-GB');
        try {
          const editorPage = await openPage(editorContext, problems);
          await signIn(editorPage, EDITOR);
          const forbidden = await editorPage.goto(`${server.base}/ui/ops`);
          assert.equal(forbidden?.status(), 403);
          await shotAndCheck(editorPage, locale, '13-forbidden');
        } finally {
          await editorContext.close();
        }
      } finally {
        await context.close();
      }
      assert.deepEqual(problems, []);
    });
  }

  for (const locale of ['en', 'ar'] as const) {
    test(`the routing rules editor in ${locale === 'en' ? 'English' : 'Arabic'}: add, reorder, remove, a refused value, without script`, async () => {
      const { t } = createI18n(locale);
      const problems: string[] = [];
      // The editor works without JavaScript: every button is a form submit.
      const context = await browser.newContext({
        locale: locale === 'ar' ? 'ar-EG' : 'en-GB',
        timezoneId: 'UTC',
        viewport: { width: 1280, height: 900 },
        javaScriptEnabled: false,
      });
      const code = codes[`rules-${locale}`]!;
      const card = (page: Page) => page.locator('section#rules');
      const kinds = async (page: Page) =>
        card(page)
          .locator('fieldset.rule-row:not([data-rule=new]) select')
          .evaluateAll((els) => els.map((el) => (el as HTMLSelectElement).value));
      const submit = async (page: Page, button: ReturnType<Page['locator']>) => {
        await Promise.all([page.waitForEvent('load'), button.click()]);
        await card(page).waitFor();
      };
      try {
        const page = await openPage(context, problems);
        await signIn(page, ADMIN);
        await page.goto(`${server.base}/ui/links/${code}`);
        await card(page)
          .getByRole('heading', { name: t('rules.title') })
          .waitFor();
        assert.deepEqual(await kinds(page), ['language']);
        assert.match(await page.locator('#field-rules\\.0\\.target').inputValue(), /news\.example\/ar\//);
        await card(page).scrollIntoViewIfNeeded();
        await shotAndCheck(page, locale, '30-rules');

        // Add: the blank row, filled in, then saved.
        await page.locator('#field-rules\\.1\\.kind').selectOption('country');
        await page.locator('#field-rules\\.1\\.values').fill('eg, sa');
        await page.locator('#field-rules\\.1\\.target').fill('https://news.example/mena/budget');
        await submit(
          page,
          card(page)
            .getByRole('button', { name: t('rules.save') })
            .last(),
        );
        assert.match(page.url(), /saved=1/);
        assert.deepEqual(await kinds(page), ['language', 'country']);
        assert.equal(
          await page.locator('#field-rules\\.1\\.values').inputValue(),
          `EG${t('common.listSeparator')}SA`,
        );

        // Reorder: the country rule first (first match wins), saved at once.
        await submit(page, card(page).getByRole('button', { name: t('rules.up', { n: 2 }) }));
        assert.deepEqual(await kinds(page), ['country', 'language']);
        const [row] = await server.h.db.sql`SELECT routing_rules FROM links WHERE code = ${code}`;
        assert.deepEqual(
          (row!.routing_rules as { kind: string }[]).map((r) => r.kind),
          ['country', 'language'],
        );

        // A refused value: the error next to its field, in the page's language, nothing saved.
        await page.locator('#field-rules\\.0\\.values').fill('Egypt');
        await submit(
          page,
          card(page)
            .getByRole('button', { name: t('rules.save') })
            .last(),
        );
        await card(page).locator('.notice-bad').waitFor();
        assert.ok(await page.locator('#field-rules\\.0\\.values-message').isVisible());
        await shotAndCheck(page, locale, '31-rules-error');
        const [unchanged] = await server.h.db.sql`SELECT routing_rules FROM links WHERE code = ${code}`;
        assert.deepEqual((unchanged!.routing_rules as { values: string[] }[])[0]!.values, ['EG', 'SA']);

        // Remove: the first rule goes; the language rule is left.
        await page.goto(`${server.base}/ui/links/${code}`);
        await submit(page, card(page).getByRole('button', { name: t('rules.remove', { n: 1 }) }));
        assert.deepEqual(await kinds(page), ['language']);
        await card(page).scrollIntoViewIfNeeded();
        await shotAndCheck(page, locale, '32-rules-removed');
      } finally {
        await context.close();
      }
      assert.deepEqual(problems, []);
    });
  }

  test("the user's language setting wins over the browser's, and 'same as my browser' gives it back", async () => {
    const problems: string[] = [];
    const context = await newContext('en-GB');
    try {
      const page = await openPage(context, problems);
      page.setDefaultTimeout(10_000);
      await signIn(page, ADMIN);
      assert.equal(await page.locator('html').getAttribute('lang'), 'en');
      await page.goto(`${server.base}/ui/settings`);
      await page.locator('#field-locale').selectOption('ar');
      await Promise.all([
        page.waitForURL(/saved=1/),
        page.locator('form[action="/ui/settings"] button').click(),
      ]);
      const ar = createI18n('ar');
      await page.getByText(ar.t('settings.saved')).waitFor();
      assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
      await page.goto(`${server.base}/ui/links`);
      assert.equal(await page.locator('html').getAttribute('lang'), 'ar');
      assert.equal(await page.title(), ar.t('document.title', { title: ar.t('links.title') }));
      // Back to the browser's language.
      await page.goto(`${server.base}/ui/settings`);
      await page.locator('#field-locale').selectOption('browser');
      await Promise.all([
        page.waitForURL(/saved=1/),
        page.locator('form[action="/ui/settings"] button').click(),
      ]);
      assert.equal(await page.locator('html').getAttribute('lang'), 'en');
      const [row] = await server.h.db.sql`SELECT locale FROM users WHERE email = ${ADMIN.email}`;
      assert.equal(row!.locale, null);
    } finally {
      await context.close();
    }
    assert.deepEqual(problems, []);
  });

  test('in Arabic: an Arabic headline found by typing part of it, live checks, copy and history in Arabic', async () => {
    const ar = createI18n('ar');
    const problems: string[] = [];
    const context = await newContext('ar-EG');
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.base });
    try {
      const page = await openPage(context, problems);
      await signIn(page, ADMIN);
      // Typed without the teh marbuta's dots and with a bare alef: folding finds it.
      await page.getByRole('searchbox', { name: ar.t('links.search') }).fill('موازنه العام');
      await page.getByRole('searchbox', { name: ar.t('links.search') }).press('Enter');
      await page.waitForURL(/q=/);
      const rows = page.locator('.links-table tbody tr');
      assert.equal(await rows.count(), 1);
      assert.match((await rows.first().locator('.link-title').textContent()) ?? '', /موازنة العام المقبل/);
      assert.equal(
        await rows.first().locator('.url').textContent(),
        'news.example/2026/11/موازنة-القاهرة-المقبل/',
        'the row shows the decoded slug',
      );
      await shotAndCheck(page, 'ar', '20-arabic-search');

      // The copy button speaks Arabic and copies the short URL.
      await rows.first().locator('a.code-link').click();
      await page.getByRole('button', { name: new RegExp(ar.t('copy.link')) }).click();
      await page.getByText(ar.t('copy.copied')).waitFor();
      assert.equal(
        await page.evaluate(() => navigator.clipboard.readText()),
        `${server.base}/${codes.cairo}`,
      );
      // The history names the change in Arabic, with the editor's reason.
      await page.locator('.timeline-item', { hasText: 'تحديث العنوان بعد التصويت' }).waitFor();
      assert.ok(
        (await page.locator('.timeline-item').first().textContent())?.includes(
          ar.t('history.action.link.updated'),
        ),
      );

      // Live checks answer in Arabic.
      await page.goto(`${server.base}/ui/links/new`);
      await page.locator('#field-alias').fill(codes.cairo!);
      await page.locator('#field-alias-message', { hasText: 'مستخدم من قبل' }).waitFor();
      await page.locator('#field-url').fill('ftp://x.example/');
      await page.locator('#field-url-message', { hasText: 'http أو https' }).waitFor();
      await shotAndCheck(page, 'ar', '21-live-checks');

      // A link made in Arabic: title and tags separated by the Arabic comma.
      await page.locator('#field-url').fill(`https://news.example/${wp('رياضة')}/`);
      await page.locator('#field-alias').fill('');
      await page.locator('#field-title').fill('الأهلي يفوز بالدوري');
      await page.locator('#field-tags').fill('رياضة، كرة-القدم');
      await page.locator('form[action="/ui/links/new"] button[type=submit]').click();
      await page.waitForURL(/created=1/);
      await page.getByText(ar.t('notice.created.title')).waitFor();
      assert.deepEqual(await page.locator('.header-badges .tag').allTextContents(), ['رياضة', 'كرة-القدم']);
      await shotAndCheck(page, 'ar', '22-link-created');
    } finally {
      await context.close();
    }
    assert.deepEqual(problems, []);
  });
});
