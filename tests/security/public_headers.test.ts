import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { createApp } from '../../routes/app.ts';

// The short host's pages sent no frame-ancestors / X-Frame-Options and no nosniff; redirects
// sent `Referrer-Policy: unsafe-url`; no HSTS over https; /metrics was public on every host.

const METRICS_TOKEN = 'public-headers-metrics-token';
let h: Harness;
let open: Harness;

before(async () => {
  h = await createHarness({
    env: { SHORT_BASE_URL: 'https://sho.rt', METRICS_TOKEN, TRUSTED_CLIENT_IP_HEADER: 'X-Test-Client-IP' },
  });
  open = await createHarness();
});
after(async () => {
  await h?.close();
  await open?.close();
});

async function create(url: string): Promise<string> {
  const res = await h.api('/api/v1/links', { method: 'POST', json: { url } });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { code: string }).code;
}

const get = (path: string, init: RequestInit = {}) =>
  h.app.request(path, { ...init, headers: { Host: 'sho.rt', ...(init.headers as Record<string, string>) } });

function assertPageHeaders(res: Response, what: string) {
  assert.match(res.headers.get('Content-Security-Policy') ?? '', /frame-ancestors 'none'/, what);
  assert.equal(res.headers.get('X-Frame-Options'), 'DENY', what);
  assert.equal(res.headers.get('X-Content-Type-Options'), 'nosniff', what);
  assert.match(res.headers.get('Strict-Transport-Security') ?? '', /max-age=\d+/, what);
}

describe('item 6: public pages and redirects', () => {
  test('a redirect sends strict-origin-when-cross-origin (not unsafe-url) and HSTS over https', async () => {
    const code = await create('https://example.com/story');
    const res = await get(`/${code}`);
    assert.equal(res.status, 301);
    assert.equal(res.headers.get('Referrer-Policy'), 'strict-origin-when-cross-origin');
    assert.match(res.headers.get('Strict-Transport-Security') ?? '', /max-age=31536000/);
  });

  test('status pages, the warning page, the preview and the report thank-you page cannot be framed or sniffed', async () => {
    const warn = await create('https://example.com/sketchy');
    await h.db.sql`UPDATE links SET safety = 'warn' WHERE code = ${warn}`;
    await h.deps.resolver.refresh(warn);
    const gone = await create('https://example.com/gone');
    await h.db.sql`UPDATE links SET status = 'gone' WHERE code = ${gone}`;
    await h.deps.resolver.refresh(gone);
    const blocked = await create('https://example.com/blocked');
    await h.db.sql`UPDATE links SET safety = 'blocked' WHERE code = ${blocked}`;
    await h.deps.resolver.refresh(blocked);
    for (const [path, status] of [
      ['/NoSuchCode1', 404],
      [`/${warn}`, 200],
      [`/${warn}+`, 200],
      [`/${gone}`, 410],
      [`/${blocked}`, 451],
    ] as const) {
      for (const method of ['GET', 'HEAD']) {
        const res = await get(path, { method });
        assert.equal(res.status, status, `${method} ${path}`);
        assertPageHeaders(res, `${method} ${path}`);
      }
    }
    const thanks = await get(`/${warn}/report`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Test-Client-IP': '192.0.2.1' },
      body: 'reason=Other',
    });
    assert.equal(thanks.status, 202);
    assertPageHeaders(thanks, 'report thank-you page');
  });

  test('over plain http there is no HSTS (it would be ignored, and would pin a host that has no TLS)', async () => {
    const res = await open.app.request('/NoSuchCode1');
    assert.equal(res.headers.get('Strict-Transport-Security'), null);
    assert.equal(res.headers.get('X-Frame-Options'), 'DENY');
  });
});

describe('item 6: /metrics', () => {
  test('needs the bearer METRICS_TOKEN', async () => {
    assert.equal((await get('/metrics')).status, 401);
    assert.equal(
      (await get('/metrics', { headers: { Authorization: 'Bearer wrong-token-wrong' } })).status,
      401,
    );
    const ok = await get('/metrics', { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(ok.status, 200);
    assert.match(await ok.text(), /lifeline_redirects_total/);
  });

  test('without METRICS_TOKEN it is not served at all', async () => {
    assert.equal((await open.app.request('/metrics')).status, 404);
  });

  test('with a separate short host, only the app host serves it', async () => {
    const config = { ...h.config, appBaseUrl: 'https://app.example', splitHosts: true };
    const { rewireWebDeps } = await import('../../server/web_deps.ts');
    const app = createApp(rewireWebDeps({ ...h.deps, config }));
    const auth = { Authorization: `Bearer ${METRICS_TOKEN}` };
    assert.equal((await app.request('/metrics', { headers: { Host: 'sho.rt', ...auth } })).status, 404);
    assert.equal((await app.request('/metrics', { headers: { Host: 'app.example', ...auth } })).status, 200);
  });
});
