// Archived copies of links made in bulk (ADR 0076), on the Temporal dev server against the Internet Archive fake:
// a batch create, a WordPress publish, an archive backfill batch and a mass retarget queue their destinations in
// the transaction that makes them; the `archive-queue:{taskQueue}` Schedule's drainer asks Save Page Now for each
// one outside our own hosts, no faster than ARCHIVE_RATE, waits out 429s and outages and loses nothing, and never
// sends our own hosts (SAFETY_TRUSTED_HOSTS, or a WordPress site's host) to the Archive.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import {
  type InternetArchiveFake,
  type InternetArchiveFakeRequest,
  startInternetArchiveFake,
} from '../../devkit/fakes/internet_archive_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { waitForPostLink, wordpressEvent } from '../../devkit/harness/wordpress_events.ts';
import { signWebhook } from '../../lib/auth/webhook_signature.ts';
import { getDestinationState } from '../../lib/stores/destination_state_store.ts';
import { ensureSchedules } from '../../lib/temporal/schedules.ts';
import { type ArchiveQueueTotals, getArchiveQueueScheduleId } from '../../workflows/contract.ts';

/** ARCHIVE_RATE in the test: 120 a minute, one capture or lookup every 500 ms. */
const RATE_PER_MINUTE = 120;
const INTERVAL_MS = 60_000 / RATE_PER_MINUTE;
/** Temporal's timers fire at or after their time; a few ms of clock between the fake and the worker. */
const TIMER_SLACK_MS = 25;
const TRUSTED = 'own.queue-archive.example';
const SITE = 'queue-archive';
/** WordPress post IDs of this file only: 976101–976103. */
const POST_ID = 976_101;

let h: Harness;
let archive: InternetArchiveFake;

before(async () => {
  archive = await startInternetArchiveFake();
  h = await createHarness({
    env: {
      ARCHIVE_MODE: 'save',
      ARCHIVE_ACCESS_KEY: archive.accessKey,
      ARCHIVE_SECRET_KEY: archive.secretKey,
      ARCHIVE_SAVE_BASE_URL: archive.baseUrl,
      ARCHIVE_AVAILABILITY_BASE_URL: archive.baseUrl,
      ARCHIVE_RATE: String(RATE_PER_MINUTE),
      SAFETY_TRUSTED_HOSTS: TRUSTED,
      DESTINATION_CHECK_EVERY: 'off',
    },
  });
  await h.startWorker();
  await ensureSchedules(
    h.temporal.client,
    // Runs only when the test triggers it (the deployment's is every minute).
    { taskQueue: h.taskQueue, rescanInterval: '12h', archiveQueueEvery: '24h' },
    h.logger,
  );
});
after(async () => {
  await h.temporal.client.schedule
    .getHandle(getArchiveQueueScheduleId(h.taskQueue))
    .delete()
    .catch(() => {});
  await h.close();
  await archive.close();
});

const seenRuns = new Set<string>();
let lastTriggerMs = 0;

/** Triggers the drainer's Schedule and waits for that run's totals (recorded for replay under `history`). */
async function drainQueue(history?: string): Promise<ArchiveQueueTotals> {
  const schedule = h.temporal.client.schedule.getHandle(getArchiveQueueScheduleId(h.taskQueue));
  // A scheduled run's ID carries its start time to the second: two triggers within one second would be one run.
  const wait = lastTriggerMs + 1_100 - Date.now();
  if (wait > 0) await setTimeout(wait);
  lastTriggerMs = Date.now();
  await schedule.trigger();
  const workflowId = await eventually(
    async () =>
      (await schedule.describe()).info.recentActions
        .map((a) => a.action.workflow.workflowId)
        .find((id) => !seenRuns.has(id)),
    { what: 'the archive queue drainer to start' },
  );
  seenRuns.add(workflowId);
  const totals = (await h.temporal.client.workflow.getHandle(workflowId).result()) as ArchiveQueueTotals;
  if (history) await recordHistory(history, workflowId);
  return totals;
}

async function createBatch(urls: string[]): Promise<string[]> {
  const res = await h.api('/api/v1/links/batch', {
    method: 'POST',
    json: { links: urls.map((url) => ({ url })) },
  });
  assert.equal(res.status, 200, await res.clone().text());
  const { results } = (await res.json()) as { results: { status: number; link?: { code: string } }[] };
  assert.deepEqual(
    results.map((r) => r.status),
    urls.map(() => 201),
  );
  return results.map((r) => r.link!.code);
}

async function runStatus(id: string, status: string): Promise<void> {
  await eventually(
    async () => {
      const run = (await (await h.api(`/api/v1/retargets/${id}`)).json()) as { status: string };
      return run.status === status ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `retarget ${id} to be ${status}` },
  );
}

async function queued(codes: string[]): Promise<string[]> {
  const rows = await h.db.sql<{ code: string }[]>`
    SELECT code FROM archive_queue WHERE code = ANY(${codes}) ORDER BY code`;
  return rows.map((r) => r.code);
}

/** Save Page Now's capture requests since `from` (an index into the fake's requests). */
const saves = (from: number): InternetArchiveFakeRequest[] =>
  archive.requests.slice(from).filter((r) => r.method === 'POST' && r.path === '/save');

/** Asserts that consecutive requests came at least the rate's interval apart, and prints the gaps. */
function assertPaced(requests: InternetArchiveFakeRequest[], label: string): void {
  const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at);
  console.log(
    `${label}: ${requests.length} capture requests, gaps ${gaps.join(', ')} ms (rate ${INTERVAL_MS} ms)`,
  );
  for (const gap of gaps) assert.ok(gap >= INTERVAL_MS - TIMER_SLACK_MS, `requests ${gap} ms apart`);
}

describe('archived copies of links made in bulk', () => {
  test('a batch of N creates ends with N captures at ARCHIVE_RATE; our own hosts are never sent', async () => {
    const from = archive.requests.length;
    const outside = Array.from(
      { length: 6 },
      (_, i) => `https://story-${i}.queue-archive.example/2026/q${i}`,
    );
    const own = [`https://${TRUSTED}/2026/ours`, `https://www.${TRUSTED}/2026/ours-too`];
    const codes = await createBatch([...outside, ...own]);
    // Queued with the rows, in the batch's transaction: all of them, the drainer decides.
    assert.deepEqual(await queued(codes), [...codes].sort());

    const totals = await drainQueue();
    const captured = saves(from);
    assert.deepEqual(
      captured.map((r) => [r.url, r.status]).sort(),
      outside.map((url) => [url, 200]).sort(),
      'one capture per outside destination, none of our own',
    );
    assertPaced(captured, 'batch of 6');
    assert.equal(totals.byOutcome.skipped, 2);
    assert.equal(totals.byOutcome.saved, 6);
    for (const [i, code] of codes.entries()) {
      const state = await getDestinationState(h.db.sql, code);
      if (i < outside.length) {
        assert.equal(state?.archiveState, 'saved', `${code} is saved`);
        assert.ok(state?.archiveUrl?.startsWith('https://web.archive.org/web/'), state?.archiveUrl ?? '');
      } else assert.equal(state?.archiveState, 'skipped', `${code} (our own host) is skipped`);
    }
    assert.deepEqual(await queued(codes), [], 'the queue is empty');
    assert.ok(
      archive.requests.slice(from).every((r) => !r.url?.includes(TRUSTED)),
      'nothing about our own hosts reached the Archive',
    );
  });

  test('429s and 5xx are waited out by the drainer: every capture is made, none twice', async () => {
    const from = archive.requests.length;
    const urls = Array.from({ length: 4 }, (_, i) => `https://flaky-${i}.queue-archive.example/2026/f${i}`);
    archive.rateLimitNext(2, 1);
    archive.failNext('save', 503, 1);
    archive.failNext('status', 502, 1);
    const codes = await createBatch(urls);

    const totals = await drainQueue('archiveQueueWorkflow-429-and-5xx');
    const all = saves(from);
    const ok = all.filter((r) => r.status === 200);
    console.log(
      `429/5xx: capture answers ${all.map((r) => r.status).join(', ')}; pauses ${totals.pauses}; outcomes ${JSON.stringify(totals.byOutcome)}`,
    );
    assert.deepEqual(
      all.filter((r) => r.status !== 200).map((r) => r.status),
      [429, 429, 503],
    );
    assert.deepEqual(ok.map((r) => r.url).sort(), [...urls].sort(), 'each destination captured exactly once');
    assert.ok(totals.pauses >= 4, `the queue waited after each failure (${totals.pauses})`);
    assertPaced(all, 'with failures');
    for (const code of codes)
      assert.equal((await getDestinationState(h.db.sql, code))?.archiveState, 'saved', code);
    assert.deepEqual(await queued(codes), []);
  });

  test('a WordPress publish queues its article, and a site host is ours: nothing is sent', async () => {
    const from = archive.requests.length;
    const permalink = `https://news.${SITE}.example/2026/12/article-${POST_ID}/`;
    const res = await h.webhook(
      wordpressEvent('post.published', {
        site: SITE,
        postId: POST_ID,
        permalink,
        restUrl: `https://news.${SITE}.example/wp-json/lifeline/v1/`,
      }),
    );
    assert.equal(res.status, 202, await res.clone().text());
    const link = await waitForPostLink(h, SITE, POST_ID, (l) => l.status === 'active');
    assert.deepEqual(await queued([link.code]), [link.code], 'queued by the publish');

    const totals = await drainQueue();
    assert.equal(totals.byOutcome.skipped, 1);
    assert.equal((await getDestinationState(h.db.sql, link.code))?.archiveState, 'skipped');
    assert.deepEqual(archive.requests.slice(from), [], 'not one request to the Archive');
  });

  test('an archive backfill batch queues its minted links; the site’s own articles are skipped', async () => {
    const from = archive.requests.length;
    const site = 'queue-backfill';
    const own = `https://${site}.queue-archive.example/2019/03/own-article/`;
    const elsewhere = 'https://old-domain.queue-archive.example/2012/05/syndicated/';
    const run = randomUUID();
    const body = {
      id: `${run}:1`,
      run,
      site,
      batch: 1,
      dryRun: false,
      final: false,
      total: 2,
      restUrl: `https://${site}.queue-archive.example/wp-json/lifeline/v1/`,
      posts: [
        {
          postId: POST_ID + 1,
          permalink: own,
          title: 'Ours',
          publishedAt: '2019-03-01T08:00:00Z',
          modifiedAt: '2019-03-01T08:00:00Z',
        },
        {
          postId: POST_ID + 2,
          permalink: elsewhere,
          title: 'Elsewhere',
          publishedAt: '2012-05-01T08:00:00Z',
          modifiedAt: '2012-05-01T08:00:00Z',
        },
      ],
    };
    const raw = JSON.stringify(body);
    const res = await h.app.request('/api/v1/hooks/wordpress/backfill', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        'X-Lifeline-Signature': await signWebhook(h.webhookSecret, raw, Date.now() / 1000),
      },
      body: raw,
    });
    assert.equal(res.status, 202, await res.clone().text());
    const { results } = (await res.json()) as { results: { outcome: string; code: string }[] };
    assert.deepEqual(
      results.map((r) => r.outcome),
      ['minted', 'minted'],
    );
    const codes = results.map((r) => r.code);
    assert.deepEqual(await queued(codes), [...codes].sort(), 'queued with the batch');

    const totals = await drainQueue();
    assert.equal(totals.byOutcome.skipped, 1, 'the site’s own article');
    assert.deepEqual(
      saves(from).map((r) => [r.url, r.status]),
      [[elsewhere, 200]],
    );
    assert.deepEqual(await queued(codes), []);
  });

  test('a mass retarget queues each new destination', async () => {
    const [code] = await createBatch(['https://old.queue-archive.example/2026/moving']);
    await drainQueue();
    const from = archive.requests.length;
    const res = await h.api('/api/v1/retargets', {
      method: 'POST',
      json: {
        rule: {
          type: 'prefix',
          from: 'https://old.queue-archive.example/',
          to: 'https://new.queue-archive.example/',
        },
      },
    });
    assert.equal(res.status, 202, await res.clone().text());
    const { id } = (await res.json()) as { id: string };
    await runStatus(id, 'planned');
    assert.equal((await h.api(`/api/v1/retargets/${id}/approve`, { method: 'POST' })).status, 202);
    await runStatus(id, 'finished');
    assert.deepEqual(await queued([code!]), [code], 'queued by the batch that applied the retarget');
    await drainQueue();
    assert.deepEqual(
      saves(from).map((r) => [r.url, r.status]),
      [['https://new.queue-archive.example/2026/moving', 200]],
    );
  });
});
