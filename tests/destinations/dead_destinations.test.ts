// Acting on a dead destination through the real redirect path: verdicts are written as the destination checks
// write them (writeDestinationVerdict), then acted on (actOnDestination, the activity's lib function); readers are
// answered by the web app's resolver over the real serving store (Redis) and Postgres, refreshed by the real sync
// workflow on a real worker. WordPress post IDs 90901–90909 are this file's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';
import { Registry } from 'prom-client';
import { createHarness, createLinkCode, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { actOnDestination } from '../../lib/destinations/act_on_destination.ts';
import { readDestinationOverview } from '../../lib/destinations/destination_state.ts';
import { decodeServingRecord } from '../../lib/redirect/serving_store.ts';
import { createArchiveSaveCounter, registerDestinationMetrics } from '../../lib/shared/metrics.ts';
import { toStaticAnswer } from '../../lib/snapshot/static_answer.ts';
import {
  type ChainHop,
  type DestinationOutcome,
  type DestinationVerdict,
  getDestinationState,
  recordArchiveResult,
  setHostDeadPolicy,
} from '../../lib/stores/destination_state_store.ts';
import { getLinkByCode } from '../../lib/stores/link_store.ts';
import { destinationDepsOf } from '../../routes/api/destinations.ts';
import { getWordPressPostReconcileWorkflowId } from '../../workflows/contract.ts';
import { writeDestinationVerdict } from '../helpers/destination_verdicts.ts';

const PREFIX = `${uniqueId('lifeline-dead')}:`;
let h: Harness;
let redis: ReturnType<typeof createClient>;

before(async () => {
  h = await createHarness({
    env: {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: PREFIX,
      SAFETY_TRUSTED_HOSTS: 'newsroom.example',
      // Links may point only at these; the archived copies (web.archive.org) are answered all the same.
      ALLOWED_TARGET_HOSTS: 'elsewhere.example,newsroom.example,hostpolicy.example,hostapi.example',
    },
  });
  await h.startWorker();
  redis = createClient({ url: 'redis://127.0.0.1:6379' });
  await redis.connect();
});
after(async () => {
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(keys);
  await redis.quit();
  await h.close();
});

const SNAPSHOT = (url: string) => `https://web.archive.org/web/20250101000000/${url}`;
const DEAD_CHAIN: ChainHop[] = [{ url: '', status: 404 }];

/** A link to `url` whose destination has an archived copy, as the archive workflow records it. */
async function linkWithCopy(url: string, json: Record<string, unknown> = {}): Promise<string> {
  const code = await createLinkCode(h, { url, ...json });
  await writeDestinationVerdict(h.db.sql, {
    code,
    url,
    host: new URL(url).hostname,
    outcome: 'ok',
    verdict: 'ok',
  });
  await recordArchiveResult(h.db.sql, {
    code,
    url,
    state: 'found',
    archiveUrl: SNAPSHOT(url),
    archiveAt: new Date('2025-01-01T00:00:00Z'),
  });
  return code;
}

/** Writes a verdict as the checks do, then acts on it. */
async function verdict(
  code: string,
  value: DestinationVerdict,
  extra: { finalUrl?: string; outcome?: DestinationOutcome } = {},
) {
  const link = await getLinkByCode(h.db.sql, code);
  await writeDestinationVerdict(h.db.sql, {
    code,
    url: link!.targetUrl,
    host: new URL(link!.targetUrl).hostname,
    outcome: extra.outcome ?? (value === 'dead' ? 'gone' : value === 'moved' ? 'moved' : 'ok'),
    verdict: value,
    httpStatus: value === 'dead' ? 404 : value === 'moved' ? 301 : 200,
    finalUrl: extra.finalUrl ?? null,
    chain:
      value === 'dead'
        ? [{ ...DEAD_CHAIN[0]!, url: link!.targetUrl }]
        : value === 'moved'
          ? [{ url: link!.targetUrl, status: 301, location: extra.finalUrl ?? null }]
          : [],
  });
  return actOnDestination(destinationDepsOf(h.deps), { code, actor: 'system:test' });
}

async function setPolicy(code: string, policy: string | null): Promise<Response> {
  return h.api(`/api/v1/destinations/${code}/policy`, { method: 'POST', json: { policy } });
}

/** What a reader gets for `code` until `check` accepts it. */
async function readerGets(code: string, check: (res: Response, body: string) => boolean, what: string) {
  return eventually(
    async () => {
      const res = await h.app.request(`/${code}`);
      const body = await res.text();
      return check(res, body) ? { res, body } : undefined;
    },
    { what, timeoutMs: 20_000, intervalMs: 100 },
  );
}

describe('a dead destination with the policy fallback', () => {
  test('answers the archived copy through the resolver and serving store, audited, then its destination again', async () => {
    const url = 'https://elsewhere.example/2026/fallback-story';
    const code = await linkWithCopy(url);
    assert.equal((await h.app.request(`/${code}`)).status, 301);
    const policy = await setPolicy(code, 'fallback');
    assert.equal(policy.status, 200, await policy.clone().text());

    assert.deepEqual(await verdict(code, 'dead'), { action: 'fallback_applied', policy: 'fallback' });
    const { res, body } = await readerGets(code, (r) => r.status === 200, 'the archived page');
    assert.equal(res.headers.get('Cache-Control'), 'no-store');
    assert.match(body, /This page is no longer available at its source/);
    assert.ok(body.includes(`href="${SNAPSHOT(url)}"`), 'links to the archived copy');
    assert.ok(body.includes(url), 'names the original address');
    // The serving store holds the record with its copy (the path every web instance reads on a miss).
    const stored = decodeServingRecord(code, await redis.get(`${PREFIX}link:${code}`));
    assert.equal(stored?.fallbackUrl, SNAPSHOT(url));
    // The static snapshot answers it too: a redirect to the copy.
    const row = await getLinkByCode(h.db.sql, code);
    assert.deepEqual(toStaticAnswer(row!, Date.now(), h.config.redirect), {
      code,
      status: 302,
      cacheControl: 'no-store',
      location: SNAPSHOT(url),
    });
    assert.equal((await getDestinationState(h.db.sql, code))?.fallbackSince instanceof Date, true);
    // Acting on the same verdict again changes nothing.
    assert.deepEqual(await verdict(code, 'dead'), { action: 'none', policy: 'fallback' });

    // A later check finds the destination alive: readers go to it again.
    assert.deepEqual(await verdict(code, 'ok'), { action: 'fallback_lifted', policy: 'fallback' });
    const back = await readerGets(code, (r) => r.status === 301, 'the destination again');
    assert.equal(back.res.headers.get('Location'), url);
    assert.equal(decodeServingRecord(code, await redis.get(`${PREFIX}link:${code}`))?.fallbackUrl, undefined);
    assert.equal((await getDestinationState(h.db.sql, code))?.fallbackSince, null);
    const audit = await h.db.sql`
      SELECT action, actor FROM audit_log WHERE code = ${code} AND action LIKE 'link.%' ORDER BY id`;
    assert.deepEqual(
      audit.map((r) => r.action),
      ['link.created', 'link.dead_policy_changed', 'link.fallback_applied', 'link.fallback_lifted'],
    );
  });

  test('a retarget drops the copy of the old destination at once', async () => {
    const url = 'https://elsewhere.example/2026/retargeted';
    const code = await linkWithCopy(url, {});
    await setPolicy(code, 'fallback');
    await verdict(code, 'dead');
    await readerGets(code, (r) => r.status === 200, 'the archived page');
    const patched = await h.api(`/api/v1/links/${code}`, {
      method: 'PATCH',
      json: { url: 'https://elsewhere.example/2026/new-home' },
    });
    assert.equal(patched.status, 200);
    assert.equal((await getLinkByCode(h.db.sql, code))?.fallbackUrl, null);
    const res = await readerGets(code, (r) => r.status === 301, 'the new destination');
    assert.equal(res.res.headers.get('Location'), 'https://elsewhere.example/2026/new-home');
  });

  test('a host policy set through the API acts at once on the host’s dead links', async () => {
    const url = 'https://hostapi.example/story';
    const code = await linkWithCopy(url);
    assert.deepEqual(await verdict(code, 'dead'), { action: 'none', policy: 'notify' });
    const set = await h.api('/api/v1/destinations/hosts/HostAPI.example/policy', {
      method: 'POST',
      json: { policy: 'fallback' },
    });
    assert.equal(set.status, 200, await set.clone().text());
    assert.deepEqual(await set.json(), { host: 'hostapi.example', policy: 'fallback', actedOn: 1 });
    await readerGets(code, (r) => r.status === 200, 'the archived page');
    const cleared = await h.api('/api/v1/destinations/hosts/hostapi.example/policy', {
      method: 'POST',
      json: { policy: null },
    });
    assert.deepEqual(await cleared.json(), { host: 'hostapi.example', policy: null, actedOn: 1 });
    await readerGets(code, (r) => r.status === 301, 'the destination again');
  });

  test('the host policy applies to links without their own; without a copy nothing changes', async () => {
    const url = 'https://hostpolicy.example/a';
    const code = await linkWithCopy(url);
    await setHostDeadPolicy(h.db.sql, 'hostpolicy.example', 'fallback', 'test');
    assert.deepEqual(await verdict(code, 'dead'), { action: 'fallback_applied', policy: 'fallback' });
    await readerGets(code, (r) => r.status === 200, 'the archived page');
    // The link's own policy outranks the host's: notify lifts the fallback.
    assert.equal((await setPolicy(code, 'notify')).status, 200);
    await readerGets(code, (r) => r.status === 301, 'the destination again');

    const bare = await createLinkCode(h, { url: 'https://hostpolicy.example/no-copy' });
    assert.deepEqual(await verdict(bare, 'dead'), { action: 'no_copy', policy: 'fallback' });
    assert.equal((await h.app.request(`/${bare}`)).status, 301);
  });
});

describe('notify and off', () => {
  test('notify: readers still go to the destination; the queue and the API show it with the chain and the copy', async () => {
    const url = 'https://elsewhere.example/2026/notify-story';
    const code = await linkWithCopy(url, { title: 'A story that died' });
    assert.deepEqual(await verdict(code, 'dead'), { action: 'none', policy: 'notify' });
    const res = await h.app.request(`/${code}`);
    assert.deepEqual([res.status, res.headers.get('Location')], [301, url]);

    const list = await h.api('/api/v1/destinations?state=dead&limit=100');
    assert.equal(list.status, 200);
    const body = (await list.json()) as { items: Record<string, unknown>[]; nextCursor: string | null };
    const item = body.items.find((i) => i.code === code);
    assert.ok(item, 'listed');
    assert.equal(item.url, url);
    assert.equal(item.title, 'A story that died');
    assert.equal(item.verdict, 'dead');
    assert.equal(item.httpStatus, 404);
    assert.deepEqual(item.chain, [{ url, status: 404 }]);
    assert.deepEqual(item.archive, { state: 'found', url: SNAPSHOT(url), at: '2025-01-01T00:00:00.000Z' });
    assert.deepEqual(item.policy, { effective: 'notify', from: 'default' });
    assert.equal(item.post, null);
  });

  test('off: nothing happens, whatever the verdict', async () => {
    const url = 'https://elsewhere.example/2026/off-story';
    const code = await linkWithCopy(url);
    assert.equal((await setPolicy(code, 'off')).status, 200);
    assert.deepEqual(await verdict(code, 'dead'), { action: 'none', policy: 'off' });
    assert.equal((await getLinkByCode(h.db.sql, code))?.fallbackUrl, null);
    assert.equal((await h.app.request(`/${code}`)).status, 301);
  });

  test('the API refuses bad input with problem+json naming the field', async () => {
    const state = await h.api('/api/v1/destinations?state=zombie');
    assert.equal(state.status, 422);
    assert.equal(state.headers.get('Content-Type'), 'application/problem+json');
    const problem = (await state.json()) as { errors: { path: string }[] };
    assert.deepEqual(
      problem.errors.map((e) => e.path),
      ['state'],
    );
    const cursor = await h.api('/api/v1/destinations?cursor=nonsense');
    assert.equal(cursor.status, 400);
    assert.equal(((await cursor.json()) as { errors: { path: string }[] }).errors[0]?.path, 'cursor');
    const policy = await setPolicy('nolink9', 'fallback');
    assert.equal(policy.status, 404);
    const badPolicy = await h.api('/api/v1/destinations/whatever/policy', {
      method: 'POST',
      json: { policy: 'archive' },
    });
    assert.equal(badPolicy.status, 422);
    assert.equal(((await badPolicy.json()) as { errors: { path: string }[] }).errors[0]?.path, 'policy');
    const badHost = await h.api('/api/v1/destinations/hosts/not%20a%20host/policy', {
      method: 'POST',
      json: { policy: 'fallback' },
    });
    assert.equal(badHost.status, 422);
    const unauthenticated = await h.app.request('/api/v1/destinations');
    assert.equal(unauthenticated.status, 401);
  });
});

describe('WordPress-bound links', () => {
  test('are never switched to a copy: a dead article starts that post’s WordPress reconciliation instead', async () => {
    const url = 'https://newsroom.example/2026/12/wp-article';
    const code = await linkWithCopy(url, { site: 'dead-dest-site', postId: 90901 });
    assert.equal((await setPolicy(code, 'fallback')).status, 200);
    assert.deepEqual(await verdict(code, 'dead'), { action: 'wordpress_reconcile', policy: 'fallback' });
    assert.equal((await getLinkByCode(h.db.sql, code))?.fallbackUrl, null);
    assert.equal((await h.app.request(`/${code}`)).status, 301);
    // That post's reconciliation, not the site's.
    const reconcile = h.temporal.client.workflow.getHandle(
      getWordPressPostReconcileWorkflowId(h.taskQueue, 'dead-dest-site', 90901),
    );
    const described = await reconcile.describe();
    assert.equal(described.type, 'reconcileWordPressPostWorkflow');
    const list = (await (await h.api('/api/v1/destinations?state=dead&limit=100')).json()) as {
      items: { code: string; post: unknown }[];
    };
    assert.deepEqual(list.items.find((i) => i.code === code)?.post, {
      site: 'dead-dest-site',
      postId: 90901,
    });
  });
});

describe('a moved destination on our own host', () => {
  test('proposes a retarget to the new address, applied with one call', async () => {
    const url = 'https://newsroom.example/old-section/story';
    const moved = 'https://newsroom.example/new-section/story';
    const code = await createLinkCode(h, { url });
    assert.deepEqual(await verdict(code, 'moved', { finalUrl: moved }), {
      action: 'retarget_proposed',
      policy: 'notify',
    });
    assert.equal((await getDestinationState(h.db.sql, code))?.proposedUrl, moved);
    const proposed = (await (await h.api('/api/v1/destinations?state=proposed')).json()) as {
      items: { code: string; proposedUrl: string }[];
    };
    assert.equal(proposed.items.find((i) => i.code === code)?.proposedUrl, moved);

    const applied = await h.api(`/api/v1/destinations/${code}/retarget`, { method: 'POST' });
    assert.equal(applied.status, 200, await applied.clone().text());
    assert.equal(((await applied.json()) as { url: string }).url, moved);
    const res = await readerGets(code, (r) => r.headers.get('Location') === moved, 'the new address');
    assert.equal(res.res.status, 301);
    const [audit] = await h.db.sql`
      SELECT actor FROM audit_log WHERE code = ${code} AND action = 'link.retargeted'`;
    assert.match(String(audit?.actor), /^apikey:/);
    // Nothing left to apply.
    assert.equal((await h.api(`/api/v1/destinations/${code}/retarget`, { method: 'POST' })).status, 404);
  });

  test('with DEAD_MOVED_AUTO_RETARGET the move is applied at once, audited as the system', async () => {
    const url = 'https://newsroom.example/auto/old';
    const moved = 'https://newsroom.example/auto/new';
    const code = await createLinkCode(h, { url });
    const link = await getLinkByCode(h.db.sql, code);
    await writeDestinationVerdict(h.db.sql, {
      code,
      url: link!.targetUrl,
      host: 'newsroom.example',
      outcome: 'moved',
      verdict: 'moved',
      httpStatus: 301,
      finalUrl: moved,
      chain: [{ url, status: 301, location: moved }],
    });
    const deps = destinationDepsOf(h.deps);
    const acted = await actOnDestination(
      { ...deps, destinations: { ...deps.destinations, autoRetargetMoved: true } },
      { code, actor: 'system:destination-checks' },
    );
    assert.deepEqual(acted, { action: 'retargeted', policy: 'notify' });
    assert.equal((await getLinkByCode(h.db.sql, code))?.targetUrl, moved);
    const [audit] = await h.db.sql`
      SELECT actor FROM audit_log WHERE code = ${code} AND action = 'link.retargeted'`;
    assert.equal(audit?.actor, 'system:destination-checks');
    assert.equal((await getDestinationState(h.db.sql, code))?.proposedUrl, null);
    await readerGets(code, (r) => r.headers.get('Location') === moved, 'the new address');
  });

  test('a move to another site is not proposed', async () => {
    const code = await createLinkCode(h, { url: 'https://newsroom.example/left' });
    assert.deepEqual(await verdict(code, 'moved', { finalUrl: 'https://elsewhere.example/took-it' }), {
      action: 'none',
      policy: 'notify',
    });
    assert.equal((await getDestinationState(h.db.sql, code))?.proposedUrl, null);
  });
});

describe('metrics', () => {
  test('the worker’s gauges: destinations of active links by verdict, and the dead share of the checked', async () => {
    const registry = new Registry();
    registerDestinationMetrics(registry, () => readDestinationOverview(h.db.sql));
    const counts = (await readDestinationOverview(h.db.sql)).byVerdict;
    assert.ok(counts.dead > 0, 'this file left dead destinations behind');
    const text = await registry.metrics();
    assert.ok(text.includes(`lifeline_destination_verdicts{verdict="dead"} ${counts.dead}`), text);
    const checked = counts.ok + counts.suspect + counts.dead + counts.moved;
    const ratio = Number(/^lifeline_destinations_dead_ratio (\S+)$/m.exec(text)?.[1]);
    assert.equal(ratio, counts.dead / checked);
    const saves = createArchiveSaveCounter(registry);
    saves.inc({ outcome: 'rate_limited' });
    assert.match(await registry.metrics(), /lifeline_archive_saves_total\{outcome="rate_limited"\} 1/);
  });
});
