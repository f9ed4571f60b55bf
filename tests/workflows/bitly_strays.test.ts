import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { syncToBitly } from '../../lib/propagation/sync_to_bitly.ts';
import { TransientFailure } from '../../lib/shared/errors.ts';
import { runOnce } from '../../lib/shared/task_context.ts';
import { BITLY_DISCARDED_TAG, BITLY_OWN_TAG } from '../../lib/vendors/bitly.ts';
import { createWorkerDeps } from '../../workers/worker_deps.ts';
import type { ReconcileReport } from '../../workflows/contract.ts';

// No strays on Bitly: a bitlink whose create answer was lost, or that Bitly made with a random
// back-half, is found (every bitlink we make is tagged at creation, the two-step path included) and archived,
// by the link's next sync attempt or by reconciliation, and never imported as a link of its own.

let fake: BitlyFake;
let h: Harness;

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({ env: fake.env() });
  await h.startWorker({ vendors: { bitly: { timeoutMs: 2_000 }, retryBaseMs: 50, retryMaxMs: 400 } });
});
after(async () => {
  await h.close();
  await fake.stop();
});

async function insertLink(code: string, url: string): Promise<void> {
  await h.db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    VALUES (${code}, ${url}, 'active', 'clean', 'api', 'test')`;
}

describe('strays on Bitly', () => {
  test('two-step create whose first answer is lost: the bitlink it made is tagged, found by the next attempt and archived', async () => {
    const deps = createWorkerDeps(h.config, {
      sql: h.db.sql,
      logger: h.logger,
      resolver: h.deps.resolver,
      vendors: { bitly: { timeoutMs: 2_000 }, retryBaseMs: 10, retryMaxMs: 50 },
    });
    const url = 'https://news.example/two-step-lost/';
    await insertLink('twoLost', url);
    // The plan refuses `keyword` on create; the keyword-less create then happens but its answer is lost.
    fake.failNext({ method: 'POST', path: '/bitlinks', status: 402, message: 'UPGRADE_REQUIRED' });
    fake.failNext({ method: 'POST', path: '/bitlinks', lose: true });
    await assert.rejects(syncToBitly(deps, { code: 'twoLost' }, runOnce()), TransientFailure);
    const made = fake.listLinks().filter((l) => l.longUrl === url);
    assert.equal(made.length, 1, 'Bitly made a link we never heard about');
    assert.ok(made[0]!.tags.includes(BITLY_OWN_TAG), 'it carries our tag from the first call');
    assert.deepEqual(made[0]!.keywords, []);

    const second = await syncToBitly(deps, { code: 'twoLost' }, runOnce());
    assert.equal(second.outcome, 'synced');
    const all = fake.listLinks().filter((l) => l.longUrl === url);
    const live = all.filter((l) => !l.archived);
    assert.equal(live.length, 1, 'exactly one live bitlink for the link');
    assert.deepEqual(live[0]!.keywords, ['twoLost']);
    const stray = all.find((l) => l.id === made[0]!.id)!;
    assert.equal(stray.archived, true, 'the stray is archived');
    assert.ok(stray.tags.includes(BITLY_DISCARDED_TAG));
  });

  test('reconciliation archives strays of ours (hash only, or a random back-half) instead of importing them', async () => {
    const old = new Date(Date.now() - 3600_000);
    const hashOnly = fake.seed({
      longUrl: 'https://news.example/stray-a/',
      tags: [BITLY_OWN_TAG],
      createdAt: old,
    });
    const randomHalf = fake.seed({
      longUrl: 'https://news.example/stray-b/',
      tags: [BITLY_OWN_TAG],
      keyword: 'Zq9RandX',
      createdAt: old,
    });
    // Made by a person in Bitly's UI (no tag): imported, as before.
    fake.seed({ longUrl: 'https://news.example/by-hand/', keyword: 'ByHand1', createdAt: old });
    // A create in flight right now (tagged, keyword not added yet): left alone.
    const fresh = fake.seed({ longUrl: 'https://news.example/in-flight/', tags: [BITLY_OWN_TAG] });

    const report = (await h.temporal.client.workflow.execute('reconcileLinksWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: uniqueId('reconcile:strays'),
      args: [{ reason: 'test' }],
    })) as ReconcileReport;
    assert.equal(report.bitly?.drift.stray, 2);
    assert.equal(report.bitly?.repaired.stray, 2);
    assert.equal(report.bitly?.imported, 1);
    for (const id of [hashOnly.id, randomHalf.id]) {
      const link = fake.listLinks().find((l) => l.id === id)!;
      assert.equal(link.archived, true, `${id} archived`);
      assert.ok(link.tags.includes(BITLY_DISCARDED_TAG));
    }
    assert.equal(fake.listLinks().find((l) => l.id === fresh.id)!.archived, false);
    const codes = await h.db.sql<{ code: string }[]>`
      SELECT code FROM links WHERE code IN (${hashOnly.hash}, 'Zq9RandX', ${fresh.hash}, 'ByHand1')`;
    assert.deepEqual(
      codes.map((c) => c.code),
      ['ByHand1'],
      'strays are never imported',
    );
  });
});
