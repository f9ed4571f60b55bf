// The editor UI's languages without a browser (in-process, like the forms test): how the language is
// chosen, the settings form, forms and live checks in Arabic, titles through the UI, readable URLs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import { createI18n } from '../../../lib/i18n/translator.ts';
import { createUiClient, type UiClient } from '../../helpers/ui_client.ts';

let h: Harness;
const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };
const AR = { 'Accept-Language': 'ar-EG,ar;q=0.9,en;q=0.5' };
const EN = { 'Accept-Language': 'en-GB,en;q=0.9' };
const ar = createI18n('ar');
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

/** A client whose every request carries the given browser languages. */
async function signedIn(
  headers: Record<string, string>,
): Promise<UiClient & { page(path: string): Promise<string> }> {
  const client = createUiClient(h.app as never);
  assert.equal((await client.login(ADMIN.email, ADMIN.password, headers)).status, 303);
  return Object.assign(client, {
    async page(path: string) {
      const res = await client.get(path, headers);
      assert.equal(res.status, 200, path);
      return res.text();
    },
  });
}
/** Visible text of a page: tags and the islands' JSON props removed. */
const textOf = (html: string) =>
  html
    .replace(/<script[\s\S]*?<\/script>/g, '')
    .replace(/<title>[\s\S]*?<\/title>/, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ');
/** Percent-encodes non-ASCII letters, as WordPress writes slugs. */
const wp = (s: string) =>
  s.replace(/[^\x21-\x7e]/gu, (ch) =>
    [...new TextEncoder().encode(ch)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
  );

describe('choosing the language', () => {
  test('before sign-in the browser decides (Accept-Language), else English; the page says which', async () => {
    for (const [header, lang, dir] of [
      ['ar-EG,ar;q=0.9', 'ar', 'rtl'],
      ['en-US', 'en', 'ltr'],
      ['de-DE,fr;q=0.8', 'en', 'ltr'],
      ['de, ar;q=0.3', 'ar', 'rtl'],
    ] as const) {
      const res = await h.app.request('/ui/login', { headers: { 'Accept-Language': header } });
      const html = await res.text();
      assert.match(html, new RegExp(`<html lang="${lang}" dir="${dir}">`), header);
      assert.equal(res.headers.get('Content-Language'), lang);
      assert.match(res.headers.get('Vary') ?? '', /Accept-Language/);
    }
    const none = await (await h.app.request('/ui/login')).text();
    assert.match(none, /<html lang="en" dir="ltr">/);
    const arabic = await (await h.app.request('/ui/login', { headers: AR })).text();
    assert.ok(arabic.includes(ar.t('login.title')));
    // Error pages too.
    const missing = await h.app.request('/ui/nowhere', { headers: AR });
    assert.equal(missing.status, 404);
    assert.ok((await missing.text()).includes(ar.t('error.pageNotFound.title')));
  });

  test('the settings form stores the language; it beats the browser; "browser" clears it', async () => {
    const c = await signedIn(AR);
    assert.match(await c.page('/ui/links'), /<html lang="ar" dir="rtl">/);
    // Without the form's CSRF token nothing changes.
    assert.equal((await c.post('/ui/settings', { locale: 'en' }, { csrf: null, headers: AR })).status, 403);
    await c.page('/ui/settings');
    let res = await c.post('/ui/settings', { locale: 'en' }, { headers: AR });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('Location'), '/ui/settings?saved=1');
    assert.match(
      await c.page('/ui/links'),
      /<html lang="en" dir="ltr">/,
      'the setting beats Accept-Language: ar',
    );
    await c.page('/ui/settings');
    for (const bad of ['fr', 'xx-yy', '', 'ar; DROP TABLE users']) {
      res = await c.post('/ui/settings', { locale: bad }, { headers: AR });
      assert.equal(res.status, 422, bad);
      await c.page('/ui/settings');
    }
    const [stored] = await h.db.sql`SELECT locale FROM users WHERE email = ${ADMIN.email}`;
    assert.equal(stored!.locale, 'en', 'refused values changed nothing');
    res = await c.post('/ui/settings', { locale: 'browser' }, { headers: AR });
    assert.equal(res.status, 303);
    assert.match(await c.page('/ui/links'), /<html lang="ar" dir="rtl">/);
    // The settings page needs a session.
    const anon = createUiClient(h.app as never);
    assert.equal((await anon.get('/ui/settings')).status, 303);
  });
});

describe('the Arabic UI', () => {
  test('no page shows a message key, an unfilled {argument} or a known English UI string', async () => {
    const c = await signedIn(AR);
    const made = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: `https://news.example/${wp('غزة')}/`, title: 'خبر', tags: ['أخبار'] },
    });
    const { code } = (await made.json()) as { code: string };
    const en = createI18n('en');
    for (const path of ['/ui/links', '/ui/links/new', `/ui/links/${code}`, '/ui/settings', '/ui/ops']) {
      const text = textOf(await c.page(path));
      assert.doesNotMatch(text, /\{[a-zA-Z]+\}/, `${path}: an unfilled argument`);
      assert.doesNotMatch(text, /\b(links|detail|ops|nav|form|problem)\.[a-zA-Z]+/, `${path}: a key`);
      for (const english of [
        en.t('links.title'),
        en.t('detail.save'),
        en.t('layout.logOut'),
        en.t('ops.users'),
        en.t('settings.language'),
      ]) {
        assert.ok(!text.includes(` ${english} `), `${path}: "${english}"`);
      }
    }
  });

  test('a refused new link shows its errors in Arabic, next to the fields, naming them', async () => {
    const c = await signedIn(AR);
    await c.page('/ui/links/new');
    const res = await c.post(
      '/ui/links/new',
      { url: 'ftp://x.example/', alias: 'ab', tags: 'سليم، وسم بمسافة', title: 'سطر\nثان' },
      { headers: AR },
    );
    assert.equal(res.status, 422);
    const html = await res.text();
    const text = textOf(html);
    assert.ok(text.includes(ar.t('form.fixThese', { count: 4 })), 'the summary counts four errors');
    for (const [field, problem] of [
      ['field.url', 'problem.httpOrHttps'],
      ['field.alias', 'problem.minChars'],
      ['field.title', 'problem.oneLine'],
    ] as const) {
      const sentence = ar.t('form.fieldSentence', { label: ar.t(field), problem: ar.t(problem, { min: 3 }) });
      assert.ok(text.includes(sentence), `${field}: ${sentence}`);
    }
    assert.ok(text.includes(ar.problem('tag 2 must not contain spaces or commas')));
    assert.doesNotMatch(text, /must |may contain|is taken/, 'no English problem left');
    // What the editor typed is kept.
    assert.match(html, /value="ftp:\/\/x.example\/"/);
  });

  test('live checks answer in Arabic', async () => {
    const c = await signedIn(AR);
    await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://news.example/a', alias: 'taken-one' },
    });
    const check = async (field: string, value: string) =>
      (await (await c.get(`/ui/api/check?field=${field}&value=${encodeURIComponent(value)}`, AR)).json()) as {
        ok: boolean;
        message: string;
      };
    assert.deepEqual(await check('alias', 'taken-one'), {
      ok: false,
      message: ar.t('check.taken', { url: 'sho.rt.test/taken-one' }),
    });
    assert.equal((await check('alias', 'free-one')).ok, true);
    const url = await check('url', 'javascript:alert(1)');
    assert.equal(url.ok, false);
    assert.match(url.message, /^\u2068رابط الوجهة\u2069: /);
    assert.equal((await check('url', 'https://news.example/ok')).message, ar.t('check.looksGood'));
  });
});

describe('titles and readable URLs in the UI', () => {
  test('create with a title and Arabic-comma tags; edit it; clear it; the history says so', async () => {
    const c = await signedIn(EN);
    await c.page('/ui/links/new');
    let res = await c.post(
      '/ui/links/new',
      { url: `https://news.example/2026/${wp('الحرب-في-غزة')}/`, title: '  عاجل: خبر  ', tags: 'سياسة، غزة' },
      { headers: EN },
    );
    assert.equal(res.status, 303, await res.text());
    const path = res.headers.get('Location')!.replace(/\?.*$/, '');
    const code = path.split('/').pop()!;
    let [row] = await h.db.sql`SELECT title, tags FROM links WHERE code = ${code}`;
    assert.equal(row!.title, 'عاجل: خبر');
    assert.deepEqual(row!.tags, ['سياسة', 'غزة']);

    // The list and the page show the readable URL; the stored one stays byte-exact.
    const list = await c.page('/ui/links');
    assert.ok(list.includes('news.example/2026/الحرب-في-غزة/'), 'decoded in the list');
    const page = await c.page(path);
    assert.ok(page.includes('https://news.example/2026/الحرب-في-غزة/'), 'decoded on the page');
    assert.ok(
      page.includes(`https://news.example/2026/${wp('الحرب-في-غزة')}/`),
      'exact URL kept (link, copy)',
    );
    assert.match(page, /<bdi dir="auto">عاجل: خبر<\/bdi>/);
    const redirect = await h.app.request(`/${code}`);
    assert.equal(redirect.headers.get('Location'), `https://news.example/2026/${wp('الحرب-في-غزة')}/`);

    // Edit the title (the form carries every field), then clear it.
    const version = /name="version" value="(\d+)"/.exec(page)![1]!;
    const form = (title: string, v: string) => ({
      url: `https://news.example/2026/${wp('الحرب-في-غزة')}/`,
      title,
      status: 'active',
      redirectStatus: '',
      expiresAt: '',
      expiresAtShown: '',
      expiredUrl: '',
      tags: 'سياسة، غزة',
      reason: 'عنوان أدق',
      version: v,
    });
    res = await c.post(`${path}/edit`, form('عاجل: خبر من غزة', version), { headers: EN });
    assert.equal(res.status, 303, await res.text());
    [row] = await h.db.sql`SELECT title, version FROM links WHERE code = ${code}`;
    assert.equal(row!.title, 'عاجل: خبر من غزة');
    await c.page(path);
    res = await c.post(`${path}/edit`, form('', String(row!.version)), { headers: EN });
    assert.equal(res.status, 303);
    [row] = await h.db.sql`SELECT title FROM links WHERE code = ${code}`;
    assert.equal(row!.title, null);
    const audit = await h.db.sql<{ before: { title?: string }; after: { title?: string } }[]>`
      SELECT before, after FROM audit_log WHERE code = ${code} AND action = 'link.updated' ORDER BY id`;
    assert.deepEqual(
      audit.map((a) => [a.before.title, a.after.title]),
      [
        ['عاجل: خبر', 'عاجل: خبر من غزة'],
        ['عاجل: خبر من غزة', null],
      ],
    );
    // A bad title is refused next to its field.
    await c.page(path);
    res = await c.post(`${path}/edit`, form('x'.repeat(501), String(row!.version ?? 1)), { headers: EN });
    assert.equal(res.status, 422);
    assert.match(textOf(await res.text()), /Title must be at most 500 characters\./);
  });

  test('an untouched title longer than the cap (as WordPress may send) does not block other edits', async () => {
    const c = await signedIn(EN);
    const long = 'ع'.repeat(600);
    await h.db.sql`
      INSERT INTO links (code, target_url, status, origin, owner, title, site, post_id)
      VALUES ('wp-long', 'https://news.example/long', 'active', 'wordpress', 'wordpress:news', ${long}, 'news', 99)`;
    const page = await c.page('/ui/links/wp-long');
    const version = /name="version" value="(\d+)"/.exec(page)![1]!;
    const res = await c.post(
      '/ui/links/wp-long/edit',
      {
        url: 'https://news.example/long',
        title: long,
        status: 'active',
        redirectStatus: '',
        expiresAt: '',
        expiresAtShown: '',
        expiredUrl: '',
        tags: 'kept',
        reason: 'tagging',
        version,
      },
      { headers: EN },
    );
    assert.equal(res.status, 303, await res.text());
    const [row] = await h.db.sql`SELECT title, tags FROM links WHERE code = 'wp-long'`;
    assert.equal(row!.title, long);
    assert.deepEqual(row!.tags, ['kept']);
  });

  test('the list search finds a title typed without diacritics, through the UI', async () => {
    const c = await signedIn(AR);
    await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://news.example/x1', title: 'مُؤْتَمَر صَحَفِيّ لِلرَّئِيس' },
    });
    const html = await c.page(`/ui/links?q=${encodeURIComponent('مؤتمر صحفي')}`);
    assert.equal((html.match(/<tr>/g) ?? []).length - 1, 1, 'one row (plus the header row)');
    assert.ok(html.includes('مُؤْتَمَر صَحَفِيّ لِلرَّئِيس'));
  });
});
