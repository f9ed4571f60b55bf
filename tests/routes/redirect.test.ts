import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../helpers/harness.ts';

let h: Harness;
before(async () => {
  h = await createHarness({ env: { UTM_PARAMS: 'utm_source=short&utm_medium=social' } });
});
after(async () => {
  await h.close();
});

async function create(json: Record<string, unknown>) {
  const res = await h.api('/api/v1/links', { method: 'POST', json });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { code: string }).code;
}

describe('GET|HEAD /:code', () => {
  test('redirects with the configured status, Cache-Control and X-Robots-Tag; HEAD has no body', async () => {
    const code = await create({ url: 'https://example.com/story?utm_source=newsletter' });
    for (const method of ['GET', 'HEAD']) {
      const res = await h.app.request(`/${code}`, { method });
      assert.equal(res.status, 301);
      assert.equal(res.headers.get('Cache-Control'), 'private, max-age=90');
      assert.equal(res.headers.get('X-Robots-Tag'), 'noindex');
      // The existing utm_source is kept; only the missing utm_medium is added.
      assert.equal(
        res.headers.get('Location'),
        'https://example.com/story?utm_source=newsletter&utm_medium=social',
      );
      assert.equal(await res.text(), '');
    }
  });

  test('honours a per-link redirect status', async () => {
    const code = await create({ url: 'https://example.com/temp', redirectStatus: 307 });
    assert.equal((await h.app.request(`/${code}`)).status, 307);
  });

  test('404 for unknown and impossible codes, as HTML, with X-Robots-Tag', async () => {
    for (const path of ['/Zz9Zz9', '/a.b', `/${'a'.repeat(65)}`, '/_private', '/%2F%2Fevil.example']) {
      const res = await h.app.request(path);
      assert.equal(res.status, 404, path);
      assert.equal(res.headers.get('Location'), null);
      assert.match(res.headers.get('Content-Type') ?? '', /text\/html|problem\+json/);
    }
    const res = await h.app.request('/Zz9Zz9', { method: 'HEAD' });
    assert.equal(res.status, 404);
    assert.equal(res.headers.get('X-Robots-Tag'), 'noindex');
  });

  test('/ goes to the UI when hosts are shared', async () => {
    const res = await h.app.request('/');
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('Location'), '/ui');
  });
});

describe('/healthz and /metrics', () => {
  test('healthz is ok with Postgres up; metrics are Prometheus text', async () => {
    const health = await h.app.request('/healthz');
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { status: string }).status, 'ok');
    await h.app.request('/Zz9Zz9');
    const metrics = await (await h.app.request('/metrics')).text();
    assert.match(metrics, /lifeline_redirects_total\{outcome="not_found"\} \d+/);
  });

  test('every response carries a request id', async () => {
    const res = await h.app.request('/healthz');
    assert.match(res.headers.get('X-Request-Id') ?? '', /.+/);
  });
});
