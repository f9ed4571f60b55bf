import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, createLinkCode, type Harness } from '../../devkit/harness/harness.ts';
import type { Config } from '../../lib/shared/config.ts';
import { createApp } from '../../routes/app.ts';
import { rewireWebDeps } from '../../server/web_deps.ts';

// Every row of API.md's short-host table, in-process (see redirect_open_redirect.test.ts for real HTTP).
let h: Harness;
before(async () => {
  h = await createHarness({
    env: { UTM_PARAMS: 'utm_source=short&utm_medium=social', METRICS_TOKEN: 'redirect-test-metrics' },
  });
});
after(async () => {
  await h.close();
});

const create = (json: Record<string, unknown>) => createLinkCode(h, json);

/** Puts a link into a state only workflows reach (expired, blocked, a safety verdict), then refreshes caches. */
async function setLink(code: string, values: Record<string, unknown>) {
  const sql = h.db.sql;
  await sql`UPDATE links SET ${sql(values as Record<string, string>)} WHERE code = ${code}`;
  await h.deps.resolver.refresh(code);
}

/** The same web tier with other redirect settings (the same dependencies, another parsed configuration). */
function appWith(redirect: Partial<Config['redirect']>) {
  return createApp(
    rewireWebDeps({ ...h.deps, config: { ...h.config, redirect: { ...h.config.redirect, ...redirect } } }),
  );
}

function headersOf(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (name !== 'x-request-id') out[name] = value;
  });
  return out;
}

/** GET and HEAD of a path: HEAD must equal GET without the body (same status, same headers). */
async function getAndHead(path: string, app = h.app) {
  const get = await app.request(path);
  const head = await app.request(path, { method: 'HEAD' });
  const body = await get.text();
  assert.equal(head.status, get.status, `HEAD status of ${path}`);
  assert.deepEqual(headersOf(head), headersOf(get), `HEAD headers of ${path}`);
  assert.equal(await head.text(), '', `HEAD body of ${path}`);
  assert.equal(get.headers.get('X-Robots-Tag'), 'noindex', `X-Robots-Tag of ${path}`);
  return { status: get.status, headers: get.headers, body };
}

describe('active links', () => {
  test('301 by default with the configured Cache-Control; UTM markers added without clobbering', async () => {
    const code = await create({ url: 'https://example.com/story?utm_source=newsletter' });
    const res = await getAndHead(`/${code}`);
    assert.equal(res.status, 301);
    assert.equal(res.headers.get('Cache-Control'), 'private, max-age=90');
    assert.equal(
      res.headers.get('Location'),
      'https://example.com/story?utm_source=newsletter&utm_medium=social',
    );
    assert.equal(res.body, '');
  });

  test('REDIRECT_STATUS sets the deployment default; a per-link status overrides it', async () => {
    const plain = await create({ url: 'https://example.com/plain' });
    for (const status of [301, 302, 307, 308] as const) {
      const app = appWith({ status });
      assert.equal((await getAndHead(`/${plain}`, app)).status, status);
    }
    for (const redirectStatus of [301, 302, 307, 308]) {
      const code = await create({ url: `https://example.com/per-link-${redirectStatus}`, redirectStatus });
      assert.equal((await getAndHead(`/${code}`)).status, redirectStatus);
      assert.equal((await getAndHead(`/${code}`, appWith({ status: 302 }))).status, redirectStatus);
    }
  });

  test('REDIRECT_CACHE_CONTROL is sent as configured; a link expiring soon is never cached past expiry', async () => {
    const code = await create({ url: 'https://example.com/cc' });
    const app = appWith({ cacheControl: 'public, max-age=3600, stale-if-error=600' });
    const res = await getAndHead(`/${code}`, app);
    assert.equal(res.headers.get('Cache-Control'), 'public, max-age=3600, stale-if-error=600');

    const soon = await create({
      url: 'https://example.com/soon',
      expiresAt: new Date(Date.now() + 30_000).toISOString(),
    });
    const capped = await getAndHead(`/${soon}`, app);
    assert.equal(capped.status, 301);
    const maxAge = Number(/max-age=(\d+)/.exec(capped.headers.get('Cache-Control') ?? '')?.[1]);
    assert.ok(maxAge <= 30 && maxAge >= 28, capped.headers.get('Cache-Control') ?? '');
    assert.match(capped.headers.get('Cache-Control') ?? '', /^private,/);
  });

  test('a request with a query is never shared-cacheable (a CDN purge of /{code} cannot reach /{code}?qr=1)', async () => {
    const code = await create({ url: 'https://example.com/printed-qr' });
    const app = appWith({ cacheControl: 'public, max-age=60, s-maxage=86400' });
    const plainFirst = await getAndHead(`/${code}`, app);
    assert.equal(plainFirst.headers.get('Cache-Control'), 'public, max-age=60, s-maxage=86400');
    // The second request is answered from the memo of the first (same record object from the LRU).
    for (const query of ['?qr=1', '?utm_source=print', '?qr=1&x=2']) {
      const res = await getAndHead(`/${code}${query}`, app);
      assert.equal(res.status, 301, query);
      assert.equal(res.headers.get('Location'), plainFirst.headers.get('Location'), query);
      assert.equal(res.headers.get('Cache-Control'), 'private, max-age=60', query);
    }
    const plainAgain = await getAndHead(`/${code}`, app);
    assert.equal(plainAgain.headers.get('Cache-Control'), 'public, max-age=60, s-maxage=86400');

    // The other order: the query variant first, then the plain path.
    const other = await create({ url: 'https://example.com/printed-qr-2' });
    assert.equal(
      (await getAndHead(`/${other}?qr=1`, app)).headers.get('Cache-Control'),
      'private, max-age=60',
    );
    assert.equal(
      (await getAndHead(`/${other}`, app)).headers.get('Cache-Control'),
      'public, max-age=60, s-maxage=86400',
    );

    // Shared-cacheable negative answers too: a 404 or 410 cached for /{code}?qr=1 would outlive the code's purge.
    const missing = await getAndHead('/Zq9xYw7?qr=1', app);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('Cache-Control'), 'private, max-age=60');
    assert.equal((await getAndHead('/Zq9xYw7', app)).headers.get('Cache-Control'), 'public, max-age=60');
    await setLink(other, { status: 'gone' });
    const gone = await getAndHead(`/${other}?qr=1`, app);
    assert.equal(gone.status, 410);
    assert.equal(gone.headers.get('Cache-Control'), 'private, max-age=300');
    // Settings that are not shared-cacheable already are sent as configured.
    const third = await create({ url: 'https://example.com/printed-qr-3' });
    for (const cacheControl of ['no-store', 'private, max-age=90', 'no-cache']) {
      const res = await getAndHead(`/${third}?qr=1`, appWith({ cacheControl }));
      assert.equal(res.headers.get('Cache-Control'), cacheControl);
    }
  });

  test('Location is byte-exact for percent-encoded targets and encodes non-Latin ones exactly once', async () => {
    const app = appWith({ utmParams: undefined });
    const cases: [string, string][] = [
      // WordPress-style permalinks keep every escape and their case exactly.
      [
        'https://news.example/2024/05/%e2%80%9cquoted%e2%80%9d-caf%C3%A9/?p=%2Fa%20b&x=1+2#sec-%C3%A9',
        'https://news.example/2024/05/%e2%80%9cquoted%e2%80%9d-caf%C3%A9/?p=%2Fa%20b&x=1+2#sec-%C3%A9',
      ],
      // An IDN host becomes punycode; non-ASCII path, query and fragment become UTF-8 escapes.
      [
        'https://例え.jp/パス/記事?q=日本#見出し',
        'https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9/%E8%A8%98%E4%BA%8B?q=%E6%97%A5%E6%9C%AC#%E8%A6%8B%E5%87%BA%E3%81%97',
      ],
      // Cyrillic path beside an existing escape: the escape is kept as is, never double-encoded.
      [
        'https://example.com/новости/%D0%B0?x=ü',
        'https://example.com/%D0%BD%D0%BE%D0%B2%D0%BE%D1%81%D1%82%D0%B8/%D0%B0?x=%C3%BC',
      ],
    ];
    for (const [target, location] of cases) {
      const code = await create({ url: target });
      const res = await getAndHead(`/${code}`, app);
      assert.equal(res.status, 301, target);
      assert.equal(res.headers.get('Location'), location, target);
    }
  });

  test('UTM markers go before the fragment, after an existing query, and never replace a present key', async () => {
    const cases: [string, string][] = [
      ['https://example.com/a#top', 'https://example.com/a?utm_source=short&utm_medium=social#top'],
      ['https://example.com/a?x=1#top', 'https://example.com/a?x=1&utm_source=short&utm_medium=social#top'],
      ['https://example.com/a?', 'https://example.com/a?utm_source=short&utm_medium=social'],
      [
        'https://example.com/a?utm_medium=email&utm_source=rss',
        'https://example.com/a?utm_medium=email&utm_source=rss',
      ],
      [
        'https://example.com/a?UTM_SOURCE=x',
        'https://example.com/a?UTM_SOURCE=x&utm_source=short&utm_medium=social',
      ],
    ];
    for (const [target, location] of cases) {
      const code = await create({ url: target });
      assert.equal((await getAndHead(`/${code}`)).headers.get('Location'), location, target);
    }
  });
});

describe('other states', () => {
  test('expired: 302 to expiredUrl when set, else a 410 page; expiry by time or by status', async () => {
    const withFallback = await create({
      url: 'https://example.com/offer',
      expiredUrl: 'https://example.com/offer-ended',
    });
    await setLink(withFallback, { expires_at: new Date(Date.now() - 60_000) });
    const fallback = await getAndHead(`/${withFallback}`);
    assert.equal(fallback.status, 302);
    assert.equal(fallback.headers.get('Location'), 'https://example.com/offer-ended');
    assert.equal(fallback.headers.get('Cache-Control'), 'no-store');

    const bare = await create({ url: 'https://example.com/offer2' });
    await setLink(bare, { status: 'expired' });
    const page = await getAndHead(`/${bare}`);
    assert.equal(page.status, 410);
    assert.equal(page.headers.get('Location'), null);
    assert.match(page.headers.get('Content-Type') ?? '', /^text\/html/);
    assert.match(page.body, /Link expired/);
  });

  test('gone: 410 after DELETE and after PATCH status gone', async () => {
    const deleted = await create({ url: 'https://example.com/deleted' });
    assert.equal((await h.api(`/api/v1/links/${deleted}`, { method: 'DELETE' })).status, 204);
    const unpublished = await create({ url: 'https://example.com/unpublished' });
    const patched = await h.api(`/api/v1/links/${unpublished}`, {
      method: 'PATCH',
      json: { status: 'gone' },
    });
    assert.equal(patched.status, 200, await patched.text());
    for (const code of [deleted, unpublished]) {
      const res = await getAndHead(`/${code}`);
      assert.equal(res.status, 410, code);
      assert.equal(res.headers.get('Location'), null);
      assert.match(res.body, /Link removed/);
    }
  });

  test('blocked: 451, by status or by safety verdict, never naming the destination', async () => {
    const byStatus = await create({ url: 'https://example.com/bad-1' });
    await setLink(byStatus, { status: 'blocked' });
    const bySafety = await create({ url: 'https://example.com/bad-2' });
    await setLink(bySafety, { safety: 'blocked' });
    for (const code of [byStatus, bySafety]) {
      const res = await getAndHead(`/${code}`);
      assert.equal(res.status, 451, code);
      assert.equal(res.headers.get('Location'), null);
      assert.equal(res.headers.get('Cache-Control'), 'no-store');
      assert.match(res.body, /Link blocked/);
      assert.doesNotMatch(res.body, /example\.com\/bad/);
    }
  });

  test('warn: 200 interstitial naming the destination (UTM included) with a continue link and a report form', async () => {
    const code = await create({ url: 'https://example.com/odd?a=1&b=<2>' });
    await setLink(code, { safety: 'warn' });
    const res = await getAndHead(`/${code}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('Location'), null);
    assert.equal(res.headers.get('Cache-Control'), 'no-store');
    assert.match(res.headers.get('Content-Type') ?? '', /^text\/html/);
    // Stored in canonical form (`<` and `>` percent-encoded, as WHATWG serialises a query), then HTML-escaped.
    const destination =
      'https://example.com/odd?a=1&amp;b=%3C2%3E&amp;utm_source=short&amp;utm_medium=social';
    assert.ok(res.body.includes(`<code>${destination}</code>`), res.body);
    assert.ok(res.body.includes(`href="${destination}"`), res.body);
    assert.match(res.body, /Continue to the site/);
    assert.ok(res.body.includes(`action="/${code}/report"`), 'report form');
    assert.doesNotMatch(res.body, /<2/, 'the destination is escaped');
  });

  test('404 for unknown, pending and impossible codes, as HTML, with X-Robots-Tag', async () => {
    const pending = await create({ url: 'https://example.com/pending' });
    await setLink(pending, { status: 'pending' });
    const paths = [
      '/Zz9Zz9',
      `/${pending}`,
      '/a.b',
      `/${'a'.repeat(65)}`,
      '/_private',
      '/api',
      '/healthz.',
      '/%2F%2Fevil.example',
    ];
    for (const path of paths) {
      const res = await getAndHead(path);
      assert.equal(res.status, 404, path);
      assert.equal(res.headers.get('Location'), null, path);
      assert.match(res.headers.get('Content-Type') ?? '', /^text\/html/, path);
      assert.match(res.body, /Link not found/, path);
    }
    // The longest possible code is looked up (and unknown); one more character is impossible.
    assert.equal((await getAndHead(`/${'a'.repeat(64)}`)).status, 404);
  });
});

describe('GET /{code}+ preview', () => {
  test('shows destination, status and safety; no redirect, no click', async () => {
    const code = await create({ url: 'https://example.com/preview-me' });
    const before = h.deps.clicks.pendingKeys;
    const res = await getAndHead(`/${code}+`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('Location'), null);
    assert.equal(res.headers.get('Cache-Control'), 'no-store');
    assert.match(res.headers.get('Content-Type') ?? '', /^text\/html/);
    assert.ok(
      res.body.includes('<code>https://example.com/preview-me?utm_source=short&amp;utm_medium=social</code>'),
    );
    assert.match(res.body, /<dd>active<\/dd>/);
    assert.match(res.body, /Redirects to the destination \(HTTP 301\)/);
    assert.match(res.body, /Not checked yet|No problems found/);
    assert.ok(res.body.includes(`http://sho.rt.test/${code}`));
    assert.ok(res.body.includes(`action="/${code}/report"`));
    assert.equal(h.deps.clicks.pendingKeys, before, 'a preview is not a click');
  });

  test('shows warn, expired, gone and blocked links without sending anyone anywhere', async () => {
    const warn = await create({ url: 'https://example.com/p-warn' });
    await setLink(warn, { safety: 'warn' });
    const blocked = await create({ url: 'https://example.com/p-blocked' });
    await setLink(blocked, { safety: 'blocked' });
    const gone = await create({ url: 'https://example.com/p-gone' });
    await setLink(gone, { status: 'gone' });
    const expired = await create({
      url: 'https://example.com/p-exp',
      expiredUrl: 'https://example.com/ended',
    });
    await setLink(expired, { status: 'expired' });

    const w = await getAndHead(`/${warn}+`);
    assert.equal(w.status, 200);
    assert.match(w.body, /warn: Readers are warned/);
    assert.match(w.body, /p-warn/);
    const b = await getAndHead(`/${blocked}+`);
    assert.equal(b.status, 200);
    assert.match(b.body, /blocked: Blocked as unsafe/);
    assert.doesNotMatch(b.body, /p-blocked/, 'a blocked destination is not shown');
    const g = await getAndHead(`/${gone}+`);
    assert.match(g.body, /<dd>gone<\/dd>/);
    assert.doesNotMatch(g.body, /p-gone/);
    const e = await getAndHead(`/${expired}+`);
    assert.match(e.body, /<dd>expired<\/dd>/);
    assert.match(e.body, /https:\/\/example.com\/ended/);
    for (const res of [w, b, g, e]) assert.equal(res.headers.get('Location'), null);
  });

  test('404 for an unknown or impossible code with +', async () => {
    for (const path of ['/Zz9Zz9+', '/+', '/a.b+', '/abc++']) {
      const res = await getAndHead(path);
      assert.equal(res.status, 404, path);
    }
  });
});

describe('the rest of the short host', () => {
  test('/ goes to the UI when hosts are shared', async () => {
    const res = await h.app.request('/');
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('Location'), '/ui');
  });

  test('healthz is ok with Postgres up; metrics count redirects by outcome', async () => {
    const health = await h.app.request('/healthz');
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { status: string }).status, 'ok');
    await h.app.request('/Zz9Zz9');
    const metrics = await (
      await h.app.request('/metrics', { headers: { Authorization: 'Bearer redirect-test-metrics' } })
    ).text();
    assert.match(metrics, /lifeline_redirects_total\{outcome="not_found"\} \d+/);
    assert.match(metrics, /lifeline_redirects_total\{outcome="preview"\} \d+/);
  });

  test('paths that are not a code (several segments) are 404s that search engines are told not to index', async () => {
    for (const path of ['/a/b', '/abc/def/ghi', '/abc/']) {
      const res = await h.app.request(path);
      assert.equal(res.status, 404, path);
      assert.equal(res.headers.get('X-Robots-Tag'), 'noindex', path);
    }
  });

  test('every response carries a request id', async () => {
    const res = await h.app.request('/healthz');
    assert.match(res.headers.get('X-Request-Id') ?? '', /.+/);
  });
});
