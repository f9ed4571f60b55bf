import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import { sha256Hex } from '../../../lib/shared/crypto.ts';
import { createApp } from '../../../routes/app.ts';
import { createUiClient, type UiClient } from '../../helpers/ui_client.ts';

let h: Harness;
let admin: UiClient;
const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };
before(async () => {
  h = await createHarness();
  admin = createUiClient(h.app as never);
  assert.equal((await admin.login(ADMIN.email, ADMIN.password)).status, 303);
});
after(async () => {
  await h.close();
});

const linkCount = async () => (await h.db.sql`SELECT count(*)::int AS n FROM links`)[0]!.n as number;
/** The text of the element with this id in a page (tags stripped). */
function textOf(html: string, id: string): string {
  const m = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</`).exec(html);
  return m ? m[1]!.replace(/<[^>]+>/g, '') : '';
}

describe('signing in and out', () => {
  test('pages need a session; login sends you back where you were going (inside the UI only)', async () => {
    const anon = createUiClient(h.app as never);
    const res = await anon.get('/ui/links?tag=x');
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('Location'), `/ui/login?next=${encodeURIComponent('/ui/links?tag=x')}`);
    assert.equal((await anon.get('/ui')).headers.get('Location'), '/ui/links');
    for (const [next, expected] of [
      ['/ui/links/abc', '/ui/links/abc'],
      ['//evil.example/ui', '/ui/links'],
      ['https://evil.example/', '/ui/links'],
      ['/ui\\@evil.example', '/ui/links'],
      ['/uix', '/ui/links'],
    ]) {
      const c = createUiClient(h.app as never);
      await c.get('/ui/login');
      const r = await c.post('/ui/login', { ...ADMIN, next: next! });
      assert.equal(r.headers.get('Location'), expected, `next=${next}`);
    }
  });

  test('a wrong password is a 401 page that does not say which part was wrong', async () => {
    const c = createUiClient(h.app as never);
    for (const [email, password] of [
      [ADMIN.email, 'wrong password'],
      ['nobody@example.test', 'wrong password'],
    ]) {
      const res = await c.login(email!, password!);
      assert.equal(res.status, 401);
      assert.match(await res.text(), /The email or password is not right/);
    }
    assert.equal(c.cookies.has('lifeline_session'), false);
  });

  test('the session cookie is HttpOnly and SameSite; only a hash of it is stored; logout ends it', async () => {
    const c = createUiClient(h.app as never);
    await c.get('/ui/login');
    const res = await c.post('/ui/login', ADMIN);
    const cookie = res.headers.getSetCookie().find((s) => s.startsWith('lifeline_session='))!;
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.match(cookie, /Path=\//);
    assert.doesNotMatch(cookie, /Secure/, 'plain http in tests');
    const id = c.cookies.get('lifeline_session')!;
    const stored = await h.db
      .sql`SELECT 1 FROM sessions WHERE id_hash = ${await sha256Hex(`lifeline-session:${id}`)}`;
    assert.equal(stored.length, 1);
    assert.equal((await h.db.sql`SELECT 1 FROM sessions WHERE id_hash = ${id}`).length, 0);

    assert.equal((await c.get('/ui/links')).status, 200);
    const out = await c.post('/ui/logout', {});
    assert.equal(out.headers.get('Location'), '/ui/login?signedOut=1');
    assert.equal(
      (await h.db.sql`SELECT 1 FROM sessions WHERE id_hash = ${await sha256Hex(`lifeline-session:${id}`)}`)
        .length,
      0,
    );
    // The old cookie, replayed, no longer works.
    const replay = await h.app.request('/ui/links', { headers: { Cookie: `lifeline_session=${id}` } });
    assert.equal(replay.status, 303);
  });

  test('on https the cookie is __Host- prefixed and Secure, with HSTS', async () => {
    const httpsApp = createApp({
      ...h.deps,
      config: { ...h.config, appBaseUrl: 'https://links.example.test' },
    });
    const c = createUiClient(httpsApp as never);
    await c.get('/ui/login');
    const res = await c.post('/ui/login', ADMIN, { headers: { Origin: 'https://links.example.test' } });
    assert.equal(res.status, 303);
    const cookie = res.headers.getSetCookie().find((s) => s.startsWith('__Host-lifeline_session='))!;
    assert.match(cookie, /Secure/);
    assert.match(cookie, /HttpOnly/);
    assert.match(res.headers.get('Strict-Transport-Security') ?? '', /max-age=31536000/);
  });
});

describe('security headers and CSRF', () => {
  test('every UI page has a strict CSP and the other security headers, and is never cached', async () => {
    for (const path of ['/ui/login', '/ui/links', '/ui/links/new', '/ui/ops', '/ui/nowhere']) {
      const res = await admin.get(path);
      const csp = res.headers.get('Content-Security-Policy') ?? '';
      assert.match(csp, /default-src 'none'/, path);
      assert.match(csp, /script-src 'self'(;|$)/, path);
      assert.match(csp, /style-src 'self'(;|$)/, path);
      assert.match(csp, /frame-ancestors 'none'/, path);
      assert.match(csp, /form-action 'self'/, path);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, path);
      assert.equal(res.headers.get('X-Frame-Options'), 'DENY', path);
      assert.equal(res.headers.get('X-Content-Type-Options'), 'nosniff', path);
      assert.equal(res.headers.get('Referrer-Policy'), 'same-origin', path);
      assert.equal(res.headers.get('Cache-Control'), 'no-store', path);
      // No inline script that would execute: only the islands' JSON data blocks.
      const html = await res.text();
      for (const tag of html.match(/<script\b[^>]*>/g) ?? []) {
        assert.match(tag, /type="application\/json"|src="\/static\/islands\.js"/, `${path}: ${tag}`);
      }
    }
  });

  test('form posts without the CSRF token, with a wrong one, or from another origin are refused with 403', async () => {
    const before = await linkCount();
    const form = { url: 'https://example.com/csrf' };
    const refused = [
      await admin.post('/ui/links/new', form, { csrf: null }),
      await admin.post('/ui/links/new', form, { csrf: 'x'.repeat(32) }),
      await admin.post('/ui/links/new', form, { headers: { Origin: 'https://evil.example' } }),
      await admin.post('/ui/links/new', form, { headers: { 'Sec-Fetch-Site': 'cross-site' } }),
      await admin.post('/ui/logout', {}, { csrf: null }),
    ];
    for (const res of refused) {
      assert.equal(res.status, 403);
      assert.match(await res.text(), /could not be accepted/);
    }
    const json = await h.app.request('/ui/links/new', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Cookie: `lifeline_session=${admin.cookies.get('lifeline_session')}`,
      },
      body: JSON.stringify(form),
    });
    assert.equal(json.status, 403);
    assert.equal(await linkCount(), before);
    // Still signed in: the refused logout did nothing.
    assert.equal((await admin.get('/ui/links')).status, 200);
    // The login form needs its own token too.
    const anon = createUiClient(h.app as never);
    assert.equal((await anon.post('/ui/login', ADMIN, { csrf: null })).status, 403);
  });
});

describe('links through forms, without JavaScript', () => {
  test('create: errors come back next to their fields with the values kept; success opens the link', async () => {
    await admin.get('/ui/links/new');
    const bad = await admin.post('/ui/links/new', {
      url: 'javascript:alert(1)',
      alias: 'a',
      tags: 'ok, has space',
    });
    assert.equal(bad.status, 422);
    const html = await bad.text();
    assert.match(textOf(html, 'field-url-message'), /must use http or https/);
    assert.match(textOf(html, 'field-alias-message'), /at least 3/);
    assert.match(textOf(html, 'field-tags-message'), /Tag 2 must not contain spaces/);
    assert.match(html, /value="javascript:alert\(1\)"/);

    await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://example.com/x', alias: 'ui-taken' },
    });
    const taken = await admin.post('/ui/links/new', { url: 'https://example.com/mine', alias: 'ui-taken' });
    assert.equal(taken.status, 409);
    assert.match(textOf(await taken.text(), 'field-alias-message'), /is taken/);

    const ok = await admin.post('/ui/links/new', {
      url: 'https://example.com/from-the-form',
      alias: 'from-form',
      tags: 'politics, city',
      redirectStatus: '302',
    });
    assert.equal(ok.status, 303);
    assert.equal(ok.headers.get('Location'), '/ui/links/from-form?created=1');
    const page = await (await admin.get('/ui/links/from-form?created=1')).text();
    assert.match(page, /Short link created/);
    const row = (
      await h.db.sql`SELECT origin, owner, tags, redirect_status FROM links WHERE code = 'from-form'`
    )[0]!;
    assert.equal(row.origin, 'ui');
    assert.match(row.owner, /^user:\d+$/);
    assert.deepEqual(row.tags, ['politics', 'city']);
    assert.equal(row.redirect_status, 302);
    const audit = await h.db.sql`SELECT actor FROM audit_log WHERE code = 'from-form'`;
    assert.equal(audit[0]!.actor, 'user:admin@example.test');

    // The same link again (no alias): you get the one you have.
    await admin.get('/ui/links/new');
    const againA = await admin.post('/ui/links/new', { url: 'https://example.com/dedupe-ui' });
    const againB = await admin.post('/ui/links/new', { url: 'https://example.com/dedupe-ui' });
    assert.match(againA.headers.get('Location')!, /\?created=1$/);
    assert.equal(
      againB.headers.get('Location'),
      againA.headers.get('Location')!.replace('created', 'existing'),
    );
  });

  test('expiry is read in the editor’s time zone', async () => {
    const c = createUiClient(h.app as never);
    await c.login(ADMIN.email, ADMIN.password);
    c.cookies.set('lifeline_tz', 'Europe/Paris');
    await c.get('/ui/links/new');
    const res = await c.post('/ui/links/new', {
      url: 'https://example.com/paris',
      alias: 'paris-time',
      expiresAt: '2030-06-01T12:00',
    });
    assert.equal(res.status, 303);
    const row = (await h.db.sql`SELECT expires_at FROM links WHERE code = 'paris-time'`)[0]!;
    assert.equal((row.expires_at as Date).toISOString(), '2030-06-01T10:00:00.000Z');
    const page = await (await c.get('/ui/links/paris-time')).text();
    assert.match(page, /value="2030-06-01T12:00"/);
    assert.match(page, /Europe\/Paris \(UTC\+0[12]:00\)/);
  });

  test('edit needs a reason, is audited with it, and a stale form is a 409 that keeps your edits', async () => {
    await admin.get('/ui/links/from-form');
    const noReason = await admin.post('/ui/links/from-form/edit', {
      url: 'https://example.com/moved',
      status: 'active',
      tags: 'politics, city',
      version: '1',
    });
    assert.equal(noReason.status, 422);
    assert.match(textOf(await noReason.text(), 'field-reason-message'), /Say why/);

    await admin.get('/ui/links/from-form');
    const page = await (await admin.get('/ui/links/from-form')).text();
    const version = /name="version" value="(\d+)"/.exec(page)![1]!;
    const saved = await admin.post('/ui/links/from-form/edit', {
      url: 'https://example.com/moved',
      status: 'active',
      redirectStatus: '302',
      tags: 'politics, city',
      reason: 'The story moved',
      version,
      expiresAt: '',
      expiresAtShown: '',
      expiredUrl: '',
    });
    assert.equal(saved.status, 303);
    assert.equal(saved.headers.get('Location'), '/ui/links/from-form?saved=1');
    assert.equal((await h.app.request('/from-form')).headers.get('Location'), 'https://example.com/moved');
    const entry = (
      await h.db
        .sql`SELECT actor, action, reason FROM audit_log WHERE code = 'from-form' ORDER BY id DESC LIMIT 1`
    )[0]!;
    assert.deepEqual(
      { ...entry },
      { actor: 'user:admin@example.test', action: 'link.retargeted', reason: 'The story moved' },
    );
    const detail = await (await admin.get('/ui/links/from-form')).text();
    assert.match(detail, /Destination changed/);
    assert.match(detail, /The story moved/);

    // Someone else saved in between: the old version number is refused, the typed values survive.
    const stale = await admin.post('/ui/links/from-form/edit', {
      url: 'https://example.com/my-edit',
      status: 'active',
      tags: '',
      reason: 'mine',
      version,
    });
    assert.equal(stale.status, 409);
    const staleHtml = await stale.text();
    assert.match(staleHtml, /Someone changed this link while you were editing/);
    assert.match(staleHtml, /value="https:\/\/example.com\/my-edit"/);
  });

  test('delete asks for the code, then the link answers 410', async () => {
    await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://example.com/bye', alias: 'ui-bye' },
    });
    await admin.get('/ui/links/ui-bye');
    const wrong = await admin.post('/ui/links/ui-bye/delete', { confirm: 'ui-by', reason: 'x' });
    assert.equal(wrong.status, 422);
    assert.equal((await h.app.request('/ui-bye')).status, 301);
    await admin.get('/ui/links/ui-bye');
    const done = await admin.post('/ui/links/ui-bye/delete', { confirm: 'ui-bye', reason: 'duplicate' });
    assert.equal(done.headers.get('Location'), '/ui/links?deleted=ui-bye');
    assert.match(await (await admin.get('/ui/links?deleted=ui-bye')).text(), /Deleted ui-bye/);
    assert.equal((await h.app.request('/ui-bye')).status, 410);
    assert.equal((await admin.get('/ui/links/ui-bye')).status, 404);
  });

  test('the list searches, filters and pages like the API', async () => {
    for (let i = 0; i < 55; i++) {
      await h.api('/api/v1/links', {
        method: 'POST',
        json: { url: `https://example.com/many/${i}`, tags: ['many'] },
      });
    }
    const first = await (await admin.get('/ui/links?tag=many')).text();
    assert.equal((first.match(/class="code-link"/g) ?? []).length, 50);
    const next = /href="(\/ui\/links\?[^"]*cursor=[^"]+)" rel="next"/.exec(first)![1]!.replace(/&amp;/g, '&');
    const second = await (await admin.get(next)).text();
    assert.equal((second.match(/class="code-link"/g) ?? []).length, 5);
    assert.match(second, /rel="prev"/);
    const search = await (await admin.get('/ui/links?q=many%2F54')).text();
    assert.equal((search.match(/class="code-link"/g) ?? []).length, 1);
    const bad = await admin.get('/ui/links?status=sleeping');
    assert.equal(bad.status, 422);
    assert.match(await bad.text(), /Some filters were not understood/);
  });

  test('the live check answers for URL and alias, only to signed-in users', async () => {
    const check = async (c: UiClient, field: string, value: string) =>
      (await c.get(`/ui/api/check?field=${field}&value=${encodeURIComponent(value)}`)).json() as Promise<{
        ok: boolean;
        message: string;
      }>;
    assert.deepEqual(await check(admin, 'alias', 'ui-taken'), {
      ok: false,
      message: 'sho.rt.test/ui-taken is taken.',
    });
    assert.deepEqual(await check(admin, 'alias', 'ui-free-one'), {
      ok: true,
      message: 'sho.rt.test/ui-free-one is available.',
    });
    assert.equal((await check(admin, 'alias', 'api')).ok, false);
    assert.equal((await check(admin, 'url', 'https://example.com/')).ok, true);
    assert.match((await check(admin, 'url', 'http://sho.rt.test/abc')).message, /short domain/);
    const anon = await h.app.request('/ui/api/check?field=alias&value=x');
    assert.equal(anon.status, 401);
  });

  test('QR codes come as SVG and PNG downloads', async () => {
    const svg = await admin.get('/ui/links/from-form/qr.svg');
    assert.equal(svg.headers.get('Content-Type'), 'image/svg+xml');
    assert.match(await svg.text(), /^<svg/);
    const png = await admin.get('/ui/links/from-form/qr.png?download=1');
    assert.equal(png.headers.get('Content-Type'), 'image/png');
    assert.equal(png.headers.get('Content-Disposition'), 'attachment; filename="from-form-qr.png"');
    assert.deepEqual([...new Uint8Array(await png.arrayBuffer()).slice(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    assert.equal((await h.app.request('/ui/links/from-form/qr.png')).status, 303, 'signed-in users only');
  });
});

describe('roles and the operations page', () => {
  test('admins add users; editors cannot open operations; a disabled user is signed out', async () => {
    await admin.get('/ui/ops');
    const created = await admin.post('/ui/ops/users', {
      email: 'Editor@Example.test',
      name: 'Ed',
      role: 'editor',
      password: '',
    });
    assert.equal(created.status, 201);
    const html = await created.text();
    const password = /<code class="secret">([^<]+)<\/code>/.exec(html)![1]!;
    const editor = createUiClient(h.app as never);
    assert.equal((await editor.login('editor@example.test', password)).status, 303);
    assert.equal((await editor.get('/ui/ops')).status, 403);
    assert.equal((await editor.get('/ui/links/new')).status, 200);
    assert.doesNotMatch(await (await editor.get('/ui/links')).text(), /href="\/ui\/ops"/);

    const dup = await admin.post('/ui/ops/users', {
      email: 'editor@example.test',
      name: '',
      role: 'editor',
      password: '',
    });
    assert.equal(dup.status, 409);

    const id = (await h.db.sql`SELECT id FROM users WHERE email = 'editor@example.test'`)[0]!.id;
    await admin.get('/ui/ops');
    assert.equal((await admin.post(`/ui/ops/users/${id}/disable`, {})).status, 303);
    assert.equal((await editor.get('/ui/links')).status, 303, 'signed out everywhere');
    assert.equal((await createUiClient(h.app as never).login('editor@example.test', password)).status, 401);

    // An admin cannot lock themselves out.
    const self = (await h.db.sql`SELECT id FROM users WHERE email = ${ADMIN.email}`)[0]!.id;
    await admin.get('/ui/ops');
    const refused = await admin.post(`/ui/ops/users/${self}/disable`, {});
    assert.equal(refused.status, 422);
    assert.match(await refused.text(), /cannot disable or demote yourself/);
  });

  test('admins create API keys (shown once) and revoke them', async () => {
    await admin.get('/ui/ops');
    const res = await admin.post('/ui/ops/keys', {
      name: 'Newsletter',
      scopes: ['links:read', 'links:write'],
    });
    assert.equal(res.status, 201);
    const key = /<code class="secret">(ll_[^<]+)<\/code>/.exec(await res.text())![1]!;
    assert.equal(
      (await h.app.request('/api/v1/links', { headers: { Authorization: `Bearer ${key}` } })).status,
      200,
    );
    const page = await (await admin.get('/ui/ops')).text();
    assert.ok(!page.includes(key), 'the key is shown only once');
    const id = (await h.db.sql`SELECT id FROM api_keys WHERE name = 'Newsletter'`)[0]!.id;
    assert.equal((await admin.post(`/ui/ops/keys/${id}/revoke`, {})).status, 303);
    assert.equal(
      (await h.app.request('/api/v1/links', { headers: { Authorization: `Bearer ${key}` } })).status,
      401,
    );
    const none = await admin.post('/ui/ops/keys', { name: 'x' });
    assert.equal(none.status, 422);
    assert.match(await none.text(), /choose at least one scope/);
  });
});
