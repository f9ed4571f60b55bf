import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import { generateApiKey, getApiKeyDisplayPrefix, hashApiKey } from '../../../lib/auth/api_keys.ts';
import { insertApiKey } from '../../../lib/stores/api_key_store.ts';
import { expectFieldProblem, expectProblem } from '../../helpers/problem.ts';

let h: Harness;
before(async () => {
  h = await createHarness({ env: { RATE_LIMIT_CREATE_PER_MINUTE: '40' } });
});
after(async () => {
  await h.close();
});

const post = (path: string, key: string, body: string, extra: Record<string, string> = {}) =>
  h.api(path, {
    method: 'POST',
    body,
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key, ...extra },
  });
const countLinks = async () => (await h.db.sql`SELECT count(*)::int AS n FROM links`)[0]!.n as number;

describe('Idempotency-Key on POST', () => {
  test('the same key and body replay the first response; nothing is created twice', async () => {
    const body = JSON.stringify({ url: 'https://example.com/idem', alias: 'idem-1' });
    const first = await post('/api/v1/links', 'k-1', body);
    assert.equal(first.status, 201);
    const before = await countLinks();
    // An alias would answer 409 if the request ran again: the replay proves it did not.
    const again = await post('/api/v1/links', 'k-1', body);
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('Idempotent-Replayed'), 'true');
    assert.equal(again.headers.get('Location'), '/api/v1/links/idem-1');
    assert.deepEqual(await again.json(), await first.json());
    assert.equal(await countLinks(), before);
    // Key order and whitespace do not make a different request.
    const reordered = await post(
      '/api/v1/links',
      'k-1',
      '{ "alias": "idem-1",  "url": "https://example.com/idem" }',
    );
    assert.equal(reordered.status, 201);
    assert.equal(reordered.headers.get('Idempotent-Replayed'), 'true');
  });

  test('the same key with a different body is a 422 and runs nothing', async () => {
    await post('/api/v1/links', 'k-2', JSON.stringify({ url: 'https://example.com/idem-2' }));
    const before = await countLinks();
    await expectFieldProblem(
      await post('/api/v1/links', 'k-2', JSON.stringify({ url: 'https://example.com/idem-2-other' })),
      422,
      'Idempotency-Key',
    );
    // The same key on another endpoint is another request too.
    await expectProblem(
      await post(
        '/api/v1/links/batch',
        'k-2',
        JSON.stringify({ links: [{ url: 'https://example.com/idem-2' }] }),
      ),
      422,
    );
    assert.equal(await countLinks(), before);
  });

  test('failed answers are replayed too, except those worth retrying', async () => {
    const bad = JSON.stringify({ url: 'ftp://example.com/' });
    await expectProblem(await post('/api/v1/links', 'k-3', bad), 422);
    const replay = await post('/api/v1/links', 'k-3', bad);
    await expectProblem(replay.clone(), 422);
    assert.equal(replay.headers.get('Idempotent-Replayed'), 'true');
  });

  test('keys belong to one API key: another key may use the same one independently', async () => {
    const other = generateApiKey();
    await insertApiKey(h.db.sql, {
      name: 'other',
      prefix: getApiKeyDisplayPrefix(other),
      keyHash: await hashApiKey(other),
      scopes: ['links:write'],
      createdBy: 'test',
    });
    await post('/api/v1/links', 'shared-key', JSON.stringify({ url: 'https://example.com/mine' }));
    const theirs = await post(
      '/api/v1/links',
      'shared-key',
      JSON.stringify({ url: 'https://example.com/theirs' }),
      {
        Authorization: `Bearer ${other}`,
      },
    );
    assert.equal(theirs.status, 201);
    assert.equal(theirs.headers.get('Idempotent-Replayed'), null);
  });

  test('concurrent requests with one key create one link; the others replay it or are told to retry', async () => {
    const body = JSON.stringify({ url: 'https://example.com/concurrent', alias: 'idem-race' });
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => post('/api/v1/links', 'k-race', body)),
    );
    const statuses = responses.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length + statuses.filter((s) => s === 409).length, 6);
    for (const r of responses.filter((r) => r.status === 409))
      assert.equal(r.headers.get('Retry-After'), '1');
    assert.ok(statuses.includes(201));
    const rows = await h.db.sql`SELECT 1 FROM links WHERE code = 'idem-race'`;
    assert.equal(rows.length, 1);
    const later = await post('/api/v1/links', 'k-race', body);
    assert.equal(later.status, 201);
    assert.equal(later.headers.get('Idempotent-Replayed'), 'true');
  });

  test('batches replay whole; a rate-limited (429) answer is not kept, so the retry runs', async () => {
    const body = JSON.stringify({ links: [{ url: 'https://example.com/idem-batch-1' }, { url: 'ftp://x' }] });
    const first = await post('/api/v1/links/batch', 'k-batch', body);
    const second = await post('/api/v1/links/batch', 'k-batch', body);
    assert.deepEqual(await second.json(), await first.json());
    assert.equal(second.headers.get('Idempotent-Replayed'), 'true');

    // Use up the creation budget (40 per minute here), then a keyed request is limited...
    const many = { links: Array.from({ length: 40 }, (_, i) => ({ url: `https://example.com/fill/${i}` })) };
    await h.api('/api/v1/links/batch', { method: 'POST', json: many });
    const limited = await post(
      '/api/v1/links',
      'k-429',
      JSON.stringify({ url: 'https://example.com/after-limit' }),
    );
    assert.equal(limited.status, 429);
    const stored = await h.db.sql`SELECT 1 FROM idempotency_keys WHERE key = 'k-429'`;
    assert.equal(stored.length, 0, 'a 429 is not stored for replay');
  });

  test('a malformed key is a 400', async () => {
    await expectFieldProblem(
      await post('/api/v1/links', 'x'.repeat(300), JSON.stringify({ url: 'https://example.com/' })),
      400,
      'Idempotency-Key',
    );
  });
});
