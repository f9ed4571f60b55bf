import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { type Browser, chromium, type Page } from 'playwright-core';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { type EntryProcess, harnessWebEnv, startEntry } from '../../devkit/harness/entry_process.ts';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { waitForPostLink } from '../../devkit/harness/wordpress_events.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { startWordPress, type WordPressBlog, type WordPressSite } from '../helpers/wordpress_site.ts';

// A real WordPress multisite network (Debian's package, a subdirectory network on PHP's built-in server and
// MariaDB) with the plugin network-activated, talking to a real Lifeline: each blog is its own Lifeline site, a
// blog added later is set up at once, and a blog whose language is Arabic shows the plugin's settings page and its
// block editor panel in Arabic (WordPress's own Arabic language pack from Debian's wordpress-l10n, and the
// plugin's languages/).

const execFileAsync = promisify(execFile);
const E2E_DIR = join(ROOT, 'tests', 'e2e', 'wordpress');
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

let fake: BitlyFake;
let h: Harness;
let wp: WordPressSite;
let sport: WordPressBlog;
let lifelineUrl: string;
let web: EntryProcess | undefined;
let worker: { stop(): Promise<void> } | undefined;

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  lifelineUrl = `http://127.0.0.1:${await getFreePort()}`;
  h = await createHarness({
    env: { ...fake.env(), SHORT_BASE_URL: lifelineUrl, SAFETY_TRUSTED_HOSTS: '127.0.0.1' },
  });
  web = startEntry('main.ts', {
    keepChars: 20_000,
    env: { ...harnessWebEnv(h, lifelineUrl), SAFETY_TRUSTED_HOSTS: '127.0.0.1', ...fake.env() },
  });
  await web.waitForOutput('web listening', { timeoutMs: 60_000, what: "Lifeline's web process" });
  worker = await h.startWorker({
    vendors: { bitly: { timeoutMs: 2_000 }, retryBaseMs: 100, retryMaxMs: 1_000 },
  });
  wp = await startWordPress({
    lifelineUrl,
    secret: h.webhookSecret,
    apiKey: h.apiKey,
    multisite: { blogs: [{ path: 'sport', locale: 'ar' }] },
  });
  sport = wp.blogs[0]!;
});
after(async () => {
  await web?.stop();
  await worker?.stop();
  await wp?.stop();
  await h?.close();
  await fake?.stop();
});

interface WpPost {
  id: number;
  link: string;
}

async function publish(rest: WordPressSite['rest'], title: string): Promise<WpPost> {
  const res = await rest<WpPost>('/wp/v2/posts', {
    method: 'POST',
    json: { title, content: '<p>نص الخبر.</p>', status: 'publish' },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

async function php(script: string, args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('php', [join(E2E_DIR, script), ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      LIFELINE_E2E_WP_HOST: new URL(wp.baseUrl).host,
      LIFELINE_E2E_WP_CONFIG: wp.configName,
    },
    encoding: 'utf8',
  });
  return stdout;
}

async function logIn(browser: Browser, locale: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, locale });
  await page.goto(`${wp.baseUrl}/wp-login.php`);
  await page.fill('#user_login', 'admin');
  await page.fill('#user_pass', wp.adminPassword);
  await Promise.all([page.waitForURL(/wp-admin/), page.click('#wp-submit')]);
  return page;
}

describe('the plugin on a multisite network', () => {
  test('network activation sets up every blog, and a blog made later; each blog publishes to its own Lifeline site', async () => {
    // Network activation made each blog's outbox table and scheduled its flush.
    const tables = wp.mysql("SHOW TABLES LIKE 'wp\\_%lifeline\\_outbox'").map((r) => r[0]);
    assert.deepEqual(tables.sort(), ['wp_2_lifeline_outbox', 'wp_lifeline_outbox']);
    const active = wp.mysql("SELECT meta_value FROM wp_sitemeta WHERE meta_key = 'active_sitewide_plugins'");
    assert.match(active[0]![0]!, /lifeline\/lifeline\.php/, 'network-active');

    // Each blog sends its own site id: the main site its host, the sport blog host and path. Both blogs number
    // their posts from the same start, so the same post ID on two blogs must be two links.
    const main = await publish(wp.rest, 'خبر الموقع الرئيسي');
    const onSport = await publish(sport.rest, 'خبر الرياضة');
    assert.match(onSport.link, /\/sport\//);
    const mainLink = await waitForPostLink(h, '127.0.0.1', main.id, (l) => l.status === 'active');
    const sportLink = await waitForPostLink(h, '127.0.0.1-sport', onSport.id, (l) => l.status === 'active');
    assert.equal(mainLink.url, main.link);
    assert.equal(sportLink.url, onSport.link);
    assert.notEqual(mainLink.code, sportLink.code);
    if (main.id === onSport.id) {
      process.stderr.write(`  the same post ID ${main.id} on both blogs: two links\n`);
    }
    // Each blog's short link is its own (wp_get_shortlink through the editor's endpoint).
    const shown = await sport.rest<{ shortUrl: string }>(`/lifeline/v1/posts/${onSport.id}/shortlink`);
    assert.equal(shown.body.shortUrl, sportLink.shortUrl);
    assert.deepEqual(wp.mysql('SELECT COUNT(*) FROM wp_2_lifeline_outbox'), [['0']], 'delivered');

    // A blog added after the network activation is set up at once (wp_initialize_site) and publishes under its
    // own id.
    const { id } = JSON.parse((await php('add_blog.php', ['culture'])).trim().split('\n').at(-1)!) as {
      id: number;
    };
    assert.deepEqual(wp.mysql(`SHOW TABLES LIKE 'wp\\_${id}\\_lifeline\\_outbox'`), [
      [`wp_${id}_lifeline_outbox`],
    ]);
    const cultureUrl = `${wp.baseUrl}/culture`;
    const res = await wp.restOn<WpPost>(cultureUrl, '/wp/v2/posts', {
      method: 'POST',
      json: { title: 'Culture', status: 'publish' },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const culture = res.body;
    const cultureLink = await waitForPostLink(
      h,
      '127.0.0.1-culture',
      culture.id,
      (l) => l.status === 'active',
    );
    assert.equal(cultureLink.url, culture.link);
  });

  test('an Arabic blog shows the settings page and the block editor panel in Arabic, without deprecated editor APIs (Chromium)', async () => {
    const post = await publish(sport.rest, 'مقال للمحرر الرياضي');
    const link = await waitForPostLink(h, '127.0.0.1-sport', post.id, (l) => l.status === 'active');
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    try {
      const page = await logIn(browser, 'ar');
      const warnings: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'warning' || m.type() === 'error') warnings.push(m.text());
      });
      page.on('pageerror', (e) => warnings.push(e.message));

      // Settings → Lifeline on the Arabic blog: WordPress's admin in Arabic (Debian's language pack), the
      // plugin's strings in Arabic (its .mo), right to left.
      await page.goto(`${sport.url}/wp-admin/options-general.php?page=lifeline`);
      assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
      assert.equal(await page.locator('.wrap h1').first().textContent(), 'روابط Lifeline القصيرة');
      const html = await page.content();
      for (const text of [
        'اختبار الاتصال',
        'تعبئة الأرشيف',
        'معرّف الموقع',
        'مضبوط بثابت في wp-config.php.',
      ]) {
        assert.ok(html.includes(text), `the settings page shows "${text}"`);
      }
      // WordPress's own strings, from Debian's language pack: "Dashboard" in the menu, "Log Out" in the admin bar.
      for (const text of ['الرئيسية', 'تسجيل الخروج']) {
        assert.ok(html.includes(text), `WordPress's own "${text}" is in Arabic`);
      }
      assert.ok(!html.includes('Test connection'), 'no English left for this string');
      // The site id field shows the blog's default, never another blog's.
      assert.equal(await page.locator('#lifeline_site_id').inputValue(), '');
      await Promise.all([
        page.waitForURL(/page=lifeline/),
        page.getByRole('button', { name: 'اختبار الاتصال' }).click(),
      ]);
      assert.match((await page.locator('.notice-info').textContent()) ?? '', /سرّ الويب هوك: مقبول\./);

      // The block editor: the panel registers through wp.editor where it exists, reads the post through the
      // core/editor store, and its strings come from languages/lifeline-ar-lifeline-editor.json.
      await page.goto(`${sport.url}/wp-admin/post.php?post=${post.id}&action=edit`);
      const toggle = page.locator('button.components-panel__body-toggle', {
        hasText: 'رابط Lifeline القصير',
      });
      await toggle.waitFor({ timeout: 60_000 });
      const welcome = page.locator('.edit-post-welcome-guide');
      if (await welcome.isVisible()) await page.keyboard.press('Escape');
      await welcome.waitFor({ state: 'hidden' });
      if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
      const shownLink = page.locator('.lifeline-shortlink a');
      await shownLink.waitFor({ timeout: 30_000 });
      assert.equal(await shownLink.textContent(), link.shortUrl);
      assert.equal(await page.locator('.lifeline-shortlink button').textContent(), 'نسخ');
      const deprecated = warnings.filter((w) => /lifeline|editPost|PluginDocumentSettingPanel/i.test(w));
      assert.deepEqual(deprecated, [], 'no deprecation warning or error from the panel');
    } finally {
      await browser.close();
    }
  });
});
