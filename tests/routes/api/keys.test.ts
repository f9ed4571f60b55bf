import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import type { ApiKey } from '../../../lib/auth/issue_api_key.ts';
import { expectFieldProblem, expectProblem } from '../../helpers/problem.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

async function createKey(json: unknown, headers: Record<string, string> = {}) {
  return h.api('/api/v1/keys', { method: 'POST', json, headers });
}

describe('/api/v1/keys', () => {
  test('creates a key shown once, stored only as a hash, that works with exactly its scopes', async () => {
    const res = await createKey({ name: 'CMS', scopes: ['links:read'] });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('Cache-Control'), 'no-store');
    const created = (await res.json()) as ApiKey & { key: string };
    assert.match(created.key, /^ll_[0-9A-Za-z]{40}$/);
    assert.equal(created.prefix, `${created.key.slice(0, 7)}…`);
    assert.deepEqual(created.scopes, ['links:read']);
    const stored = await h.db.sql`SELECT key_hash FROM api_keys WHERE id = ${created.id}`;
    assert.notEqual(stored[0]!.key_hash, created.key);
    assert.ok(
      !JSON.stringify(await (await h.api('/api/v1/keys')).json()).includes(created.key),
      'never listed',
    );

    const asNew = { Authorization: `Bearer ${created.key}` };
    assert.equal((await h.api('/api/v1/links', { headers: asNew })).status, 200);
    await expectProblem(
      await h.api('/api/v1/links', { method: 'POST', json: { url: 'https://example.com/' }, headers: asNew }),
      403,
    );
    await expectProblem(await h.api('/api/v1/keys', { headers: asNew }), 403);
    const audit = await h.db.sql`SELECT action FROM audit_log WHERE action = 'apikey.created'`;
    assert.equal(audit.length, 1);
  });

  test('lists keys with scopes and last use', async () => {
    const created = (await (
      await createKey({ name: 'used', scopes: ['links:read', 'links:read'] })
    ).json()) as ApiKey & {
      key: string;
    };
    assert.deepEqual(created.scopes, ['links:read']);
    assert.equal(created.lastUsedAt, null);
    await h.api('/api/v1/links', { headers: { Authorization: `Bearer ${created.key}` } });
    const listed = await (async () => {
      for (let i = 0; i < 50; i++) {
        const items = ((await (await h.api('/api/v1/keys')).json()) as { items: ApiKey[] }).items;
        const found = items.find((k) => k.id === created.id)!;
        if (found.lastUsedAt) return found;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('lastUsedAt never set');
    })();
    assert.equal(listed.name, 'used');
    assert.ok(Date.now() - Date.parse(listed.lastUsedAt!) < 60_000);
  });

  test('a revoked key stops working at once on this instance; revoking twice is a 404', async () => {
    const created = (await (
      await createKey({ name: 'short-lived', scopes: ['links:read'] })
    ).json()) as ApiKey & {
      key: string;
    };
    const auth = { Authorization: `Bearer ${created.key}` };
    assert.equal((await h.api('/api/v1/links', { headers: auth })).status, 200);
    assert.equal((await h.api(`/api/v1/keys/${created.id}`, { method: 'DELETE' })).status, 204);
    await expectProblem(await h.api('/api/v1/links', { headers: auth }), 401);
    await expectProblem(await h.api(`/api/v1/keys/${created.id}`, { method: 'DELETE' }), 404);
    await expectProblem(await h.api('/api/v1/keys/999999', { method: 'DELETE' }), 404);
    await expectProblem(await h.api('/api/v1/keys/abc', { method: 'DELETE' }), 404);
    const items = ((await (await h.api('/api/v1/keys')).json()) as { items: ApiKey[] }).items;
    assert.ok(items.find((k) => k.id === created.id)!.revokedAt);
  });

  test('invalid keys are refused with 422; 401 without a key', async () => {
    await expectFieldProblem(await createKey({ name: '', scopes: ['links:read'] }), 422, 'name');
    await expectFieldProblem(await createKey({ name: 'x', scopes: [] }), 422, 'scopes');
    await expectFieldProblem(await createKey({ name: 'x', scopes: ['root'] }), 422, 'scopes.0');
    await expectProblem(await createKey({ name: 'x', scopes: ['admin'] }, { Authorization: '' }), 401);
  });

  test('an Idempotency-Key replay of a creation does not reveal the key again', async () => {
    const headers = { 'Idempotency-Key': 'key-create-1' };
    const first = (await (await createKey({ name: 'idem', scopes: ['links:read'] }, headers)).json()) as {
      key: string;
      id: number;
    };
    const replay = await createKey({ name: 'idem', scopes: ['links:read'] }, headers);
    assert.equal(replay.status, 201);
    const body = (await replay.json()) as { key?: string; id: number };
    assert.equal(body.id, first.id);
    assert.equal(body.key, undefined);
    const stored = await h.db
      .sql`SELECT response_body::text AS body FROM idempotency_keys WHERE key = 'key-create-1'`;
    assert.ok(!stored[0]!.body.includes(first.key));
  });
});
