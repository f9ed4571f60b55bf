import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import {
  activitySteps,
  PUBLISH_STEPS_WITH_BITLY,
  syncQueueBatches,
  workflowExists,
} from '../../devkit/harness/temporal.ts';
import {
  arabicPermalink,
  getPostLink,
  nextOccurredAt,
  waitForPostLink,
  waitForPostSynced,
  waitForPostWorkflow,
  wordpressEvent,
} from '../../devkit/harness/wordpress_events.ts';
import { setActiveFront } from '../../lib/failover/active_front.ts';
import { getPublishWorkflowId, getSyncQueueWorkflowId, getSyncWorkflowId } from '../../workflows/contract.ts';

let fake: BitlyFake;
let h: Harness;
let worker: { stop(): Promise<void> } | undefined;

/** Vendor timings short enough for tests; the logic is the production one. */
const FAST = {
  bitly: { timeoutMs: 500, rateLimitRetryMs: 700, quotaRetryMs: 900 },
  retryBaseMs: 50,
  retryMaxMs: 400,
  publishWaitMs: 60_000,
};

async function restartWorker(vendors: typeof FAST = FAST) {
  await worker?.stop();
  worker = await h.startWorker({ vendors });
}

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({ env: fake.env() });
  await restartWorker();
});
after(async () => {
  await h.close();
  await fake.stop();
});
beforeEach(() => fake.reset());

let nextPost = 5000;

async function send(body: ReturnType<typeof wordpressEvent>) {
  const res = await h.webhook(body);
  assert.equal(res.status, 202, await res.clone().text());
  return body;
}

/** Waits for the post's workflow, then for the sync queue's drainer it handed the change to. */
async function settled(postId: number, code: string) {
  await waitForPostSynced(h, 'news', postId, code);
}

async function auditActions(code: string): Promise<string[]> {
  const rows = await h.db.sql<
    { action: string }[]
  >`SELECT action FROM audit_log WHERE code = ${code} ORDER BY id`;
  return rows.map((r) => r.action);
}

describe('publishPostWorkflow with Bitly', () => {
  test('publish → same back-half on Bitly; update → retarget everywhere; unpublish → 410 and archived; republish → same code', async () => {
    const postId = nextPost++;
    // An integrator subscribed to link updates hears of WordPress-driven changes as of an editor's.
    const [hook] = await h.db.sql<{ id: number }[]>`
      INSERT INTO webhook_endpoints (url, event_types, secret, created_by)
      VALUES ('https://hooks.example.test/in', ARRAY['link.updated'], 'whsec_c2VjcmV0', 'test')
      RETURNING id::int`;
    await send(wordpressEvent('post.published', { postId, title: 'عاجل: خبر' }));
    const link = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
    assert.equal(link.url, arabicPermalink(postId));
    assert.deepEqual(
      link.vendors.map((v) => [v.name, v.state]),
      [['bitly', 'synced']],
    );
    const onBitly = fake.linkByKeyword(link.code);
    assert.ok(onBitly, 'Bitly holds our code as the back-half');
    assert.equal(onBitly.longUrl, link.url);
    assert.equal(onBitly.group, fake.groupGuid);
    assert.equal(onBitly.archived, false);
    const redirect = await h.app.request(`/${link.code}`);
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('Location'), arabicPermalink(postId));

    // The history reads as what happened. A local step's marker is written when its workflow task completes,
    // after the step's own commit: wait for the workflow's end before reading it.
    await waitForPostWorkflow(h, 'news', postId);
    const history = await h.temporal.client.workflow.getHandle(`publish:news:${postId}`).fetchHistory();
    assert.deepEqual(activitySteps(history.events), PUBLISH_STEPS_WITH_BITLY);
    // Only the vendor call is an activity task; the short steps ran as local activities inside workflow tasks.
    assert.deepEqual(
      (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []),
      ['syncToBitly'],
    );

    // A new permalink (slug change) retargets Postgres, the serving store and Bitly; the code stays.
    const moved = arabicPermalink(postId, '-updated');
    await send(wordpressEvent('post.updated', { postId, permalink: moved }));
    await waitForPostLink(h, 'news', postId, (l) => l.url === moved);
    await settled(postId, link.code);
    assert.equal((await h.app.request(`/${link.code}`)).headers.get('Location'), moved);
    assert.equal(fake.linkByKeyword(link.code)?.longUrl, moved);
    // The change went to the sync queue's drainer (a batch names the code), not to a workflow of the link's own.
    assert.equal(await workflowExists(h.temporal.client, getSyncWorkflowId(link.code)), false);
    const batches = await syncQueueBatches(h.temporal.client, getSyncQueueWorkflowId(h.taskQueue));
    assert.ok(
      batches.some((batch) => batch.includes(link.code)),
      JSON.stringify(batches),
    );
    await recordHistory('publishPostWorkflow-updated', getPublishWorkflowId('news', postId));

    // Unpublish: 410 here, archived on Bitly.
    await send(wordpressEvent('post.unpublished', { postId }));
    await waitForPostLink(h, 'news', postId, (l) => l.status === 'gone');
    await settled(postId, link.code);
    assert.equal((await h.app.request(`/${link.code}`)).status, 410);
    assert.equal(fake.linkByKeyword(link.code)?.archived, true);

    // Publish again: the same code comes back, restored on Bitly; still exactly one bitlink for it.
    await send(wordpressEvent('post.published', { postId, permalink: moved }));
    const back = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
    assert.equal(back.code, link.code);
    await settled(postId, link.code);
    assert.equal(fake.linkByKeyword(link.code)?.archived, false);
    assert.equal(fake.listLinks().filter((l) => l.keywords.includes(link.code)).length, 1);
    assert.equal((await h.app.request(`/${link.code}`)).headers.get('Location'), moved);
    assert.deepEqual(await auditActions(link.code), [
      'link.minted',
      'link.safety_changed', // unknown → clean: the first scan, before anyone sees the code
      'link.status_changed',
      'link.retargeted',
      'link.status_changed',
      'link.status_changed',
    ]);
    const updates = await h.db.sql<
      { payload: { code: string; url: string; status: string; changed: string[] } }[]
    >`
      SELECT payload FROM webhook_messages WHERE endpoint_id = ${hook!.id} AND event_type = 'link.updated'
      ORDER BY created_at, id`;
    assert.deepEqual(
      updates.map((u) => [u.payload.code, u.payload.status, u.payload.changed, u.payload.url]),
      [
        [link.code, 'active', ['url'], moved],
        [link.code, 'gone', ['status'], moved],
        [link.code, 'active', ['status'], moved],
      ],
    );
    await h.db.sql`DELETE FROM webhook_endpoints WHERE id = ${hook!.id}`;
  });

  test('out-of-order and duplicate deliveries are harmless', async () => {
    // An update older than an applied unpublish changes nothing.
    const postId = nextPost++;
    const t1 = nextOccurredAt();
    const t2 = nextOccurredAt();
    const t3 = nextOccurredAt();
    await send(wordpressEvent('post.published', { postId, occurredAt: t1 }));
    const link = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
    await send(wordpressEvent('post.unpublished', { postId, occurredAt: t3 }));
    await send(
      wordpressEvent('post.updated', { postId, occurredAt: t2, permalink: arabicPermalink(postId, '-late') }),
    );
    const result = await waitForPostWorkflow(h, 'news', postId);
    assert.ok(result.applied.includes('post.updated: stale'), result.applied.join(' | '));
    const final = await h
      .api(`/api/v1/links/${link.code}`)
      .then((r) => r.json() as Promise<{ url: string; status: string }>);
    assert.equal(final.status, 'gone');
    assert.equal(final.url, arabicPermalink(postId));

    // An unpublish that overtakes its own publish: nothing is minted.
    const early = nextPost++;
    const p1 = nextOccurredAt();
    const p2 = nextOccurredAt();
    await send(wordpressEvent('post.unpublished', { postId: early, occurredAt: p2 }));
    await waitForPostWorkflow(h, 'news', early);
    await send(wordpressEvent('post.published', { postId: early, occurredAt: p1 }));
    const late = await waitForPostWorkflow(h, 'news', early);
    assert.deepEqual(late.applied, ['post.published: superseded']);
    assert.equal(await getPostLink(h, 'news', early), null);
    const rows = await h.db.sql`SELECT 1 FROM links WHERE post_id = ${early}`;
    assert.equal(rows.length, 0);

    // The same delivery sent twice at once, and a second publish: one link, one mint, one bitlink.
    const dup = nextPost++;
    const event = wordpressEvent('post.published', { postId: dup });
    await Promise.all([send(event), send(event), send(event)]);
    await send(wordpressEvent('post.published', { postId: dup }));
    const one = await waitForPostLink(h, 'news', dup, (l) => l.status === 'active');
    await waitForPostWorkflow(h, 'news', dup);
    assert.deepEqual(
      (await auditActions(one.code)).filter((a) => a === 'link.minted'),
      ['link.minted'],
    );
    assert.equal(fake.listLinks().filter((l) => l.keywords.includes(one.code)).length, 1);
    assert.equal(
      fake.requestsTo('POST', '/bitlinks').filter((r) => (r.body as { keyword: string }).keyword === one.code)
        .length,
      1,
    );
  });

  test('a shared code Bitly will not hold is a collision: alerted, visible in vendors[], and never changed', async () => {
    const created = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://example.com/shared' },
    });
    const { code } = (await created.json()) as { code: string };
    fake.seed({ keyword: code, longUrl: 'https://theirs.example/', group: 'Bsomeone0else' });
    await h.deps.workflows.syncLink(code, 'test: link changed');
    await h.temporal.client.workflow.getHandle(`sync:${code}`).result();
    const link = (await (await h.api(`/api/v1/links/${code}`)).json()) as {
      code: string;
      vendors: { name: string; state: string; error?: string }[];
    };
    assert.equal(link.code, code);
    assert.equal(link.vendors[0]?.state, 'collision');
    assert.match(link.vendors[0]?.error ?? '', new RegExp(`sho\\.rt/${code}`));
    assert.ok((await auditActions(code)).includes('vendor.collision'));
    assert.equal((await h.app.request(`/${code}`)).status, 301, 'our own resolver still serves it');
    // Nothing of ours was made, and their link was not touched.
    assert.equal(fake.linkByKeyword(code)?.longUrl, 'https://theirs.example/');
    assert.equal(fake.requestsTo('PATCH', '/bitlinks').length, 0);
  });

  test('before sharing, a refused back-half re-mints (bounded); a vendor that never agrees ends as a collision', async () => {
    // 409 on the first code: one re-mint, then synced with the new code.
    const postId = nextPost++;
    fake.stealNextKeywords(1);
    await send(wordpressEvent('post.published', { postId }));
    const link = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
    assert.equal(link.vendors[0]?.state, 'synced');
    assert.equal(fake.linkByKeyword(link.code)?.longUrl, link.url);
    assert.equal(fake.stats.conflicts, 1);
    const [remint] = await h.db.sql<{ before: { code: string } }[]>`
      SELECT before FROM audit_log WHERE code = ${link.code} AND action = 'link.reminted'`;
    assert.ok(remint, 'the re-mint is audited');
    assert.equal(
      (await h.app.request(`/${remint.before.code}`)).status,
      404,
      'the refused code never served',
    );

    // Bitly's branded quota is used up: every create lands on bit.ly. After MAX_REMINTS the link is
    // activated anyway (our resolver serves it) and the Bitly copy is a visible collision.
    const stubborn = nextPost++;
    fake.bsdQuotaFallback = true;
    await send(wordpressEvent('post.published', { postId: stubborn }));
    const last = await waitForPostLink(h, 'news', stubborn, (l) => l.status === 'active');
    assert.equal(last.vendors[0]?.state, 'collision');
    const reminted = await h.db
      .sql`SELECT 1 FROM audit_log WHERE action = 'link.reminted' AND code = ${last.code}`;
    assert.equal(reminted.length, 1, 'the final code was re-minted into');
    assert.equal((await h.app.request(`/${last.code}`)).status, 301);
    // Every bit.ly link Bitly made instead was archived: nothing of ours stays live with a wrong back-half.
    assert.ok(
      fake
        .listLinks()
        .filter((l) => l.domain === 'bit.ly')
        .every((l) => l.archived),
    );
    assert.equal(fake.listLinks().filter((l) => l.domain === 'bit.ly').length, 4);
  });

  test('retarget when the plan refuses PATCH: the keyword moves to a new bitlink and the mapping follows', async () => {
    const postId = nextPost++;
    await send(wordpressEvent('post.published', { postId }));
    const link = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
    const firstId = fake.linkByKeyword(link.code)!.id;
    fake.patchLongUrl = 'upgrade-required';
    const moved = arabicPermalink(postId, '-v2');
    await send(wordpressEvent('post.updated', { postId, permalink: moved }));
    await waitForPostLink(h, 'news', postId, (l) => l.url === moved);
    await settled(postId, link.code);
    const now = fake.linkByKeyword(link.code)!;
    assert.notEqual(now.id, firstId);
    assert.equal(now.longUrl, moved);
    const [row] = await h.db.sql<{ vendorId: string; state: string }[]>`
      SELECT vendor_id AS "vendorId", state FROM vendor_links WHERE code = ${link.code}`;
    assert.deepEqual(row, { vendorId: now.id, state: 'synced' });
  });

  test('an answer lost after Bitly made the link: the retry adopts it, no second bitlink', async () => {
    const postId = nextPost++;
    fake.failNext({ method: 'POST', path: '/bitlinks', lose: true });
    await send(wordpressEvent('post.published', { postId }));
    const link = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
    assert.equal(link.vendors[0]?.state, 'synced');
    assert.deepEqual(
      fake.requestsTo('POST', '/bitlinks').map((r) => r.status),
      [0],
      'one create, whose answer was lost',
    );
    assert.equal(fake.listLinks().length, 1);
    const [row] = await h.db.sql<
      { vendorId: string }[]
    >`SELECT vendor_id AS "vendorId" FROM vendor_links WHERE code = ${link.code}`;
    assert.equal(row?.vendorId, fake.linkByKeyword(link.code)?.id);
  });

  test('a silent random back-half whose answer was lost is found and archived; the link re-mints', async () => {
    // Bitly silently makes a link with a random back-half for our taken code, and the answer never arrives:
    // no later answer mentions that bitlink, so the retry must look for it rather than leave it live.
    const postId = nextPost++;
    fake.takenKeyword = 'silent-random';
    fake.stealNextKeywords(1);
    fake.failNext({ method: 'POST', path: '/bitlinks', lose: true });
    await send(wordpressEvent('post.published', { postId }));
    const link = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
    assert.equal(link.vendors[0]?.state, 'synced');
    assert.equal(fake.stats.silentRandom, 1);
    const live = fake
      .listLinks()
      .filter((l) => !l.archived && l.group === fake.groupGuid && l.domain === 'sho.rt');
    assert.deepEqual(
      live.map((l) => l.keywords),
      [[link.code]],
      'the only live bitlink of ours answers our (re-minted) code',
    );
    const stray = fake.listLinks().find((l) => l.keywords.length === 0 && l.longUrl === link.url);
    assert.ok(stray?.archived, 'the random-back-half bitlink was archived');
  });

  test('a bad request is recorded, not retried; the link is still published', async () => {
    const postId = nextPost++;
    fake.failNext({ method: 'POST', path: '/bitlinks', status: 400, message: 'INVALID_ARG_LONG_URL' });
    await send(wordpressEvent('post.published', { postId }));
    const link = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
    assert.equal(link.vendors[0]?.state, 'failed');
    assert.match(link.vendors[0]?.error ?? '', /400 INVALID_ARG_LONG_URL/);
    assert.equal(fake.requestsTo('POST', '/bitlinks').length, 1);
  });

  test('rate limits are honoured: the retry waits for the vendor, and the link ends synced', async () => {
    const postId = nextPost++;
    fake.failNext({ method: 'POST', path: '/bitlinks', status: 429, message: 'RATE_LIMIT_EXCEEDED' });
    fake.failNext({
      method: 'POST',
      path: '/bitlinks',
      status: 403,
      message: 'RATE_LIMIT_EXCEEDED',
      headers: { 'X-Ratelimit-Reason': 'hourly' },
    });
    await send(wordpressEvent('post.published', { postId }));
    const link = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
    assert.equal(link.vendors[0]?.state, 'synced');
    const creates = fake.requestsTo('POST', '/bitlinks');
    assert.deepEqual(
      creates.map((r) => r.status),
      [429, 403, 201],
    );
    // rateLimitRetryMs is 700 ms here, far above the 50 ms transient backoff: both gaps honour it.
    assert.ok(creates[1]!.at - creates[0]!.at >= 650, `${creates[1]!.at - creates[0]!.at} ms`);
    assert.ok(creates[2]!.at - creates[1]!.at >= 650, `${creates[2]!.at - creates[1]!.at} ms`);
  });

  test('in-house front: a Bitly outage never holds the article back, and Bitly catches up afterwards', async () => {
    await restartWorker({ ...FAST, publishWaitMs: 1_500 });
    try {
      const postId = nextPost++;
      fake.failNext({ path: '/', status: 503, message: 'TEMPORARILY_UNAVAILABLE', times: 10_000 });
      const started = Date.now();
      await send(wordpressEvent('post.published', { postId }));
      const link = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
      assert.ok(Date.now() - started < 10_000);
      assert.equal(link.vendors[0]?.state, 'pending');
      assert.match(link.vendors[0]?.error ?? '', /503/);
      fake.reset();
      const synced = await waitForPostLink(h, 'news', postId, (l) => l.vendors[0]?.state === 'synced');
      assert.equal(fake.linkByKeyword(synced.code)?.longUrl, synced.url);
    } finally {
      await restartWorker();
    }
  });

  test('Bitly front: the link is not shared until Bitly holds it', async () => {
    await setActiveFront(h.db.sql, { active: 'bitly', since: new Date().toISOString() });
    try {
      const postId = nextPost++;
      fake.failNext({ path: '/bitlinks', status: 503, message: 'TEMPORARILY_UNAVAILABLE', times: 6 });
      await send(wordpressEvent('post.published', { postId }));
      await eventually(async () => (fake.requestsTo('POST', '/bitlinks').length >= 3 ? true : undefined));
      assert.equal(await getPostLink(h, 'news', postId), null, 'pending while Bitly is down');
      const link = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
      assert.equal(link.vendors[0]?.state, 'synced');
      assert.equal(fake.linkByKeyword(link.code)?.longUrl, link.url);
    } finally {
      await setActiveFront(h.db.sql, { active: 'inhouse', since: null });
    }
  });
});
