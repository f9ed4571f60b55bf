import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import { generateApiKey, getApiKeyDisplayPrefix, hashApiKey } from '../../../lib/auth/api_keys.ts';
import { insertApiKey } from '../../../lib/stores/api_key_store.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

async function problem(res: Response, status: number) {
  assert.equal(res.status, status, await res.clone().text());
  assert.equal(res.headers.get('Content-Type'), 'application/problem+json');
  const body = (await res.json()) as {
    status: number;
    title: string;
    detail: string;
    errors?: { path: string }[];
  };
  assert.equal(body.status, status);
  assert.ok(body.title && body.detail);
  return body;
}

describe('POST /api/v1/links', () => {
  test('creates a link with a minted code and redirects to it', async () => {
    const res = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://example.com/a?b=1#c' },
    });
    assert.equal(res.status, 201);
    const link = (await res.json()) as { code: string; shortUrl: string; url: string; status: string };
    assert.match(link.code, /^[A-Za-z0-9_-]{6}$/);
    assert.equal(link.shortUrl, `http://sho.rt.test/${link.code}`);
    assert.equal(link.status, 'active');
    const redirect = await h.app.request(`/${link.code}`);
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('Location'), 'https://example.com/a?b=1#c');
    const rows = await h.db.sql`SELECT action FROM audit_log WHERE code = ${link.code}`;
    assert.deepEqual(
      rows.map((r) => r.action),
      ['link.created'],
    );
  });

  test('returns the existing link (200) for the same owner, url and options', async () => {
    const json = { url: 'https://example.com/dedupe', tags: ['b', 'a'] };
    const first = await h.api('/api/v1/links', { method: 'POST', json });
    const second = await h.api('/api/v1/links', { method: 'POST', json: { ...json, tags: ['a', 'b'] } });
    const third = await h.api('/api/v1/links', { method: 'POST', json: { ...json, redirectStatus: 302 } });
    assert.equal(first.status, 201);
    assert.equal(second.status, 200);
    assert.equal(third.status, 201);
    const [a, b, c] = (await Promise.all([first.json(), second.json(), third.json()])) as { code: string }[];
    assert.equal(a!.code, b!.code);
    assert.notEqual(a!.code, c!.code);
  });

  test('concurrent identical creations still make one link', async () => {
    const json = { url: 'https://example.com/race' };
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => h.api('/api/v1/links', { method: 'POST', json })),
    );
    const codes = new Set(
      await Promise.all(responses.map(async (r) => ((await r.json()) as { code: string }).code)),
    );
    assert.equal(codes.size, 1);
    assert.deepEqual(responses.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
  });

  test('takes a custom alias once; the second time is 409', async () => {
    const json = { url: 'https://example.com/alias', alias: 'Spring-Sale_2026' };
    assert.equal((await h.api('/api/v1/links', { method: 'POST', json })).status, 201);
    const again = await problem(
      await h.api('/api/v1/links', { method: 'POST', json: { ...json, url: 'https://example.com/other' } }),
      409,
    );
    assert.equal(again.errors?.[0]?.path, 'alias');
    // Codes are case-sensitive: a different case is a different alias.
    assert.equal(
      (await h.api('/api/v1/links', { method: 'POST', json: { ...json, alias: 'spring-sale_2026' } })).status,
      201,
    );
  });

  const invalid: [string, unknown, string][] = [
    ['javascript: URL', { url: 'javascript:alert(1)' }, 'url'],
    ['data: URL', { url: 'data:text/html,<script>alert(1)</script>' }, 'url'],
    ['relative URL', { url: '/relative' }, 'url'],
    ['URL over 2,048 bytes', { url: `https://example.com/${'a'.repeat(10_000)}` }, 'url'],
    ['URL with credentials', { url: 'https://user:pass@example.com/' }, 'url'],
    ['URL with a newline', { url: 'https://example.com/\r\nSet-Cookie:x' }, 'url'],
    ['unknown field', { url: 'https://example.com/', colour: 'red' }, 'colour'],
    ['reserved alias', { url: 'https://example.com/', alias: 'api' }, 'alias'],
    ['alias with a slash', { url: 'https://example.com/', alias: 'a/b' }, 'alias'],
    ['alias starting with _', { url: 'https://example.com/', alias: '_hidden' }, 'alias'],
    ['bad redirectStatus', { url: 'https://example.com/', redirectStatus: 303 }, 'redirectStatus'],
    ['expiry without zone', { url: 'https://example.com/', expiresAt: '2030-01-01T00:00:00' }, 'expiresAt'],
    ['past expiry', { url: 'https://example.com/', expiresAt: '2000-01-01T00:00:00Z' }, 'expiresAt'],
    ['site without postId', { url: 'https://example.com/', site: 'news' }, 'postId'],
    ['a link to ourselves', { url: 'http://sho.rt.test/abcdef' }, 'url'],
    ['not an object', ['https://example.com/'], '(body)'],
  ];
  for (const [what, json, path] of invalid) {
    test(`rejects ${what} with 422 naming the field, writing nothing`, async () => {
      const before = await h.db.sql`SELECT count(*)::int AS n FROM links`;
      const body = await problem(await h.api('/api/v1/links', { method: 'POST', json }), 422);
      assert.ok(
        body.errors?.some((e) => e.path === path),
        JSON.stringify(body.errors),
      );
      const afterCount = await h.db.sql`SELECT count(*)::int AS n FROM links`;
      assert.equal(afterCount[0]!.n, before[0]!.n);
    });
  }

  test('malformed JSON is a 400; an empty body is a 400; a form body is a 415; a huge body is a 413', async () => {
    await problem(
      await h.api('/api/v1/links', {
        method: 'POST',
        body: '{"url": "https://x.example/",',
        headers: { 'Content-Type': 'application/json' },
      }),
      400,
    );
    await problem(
      await h.api('/api/v1/links', {
        method: 'POST',
        body: '',
        headers: { 'Content-Type': 'application/json' },
      }),
      400,
    );
    await problem(
      await h.api('/api/v1/links', {
        method: 'POST',
        body: 'url=https://x.example/',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      }),
      415,
    );
    await problem(
      await h.api('/api/v1/links', {
        method: 'POST',
        json: { url: `https://example.com/${'a'.repeat(100_000)}` },
      }),
      413,
    );
  });

  test('without a valid key is 401; with a read-only key is 403', async () => {
    await problem(
      await h.api('/api/v1/links', {
        method: 'POST',
        json: { url: 'https://e.example/' },
        headers: { Authorization: '' },
      }),
      401,
    );
    const wrong = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://e.example/' },
      headers: { Authorization: 'Bearer ll_wrong' },
    });
    await problem(wrong, 401);
    assert.match(wrong.headers.get('WWW-Authenticate') ?? '', /Bearer/);
    const readOnly = generateApiKey();
    await insertApiKey(h.db.sql, {
      name: 'reader',
      prefix: getApiKeyDisplayPrefix(readOnly),
      keyHash: await hashApiKey(readOnly),
      scopes: ['links:read'],
      createdBy: 'test',
    });
    await problem(
      await h.api('/api/v1/links', {
        method: 'POST',
        json: { url: 'https://e.example/' },
        headers: { Authorization: `Bearer ${readOnly}` },
      }),
      403,
    );
  });
});

describe('GET /api/v1/links/:code', () => {
  test('returns the link, 404 for an unknown code, 401 without a key', async () => {
    const created = (await (
      await h.api('/api/v1/links', { method: 'POST', json: { url: 'https://example.com/get' } })
    ).json()) as { code: string };
    const res = await h.api(`/api/v1/links/${created.code}`);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { url: string }).url, 'https://example.com/get');
    await problem(await h.api('/api/v1/links/nope404'), 404);
    await problem(await h.app.request(`/api/v1/links/${created.code}`), 401);
  });
});
