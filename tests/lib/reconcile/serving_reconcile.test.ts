import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createHarness, eventually, type Harness } from '../../../devkit/harness/harness.ts';
import { uniqueId } from '../../../devkit/harness/temporal.ts';
import type { ReconcileReport } from '../../../workflows/contract.ts';

const REDIS_URL = process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let h: Harness;
let worker: { stop(): Promise<void> } | undefined;
before(async () => {
  // A unique key prefix: the shared Redis is never flushed.
  h = await createHarness({ env: { REDIS_URL, REDIS_KEY_PREFIX: `lltest:${randomUUID()}:` } });
  worker = await h.startWorker();
});
after(async () => {
  await worker?.stop();
  await h.close();
});

async function insert(code: string, url: string) {
  await h.db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    VALUES (${code}, ${url}, 'active', 'clean', 'api', 'test')`;
}

async function reconcile(repair: boolean, pagesPerCall?: number): Promise<ReconcileReport> {
  return (await h.temporal.client.workflow.execute('reconcileLinksWorkflow', {
    taskQueue: h.taskQueue,
    workflowId: uniqueId('reconcile:serving'),
    args: [{ reason: repair ? 'repair' : 'check', repair, ...(pagesPerCall ? { pagesPerCall } : {}) }],
  })) as ReconcileReport;
}

describe('reconciliation of the serving store (REDIS_URL)', () => {
  test('finds missing and stale records (even one claiming a newer version) and rewrites them', async () => {
    const store = h.deps.servingStore;
    assert.ok(store, 'REDIS_URL gives the web tier a serving store');
    await eventually(async () => ((await store.get('probe')) === null ? true : undefined));
    await insert('srv-fine', 'https://news.example/fine');
    await insert('srv-missing', 'https://news.example/missing');
    await insert('srv-stale', 'https://news.example/truth');
    await h.deps.resolver.refresh('srv-fine');
    // A drifted record that claims a newer version than Postgres: a versioned put alone could not fix it.
    await store.put({
      code: 'srv-stale',
      url: 'https://wrong.example/',
      status: 'active',
      safety: 'clean',
      redirectStatus: null,
      expiresAt: null,
      expiredUrl: null,
      version: 99,
    });
    assert.equal(
      (await h.app.request('/srv-stale')).headers.get('Location'),
      'https://wrong.example/',
      'the hot path trusts the store',
    );

    const check = await reconcile(false);
    assert.deepEqual(check.serving?.drift, { missing: 1, stale: 1 });
    assert.deepEqual(check.serving?.repaired, {});
    assert.equal(await store.get('srv-missing'), null, 'a check changes nothing');

    const repair = await reconcile(true);
    assert.deepEqual(repair.serving?.drift, { missing: 1, stale: 1 });
    assert.deepEqual(repair.serving?.repaired, { missing: 1, stale: 1 });
    assert.equal((await store.get('srv-missing'))?.url, 'https://news.example/missing');
    assert.equal((await store.get('srv-stale'))?.url, 'https://news.example/truth');
    // The repair went through the resolver: this instance's cached wrong answer was dropped too.
    assert.equal((await h.app.request('/srv-stale')).headers.get('Location'), 'https://news.example/truth');
    assert.deepEqual((await reconcile(false)).serving?.drift, {});
  });

  test('many chunks over several calls (each read ahead of the last): every drift found, every one repaired', async () => {
    const store = h.deps.servingStore!;
    // 1,300 links: with 2 pages a call the leg reads 1,000 links a call, so chunks of 500, 500, then 300 in a
    // second call. Every record starts missing; then every 7th is dropped again and every 11th made stale.
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      SELECT 'srv-many-' || lpad(i::text, 4, '0'), 'https://news.example/many/' || i, 'active', 'clean', 'api', 'test'
      FROM generate_series(1, 1300) AS i`;
    const fill = await reconcile(true, 2);
    assert.deepEqual(fill.serving?.drift, { missing: 1300 });
    assert.deepEqual(fill.serving?.repaired, { missing: 1300 });

    let dropped = 0;
    let staled = 0;
    for (let i = 1; i <= 1300; i++) {
      const code = `srv-many-${String(i).padStart(4, '0')}`;
      if (i % 7 === 0) {
        await store.delete(code);
        dropped++;
      } else if (i % 11 === 0) {
        const record = (await store.get(code))!;
        await store.put({ ...record, url: 'https://wrong.example/' });
        staled++;
      }
    }
    const check = await reconcile(false, 2);
    assert.deepEqual(check.serving?.drift, { missing: dropped, stale: staled });
    const repair = await reconcile(true, 2);
    assert.deepEqual(repair.serving?.repaired, { missing: dropped, stale: staled });
    assert.equal((await store.get('srv-many-0700'))?.url, 'https://news.example/many/700');
    assert.equal((await store.get('srv-many-1287'))?.url, 'https://news.example/many/1287');
    assert.deepEqual((await reconcile(false, 2)).serving?.drift, {});
  });
});
