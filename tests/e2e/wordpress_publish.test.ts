import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { type EntryProcess, harnessWebEnv, startEntry } from '../../devkit/harness/entry_process.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { getPostLink, waitForPostLink } from '../../devkit/harness/wordpress_events.ts';
import { createI18n } from '../../lib/i18n/translator.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { checkLayout } from '../helpers/layout_probe.ts';
import { startWordPress, type WordPressSite } from '../helpers/wordpress_site.ts';

// A real WordPress (Debian's package, PHP's built-in server, MariaDB) with integrations/wordpress/lifeline
// installed, talking to a real Lifeline web process (main.ts) and worker, with Bitly as an HTTP fake.

const SITE = 'e2e-news';
const E2E_DIR = join(ROOT, 'tests', 'e2e', 'wordpress');
// Real WP-CLI when a phar is at hand (LIFELINE_WP_CLI_PHAR or .cache/wp-cli.phar), else the plugin's harness.
const PHAR = process.env.LIFELINE_WP_CLI_PHAR ?? join(ROOT, '.cache', 'wp-cli.phar');
const REAL_WP_CLI = PHAR !== 'none' && existsSync(PHAR);
const execFileAsync = promisify(execFile);
const TITLE = 'عاجل: خبر من القاهرة';

let fake: BitlyFake;
let h: Harness;
let wp: WordPressSite;
let lifelineUrl: string;
let web: EntryProcess | undefined;
let worker: { stop(): Promise<void> } | undefined;
const startedAt = Date.now();

async function startLifeline() {
  web = startEntry('main.ts', {
    keepChars: 20_000,
    env: {
      ...harnessWebEnv(h, lifelineUrl),
      // The newsroom's own WordPress (here on a loopback address) is trusted by the safety scan.
      SAFETY_TRUSTED_HOSTS: '127.0.0.1',
      ...fake.env(),
    },
  });
  await web.waitForOutput('web listening', { timeoutMs: 60_000, what: "Lifeline's web process" });
  worker = await h.startWorker({
    vendors: { bitly: { timeoutMs: 2_000 }, retryBaseMs: 100, retryMaxMs: 1_000 },
  });
}

async function stopLifeline() {
  await web?.stop();
  web = undefined;
  await worker?.stop();
  worker = undefined;
}

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  lifelineUrl = `http://127.0.0.1:${await getFreePort()}`;
  // The newsroom's own WordPress is trusted by the safety scan (here it lives on a loopback address).
  h = await createHarness({
    env: { ...fake.env(), SHORT_BASE_URL: lifelineUrl, SAFETY_TRUSTED_HOSTS: '127.0.0.1' },
  });
  await startLifeline();
  wp = await startWordPress({ lifelineUrl, siteId: SITE, secret: h.webhookSecret, apiKey: h.apiKey });
});
after(async () => {
  await stopLifeline();
  await wp?.stop();
  await h?.close();
  await fake?.stop();
  process.stderr.write(
    `  e2e run time: ${((Date.now() - startedAt) / 1000).toFixed(1)} s (setup included)\n`,
  );
});

interface WpPost {
  id: number;
  link: string;
  slug: string;
  status: string;
}

async function createPost(title: string): Promise<WpPost> {
  const res = await wp.rest<WpPost>('/wp/v2/posts', {
    method: 'POST',
    json: { title, content: '<p>نص الخبر.</p>', status: 'publish' },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

describe('WordPress → Lifeline end to end', () => {
  test('publish an Arabic post, change its slug, trash it; an outage in between loses nothing', async () => {
    // 1. Publish: the plugin signs and sends post.published; the link is minted, synced to Bitly with the
    //    same back-half, and redirects byte-exactly to WordPress's percent-encoded permalink, which loads.
    const post = await createPost(TITLE);
    assert.match(
      post.link,
      /%d8%b9%d8%a7%d8%ac%d9%84/,
      'WordPress emits the slug percent-encoded, lowercase',
    );
    const link = await waitForPostLink(
      h,
      SITE,
      post.id,
      (l) => l.status === 'active' && l.vendors[0]?.state === 'synced',
    );
    assert.equal(link.url, post.link);
    assert.equal(link.shortUrl, `${lifelineUrl}/${link.code}`);
    const onBitly = fake.linkByKeyword(link.code);
    assert.ok(onBitly, 'Bitly holds the same back-half');
    assert.equal(onBitly.longUrl, post.link);

    const redirect = await fetch(`${lifelineUrl}/${link.code}`, { redirect: 'manual' });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('Location'), post.link, 'byte-exact Location');
    const page = await fetch(redirect.headers.get('Location')!);
    const html = await page.text();
    assert.equal(page.status, 200);
    assert.ok(html.includes(TITLE), 'the permalink loads the post');

    // wp_get_shortlink() is the Lifeline link (<link rel="shortlink"> in the page head), and the editor's
    // endpoint shows it.
    assert.ok(html.includes(`<link rel='shortlink' href='${lifelineUrl}/${link.code}' />`), 'shortlink tag');
    const editor = await wp.rest<{ shortUrl: string; state: string }>(
      `/lifeline/v1/posts/${post.id}/shortlink`,
    );
    assert.deepEqual(editor.body, { shortUrl: link.shortUrl, state: 'active', queued: 0 });

    // 2. Change the slug: post.updated retargets the link everywhere, same code.
    const renamed = await wp.rest<WpPost>(`/wp/v2/posts/${post.id}`, {
      method: 'POST',
      json: { slug: 'cairo-breaking' },
    });
    assert.equal(renamed.status, 200);
    assert.notEqual(renamed.body.link, post.link);
    const moved = await waitForPostLink(h, SITE, post.id, (l) => l.url === renamed.body.link);
    assert.equal(moved.code, link.code);
    await eventually(
      async () => (fake.linkByKeyword(link.code)?.longUrl === renamed.body.link ? true : undefined),
      {
        what: 'Bitly to follow the new permalink',
      },
    );
    const followed = await fetch(`${lifelineUrl}/${link.code}`, { redirect: 'manual' });
    assert.equal(followed.headers.get('Location'), renamed.body.link);
    assert.equal((await fetch(renamed.body.link)).status, 200);

    // 3. Trash it: post.unpublished → 410, archived on Bitly.
    const trashed = await wp.rest<WpPost>(`/wp/v2/posts/${post.id}`, { method: 'DELETE' });
    assert.equal(trashed.status, 200);
    assert.equal(trashed.body.status, 'trash');
    await waitForPostLink(h, SITE, post.id, (l) => l.status === 'gone');
    await eventually(async () => {
      const res = await fetch(`${lifelineUrl}/${link.code}`, { redirect: 'manual' });
      await res.arrayBuffer();
      return res.status === 410 ? true : undefined;
    });
    await eventually(async () => (fake.linkByKeyword(link.code)?.archived ? true : undefined), {
      what: 'Bitly to archive the copy',
    });

    // 4. Lifeline down: publishing still works in WordPress, and the event waits in the plugin's outbox.
    await stopLifeline();
    const offline = await createPost('نشر أثناء انقطاع الخدمة');
    const queued = wp.mysql(
      `SELECT event, attempts, last_error FROM wp_lifeline_outbox WHERE post_id = ${offline.id}`,
    );
    assert.equal(queued.length, 1);
    assert.equal(queued[0]![0], 'post.published');
    assert.match(queued[0]![2] ?? '', /connect/i);
    assert.equal(await getPostLink(h, SITE, offline.id), null);

    // 5. Lifeline back: the next WP-Cron run delivers the queued event and the post gets its link.
    await startLifeline();
    const delivered = await eventually(
      async () => {
        await wp.runCron();
        const link = await getPostLink(h, SITE, offline.id);
        return link?.status === 'active' ? link : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the queued publish to arrive after WP-Cron' },
    );
    assert.equal(delivered.url, offline.link);
    assert.deepEqual(wp.mysql('SELECT COUNT(*) FROM wp_lifeline_outbox'), [['0']]);
    const back = await fetch(`${lifelineUrl}/${delivered.code}`, { redirect: 'manual' });
    assert.equal(back.headers.get('Location'), offline.link);
  });

  test('an Arabic headline is found in the editor UI by typing part of it in Arabic; its row shows the decoded slug; the page is right-to-left without overlap (Chromium)', async () => {
    const headline = 'وزير المالية يعلن موازنة العام المقبل في القاهرة';
    const post = await createPost(headline);
    // WordPress writes the slug percent-encoded; the link keeps it byte-exact.
    assert.match(post.link, /%d9%88%d8%b2%d9%8a%d8%b1/);
    const link = await waitForPostLink(h, SITE, post.id, (l) => l.status === 'active');
    assert.equal(link.title, headline, 'the post title is the link title');
    const decodedPath = decodeURIComponent(new URL(post.link).pathname);
    const ar = createI18n('ar');
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      // An editor whose browser asks for Arabic, on the real web process.
      const context = await browser.newContext({
        locale: 'ar-EG',
        timezoneId: 'Africa/Cairo',
        viewport: { width: 1280, height: 900 },
      });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${lifelineUrl}/ui/login`);
      await page.locator('#field-email').fill('admin@example.test');
      await page.locator('#field-password').fill('correct horse battery');
      await Promise.all([
        page.waitForURL(/\/ui\/links/),
        page.locator('form[action="/ui/login"] button').click(),
      ]);
      assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');

      // Part of the headline, typed the way people type: without the teh marbuta's dots or an alef's hamza.
      const search = page.getByRole('searchbox', { name: ar.t('links.search') });
      await search.fill('موازنه العام المقبل');
      await Promise.all([page.waitForURL(/q=/), search.press('Enter')]);
      const rows = page.locator('.links-table tbody tr');
      assert.equal(await rows.count(), 1, 'exactly the post');
      const row = rows.first();
      assert.equal(
        await row.locator('a.code-link').textContent(),
        `${lifelineUrl.replace(/^https?:\/\//, '')}/${link.code}`,
      );
      assert.equal(await row.locator('.link-title').textContent(), headline);
      const shown = await row.locator('.url').textContent();
      assert.equal(shown, `${new URL(post.link).host}${decodedPath}`, 'the row shows the decoded slug');
      assert.doesNotMatch(shown ?? '', /%[0-9a-f]{2}/i);
      mkdirSync(join(ROOT, 'test-results', 'e2e'), { recursive: true });
      await page.screenshot({ path: join(ROOT, 'test-results', 'e2e', 'arabic-search.png'), fullPage: true });
      await checkLayout(page, 'Arabic search for a WordPress headline', { dir: 'rtl', lang: 'ar' });

      // Its page: the readable destination, the title, right to left; the redirect is still byte-exact.
      await row.locator('a.code-link').click();
      await page.waitForURL(new RegExp(`/ui/links/${link.code}$`));
      assert.equal(
        await page.locator('.destination .url').textContent(),
        `${new URL(post.link).origin}${decodedPath}`,
      );
      await page.screenshot({ path: join(ROOT, 'test-results', 'e2e', 'arabic-link.png'), fullPage: true });
      await checkLayout(page, 'the Arabic link page', { dir: 'rtl', lang: 'ar' });
      const redirect = await fetch(`${lifelineUrl}/${link.code}`, { redirect: 'manual' });
      assert.equal(redirect.headers.get('Location'), post.link);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });

  test("the block editor shows the post's short link; the settings page tests the connection (Chromium)", async () => {
    const post = await createPost('مقال للمحرر');
    const link = await waitForPostLink(h, SITE, post.id, (l) => l.status === 'active');
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      // wp.deprecated() warns on the console: the panel must use no deprecated editor API (and log no error).
      const warnings: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'warning' || m.type() === 'error') warnings.push(m.text());
      });
      page.on('pageerror', (e) => warnings.push(e.message));
      await page.goto(`${wp.baseUrl}/wp-login.php`);
      await page.fill('#user_login', 'admin');
      await page.fill('#user_pass', wp.adminPassword);
      await Promise.all([page.waitForURL(/wp-admin/), page.click('#wp-submit')]);
      await page.goto(`${wp.baseUrl}/wp-admin/post.php?post=${post.id}&action=edit`);
      // The panel's toggle, in the document sidebar (CSS, not roles: the welcome guide hides the rest from ARIA).
      const toggle = page.locator('button.components-panel__body-toggle', { hasText: 'Lifeline short link' });
      await toggle.waitFor({ timeout: 60_000 });
      const welcome = page.locator('.edit-post-welcome-guide');
      if (await welcome.isVisible()) await page.keyboard.press('Escape');
      await welcome.waitFor({ state: 'hidden' });
      if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
      const shown = page.locator('.lifeline-shortlink a');
      await shown.waitFor({ timeout: 30_000 });
      assert.equal(await shown.textContent(), link.shortUrl);
      assert.equal(await shown.getAttribute('href'), link.shortUrl);
      assert.deepEqual(
        warnings.filter((w) => /lifeline|editPost|PluginDocumentSettingPanel/i.test(w)),
        [],
        'no deprecation warning or error from the panel',
      );
      mkdirSync(join(ROOT, '.cache'), { recursive: true });
      await page.screenshot({ path: join(ROOT, '.cache', 'e2e-wordpress-editor.png') });

      // Settings → Lifeline: secrets are never printed back, and "Test connection" proves both credentials.
      await page.goto(`${wp.baseUrl}/wp-admin/options-general.php?page=lifeline`);
      const settingsHtml = await page.content();
      assert.ok(settingsHtml.includes(lifelineUrl), 'the Lifeline URL is shown');
      assert.ok(!settingsHtml.includes(h.webhookSecret), 'the webhook secret is not printed');
      assert.ok(!settingsHtml.includes(h.apiKey), 'the API key is not printed');
      await Promise.all([
        page.waitForURL(/page=lifeline/),
        page.getByRole('button', { name: 'Test connection' }).click(),
      ]);
      const notice = await page.locator('.notice-info').textContent();
      assert.match(notice ?? '', /Webhook secret: accepted\. API key: accepted\./);
    } finally {
      await browser.close();
    }
  });

  test('adopting an existing archive: a draft never mints, a scheduled post mints when it goes live, `wp lifeline backfill` gives every old post one code (Bitly identical, a known back-half adopted), a permalink-structure change is healed by reconciliation, trash → 410 → restore → the same code', async () => {
    const started = Date.now();
    // A draft: no event, no link, not even after WP-Cron.
    const draft = await wp.rest<WpPost>('/wp/v2/posts', {
      method: 'POST',
      json: { title: 'Draft, never public', status: 'draft' },
    });
    assert.equal(draft.status, 201);
    await wp.runCron();

    // A scheduled post: nothing while scheduled; its link once WP-Cron publishes it.
    const when = new Date(Date.now() + 120_000).toISOString().slice(0, 19);
    const scheduled = await wp.rest<WpPost>('/wp/v2/posts', {
      method: 'POST',
      json: { title: 'Embargoed story', status: 'future', date_gmt: when },
    });
    assert.equal(scheduled.body.status, 'future');
    await wp.runCron();
    assert.equal(await getPostLink(h, SITE, scheduled.body.id), null, 'no link while scheduled');
    await php('make_due.php', [String(scheduled.body.id)]);
    const live = await eventually(
      async () => {
        await wp.runCron();
        return (await getPostLink(h, SITE, scheduled.body.id))?.status === 'active'
          ? getPostLink(h, SITE, scheduled.body.id)
          : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the scheduled post to get its link when it goes live' },
    );
    const livePost = await wp.rest<WpPost>(`/wp/v2/posts/${scheduled.body.id}`);
    assert.equal(live!.url, livePost.body.link);

    // An archive written before the plugin: 20 posts (one of them a draft), one with a back-half it already has
    // on our Bitly domain, one with a bit.ly link (not ours: a new code).
    const seeded = JSON.parse((await php('seed_archive.php', ['20'])).trim().split('\n').at(-1)!) as {
      published: { id: number; permalink: string }[];
      draft: number[];
      knownShort: Record<string, string>;
    };
    const legacy = Object.entries(seeded.knownShort).find(([, url]) => url.startsWith('https://sho.rt/'))!;
    const legacyCode = legacy[1].slice('https://sho.rt/'.length);
    fake.seed({ keyword: legacyCode, longUrl: 'https://old-cms.example/story' });
    const out = await wpCli(['lifeline', 'backfill', '--batch-size=7']);
    assert.equal(out.code, 0, `${out.stdout}\n${out.stderr}`);
    assert.match(
      out.stdout,
      /Success: Backfill finished: sent \d+ post\(s\) in \d+ batch\(es\); minted \d+, kept \d+, adopted 1, failed 0\./,
    );
    for (const post of seeded.published) {
      const link = await waitForPostLink(
        h,
        SITE,
        post.id,
        (l) => l.status === 'active' && l.vendors[0]?.state === 'synced',
        {
          timeoutMs: 60_000,
        },
      );
      assert.equal(link.url, post.permalink);
      assert.equal(fake.linkByKeyword(link.code)?.longUrl, post.permalink, `Bitly holds ${link.code}`);
      if (String(post.id) === legacy[0])
        assert.equal(link.code, legacyCode, 'the known back-half is adopted');
    }
    for (const id of [draft.body.id, ...seeded.draft]) {
      assert.equal(await getPostLink(h, SITE, id), null, `draft ${id} never mints`);
    }
    const again = await wpCli(['lifeline', 'backfill', '--restart']);
    assert.match(again.stdout, /minted 0, kept \d+, adopted 0, failed 0/, 'a second run changes nothing');

    // The permalink structure changes: one site event, the WordPress reconciliation retargets every link.
    const sample = seeded.published[3]!;
    const before = (await getPostLink(h, SITE, sample.id))!;
    await php('set_permalinks.php', ['/%year%/%postname%/']);
    const moved = await waitForPostLink(h, SITE, sample.id, (l) => l.url !== sample.permalink, {
      timeoutMs: 60_000,
    });
    assert.equal(moved.code, before.code);
    assert.match(moved.url, /\/\d{4}\/[^/]+\/$/);
    const healed = await fetch(`${lifelineUrl}/${moved.code}`, { redirect: 'manual' });
    assert.equal(healed.headers.get('Location'), moved.url);
    assert.equal((await fetch(moved.url)).status, 200, 'the new permalink loads');
    await eventually(async () => (fake.linkByKeyword(moved.code)?.longUrl === moved.url ? true : undefined), {
      timeoutMs: 30_000,
      what: 'Bitly to follow the healed permalink',
    });

    // Trash → 410 → restore and publish again → the same code, answering again.
    const post = await createPost('Restored story');
    const link = await waitForPostLink(h, SITE, post.id, (l) => l.status === 'active');
    await wp.rest(`/wp/v2/posts/${post.id}`, { method: 'DELETE' });
    await eventually(async () => {
      const res = await fetch(`${lifelineUrl}/${link.code}`, { redirect: 'manual' });
      await res.arrayBuffer();
      return res.status === 410 ? true : undefined;
    });
    await php('untrash.php', [String(post.id)]);
    const republished = await wp.rest<WpPost>(`/wp/v2/posts/${post.id}`, {
      method: 'POST',
      json: { status: 'publish' },
    });
    assert.equal(republished.body.status, 'publish');
    const back = await waitForPostLink(h, SITE, post.id, (l) => l.status === 'active');
    assert.equal(back.code, link.code, 'the same code');
    const answer = await fetch(`${lifelineUrl}/${link.code}`, { redirect: 'manual' });
    assert.equal(answer.status, 301);
    assert.equal(answer.headers.get('Location'), republished.body.link);
    process.stderr.write(`  adoption e2e: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  });
});

/** The env a CLI process needs to load this run's WordPress (WP-CLI, the harness, the test helpers). */
function cliEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    LIFELINE_E2E_WP_HOST: new URL(wp.baseUrl).host,
    LIFELINE_E2E_WP_CONFIG: wp.configName,
    WORDPRESS_CONFIG: wp.configName,
  };
}

/** Runs a helper of tests/e2e/wordpress/ (asynchronously: it may call Lifeline in this very process). */
async function php(script: string, args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('php', [join(E2E_DIR, script), ...args], {
    cwd: ROOT,
    env: cliEnv(),
    encoding: 'utf8',
  });
  return stdout;
}

/** `wp …` through real WP-CLI (or the plugin's harness). */
async function wpCli(args: string[]) {
  const argv = REAL_WP_CLI
    ? [PHAR, '--allow-root', '--path=/usr/share/wordpress', `--url=${wp.baseUrl}`, ...args]
    : [join(E2E_DIR, 'wp_cli_harness.php'), ...args];
  try {
    const { stdout, stderr } = await execFileAsync('php', argv, {
      cwd: ROOT,
      env: cliEnv(),
      encoding: 'utf8',
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
