import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { createUser } from '../../lib/auth/manage_users.ts';
import { createLayeredResolver } from '../../lib/redirect/layered_resolver.ts';
import { expectProblem } from '../helpers/problem.ts';
import { createUiClient } from '../helpers/ui_client.ts';

// The smaller findings of the first security review, one test each.

let h: Harness;
let writerKey: string;
const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };

before(async () => {
  h = await createHarness({
    env: {
      TRUSTED_CLIENT_IP_HEADER: 'X-Test-Client-IP',
      RATE_LIMIT_SAFETY_CHECKS_PER_MINUTE: '3',
      RATE_LIMIT_CREATE_PER_IP_PER_MINUTE: '2',
    },
  });
  const issued = await h.api('/api/v1/keys', {
    method: 'POST',
    json: { name: 'integrator', scopes: ['links:write'] },
  });
  writerKey = ((await issued.json()) as { key: string }).key;
});
after(async () => {
  await h?.close();
});

const asWriter = (path: string, init: RequestInit & { json?: unknown } = {}) =>
  h.api(path, { ...init, headers: { Authorization: `Bearer ${writerKey}`, ...(init.headers as object) } });

describe('item 7: the smaller findings', () => {
  test('a links:write key can neither claim nor delete (nor retarget) an article slot; an admin key can', async () => {
    await expectProblem(
      await asWriter('/api/v1/links', {
        method: 'POST',
        json: { url: 'https://example.com/squat', site: 'newsroom', postId: 4242, alias: 'future-story' },
      }),
      403,
    );
    const batch = await asWriter('/api/v1/links/batch', {
      method: 'POST',
      json: { links: [{ url: 'https://example.com/b', site: 'newsroom', postId: 4243 }] },
    });
    assert.equal(((await batch.json()) as { results: { status: number }[] }).results[0]!.status, 403);

    const bound = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://example.com/article', site: 'newsroom', postId: 4244 },
    });
    assert.equal(bound.status, 201, await bound.clone().text());
    const { code } = (await bound.json()) as { code: string };
    await expectProblem(await asWriter(`/api/v1/links/${code}`, { method: 'DELETE' }), 403);
    await expectProblem(
      await asWriter(`/api/v1/links/${code}`, {
        method: 'PATCH',
        json: { url: 'https://example.com/hijack' },
      }),
      403,
    );
    assert.equal(
      (await asWriter(`/api/v1/links/${code}`, { method: 'PATCH', json: { tags: ['fine'] } })).status,
      200,
      'other fields stay editable',
    );
    assert.equal((await h.api(`/api/v1/links/${code}`, { method: 'DELETE' })).status, 204, 'an admin may');
    const free = await asWriter('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://example.com/free' },
    });
    assert.equal(free.status, 201, 'ordinary links are unaffected');
  });

  test('the login next= parameter cannot leave /ui, however it is spelt', async () => {
    for (const next of [
      '/ui/../Zz9Zz9',
      '/ui/%2e%2e/Zz9Zz9',
      '/ui/.%2E/api/v1/links',
      '/ui/%2f%2fevil.example',
    ]) {
      const c = createUiClient(h.app as never);
      await c.get('/ui/login');
      const res = await c.post('/ui/login', { ...ADMIN, next });
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('Location'), '/ui/links', next);
    }
  });

  test('a password hashed below the current scrypt cost is rehashed at the next login', async () => {
    const salt = randomBytes(16);
    const old = scryptSync('an older password!', salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 2 ** 20 });
    const stored = `scrypt$${2 ** 15}$8$1$${salt.toString('base64url')}$${old.toString('base64url')}`;
    await h.db
      .sql`INSERT INTO users (email, password_hash, role) VALUES ('old@example.test', ${stored}, 'editor')`;
    const c = createUiClient(h.app as never);
    assert.equal((await c.login('old@example.test', 'an older password!')).status, 303);
    const [row] = await h.db.sql<{ hash: string }[]>`
      SELECT password_hash AS hash FROM users WHERE email = 'old@example.test'`;
    const [, n, r, p] = row!.hash.split('$');
    assert.ok(Number(n) >= 2 ** 17 && Number(r) >= 8 && Number(p) >= 1, `OWASP's minimum: ${row!.hash}`);
    const again = createUiClient(h.app as never);
    assert.equal((await again.login('old@example.test', 'an older password!')).status, 303, 'still signs in');
  });

  test('URL-prefix blocklist entries match however the target spells the same URL', async () => {
    const added = await h.api('/api/v1/blocklist', {
      method: 'POST',
      json: { pattern: 'https://files.example/bad/', kind: 'url_prefix', reason: 'malware drop' },
    });
    assert.equal(added.status, 201, await added.clone().text());
    for (const url of [
      'https://files.example/%62ad/x.exe',
      'HTTPS://Files.Example.:443/bad/x.exe',
      'http://files.example/bad/x.exe',
      'https://files.example/bad/%78.exe',
    ]) {
      const res = await h.api('/api/v1/links', { method: 'POST', json: { url } });
      assert.equal(res.status, 422, url);
    }
    const fine = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://files.example/good/x.pdf' },
    });
    assert.equal(fine.status, 201);
  });

  test('/api/v1/safety/check is rate-limited per key', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await asWriter('/api/v1/safety/check', {
        method: 'POST',
        json: { url: `https://example.com/check-${i}` },
      });
      statuses.push(res.status);
      if (res.status === 429) assert.match(res.headers.get('Retry-After') ?? '', /^\d+$/);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
  });

  test('UI sessions are limited per client IP, whichever account is signed in', async () => {
    for (const email of ['one@example.test', 'two@example.test']) {
      await createUser(
        h.db.sql,
        { email, name: null, role: 'editor', password: 'long enough password' },
        'test',
      );
    }
    const statuses: number[] = [];
    for (const [i, email] of ['one@example.test', 'two@example.test', 'two@example.test'].entries()) {
      const c = createUiClient(h.app as never);
      const headers = { 'X-Test-Client-IP': '198.51.100.99' };
      assert.equal((await c.login(email, 'long enough password', headers)).status, 303);
      await c.get('/ui/links/new', headers);
      const res = await c.post('/ui/links/new', { url: `https://example.com/ui-${i}` }, { headers });
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [303, 303, 429]);
  });

  test('a flood of unknown codes does not evict real links from the LRU', async () => {
    const codes: string[] = [];
    for (let i = 0; i < 40; i++) {
      const code = `Real${i}x`;
      codes.push(code);
      await h.db.sql`INSERT INTO links (code, target_url, status, safety, origin, owner)
                     VALUES (${code}, ${`https://example.com/${i}`}, 'active', 'clean', 'api', 'test')`;
    }
    const resolver = createLayeredResolver({
      sql: h.db.sql,
      cacheMax: 50,
      cacheTtlMs: 60_000,
      negativeTtlMs: 60_000,
      storeTimeoutMs: 50,
      postgresConcurrency: 4,
    });
    try {
      for (const code of codes) assert.ok(await resolver.resolve(code));
      for (let i = 0; i < 2_000; i++) assert.equal(await resolver.resolve(`Unknown${i}`), null);
      const kept = codes.filter((code) => resolver.peek?.(code) !== undefined);
      assert.equal(kept.length, codes.length, `${kept.length} of ${codes.length} real links still cached`);
    } finally {
      await resolver.close();
    }
  });
});
