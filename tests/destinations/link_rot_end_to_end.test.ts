// Link rot end to end, both halves wired: a link with the policy `fallback` to a loopback site; the archive
// workflow records the closest snapshot the Internet Archive fake holds; the destination checks Schedule, run on
// the Temporal dev server, checks the site — ok, then 410 twice a day apart (the worker's clock is the test's, so
// no day is waited) — and the check activity acts on its verdict: readers of the web app get the archive page;
// once the site answers again the next check lifts the fallback and readers go to the destination again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { type DestinationSites, startDestinationSites } from '../../devkit/fakes/destination_sites.ts';
import {
  type InternetArchiveFake,
  startInternetArchiveFake,
} from '../../devkit/fakes/internet_archive_fake.ts';
import { createHarness, createLinkCode, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { DAY_MS } from '../../lib/destinations/destination_verdict.ts';
import { getDestinationState } from '../../lib/stores/destination_state_store.ts';
import { ensureSchedules } from '../../lib/temporal/schedules.ts';
import {
  type ArchiveDestinationReport,
  type CheckDestinationsReport,
  getDestinationCheckScheduleId,
} from '../../workflows/contract.ts';

const HOST = 'story.rot-e2e.example';
const SNAPSHOT_AT = '20251104083000';

let h: Harness;
let sites: DestinationSites;
let archive: InternetArchiveFake;
/** How far the worker's clock is ahead of the real one. */
let aheadMs = 0;

before(async () => {
  sites = await startDestinationSites();
  sites.set(HOST, { kind: 'page', paths: ['/2026/rot-story'], title: 'A story that will rot' });
  archive = await startInternetArchiveFake();
  h = await createHarness({
    env: {
      DESTINATION_CHECK_HOST_RATE: '20',
      ARCHIVE_MODE: 'lookup',
      ARCHIVE_ACCESS_KEY: archive.accessKey,
      ARCHIVE_SECRET_KEY: archive.secretKey,
      ARCHIVE_SAVE_BASE_URL: archive.baseUrl,
      ARCHIVE_AVAILABILITY_BASE_URL: archive.baseUrl,
    },
  });
  await h.startWorker({
    destinations: {
      lookup: sites.lookup(),
      resolveNs: async () => [],
      now: () => new Date(Date.now() + aheadMs),
    },
  });
  await ensureSchedules(
    h.temporal.client,
    { taskQueue: h.taskQueue, rescanInterval: '12h', destinationChecksEvery: '15m' },
    h.logger,
  );
});
after(async () => {
  await h.temporal.client.schedule
    .getHandle(getDestinationCheckScheduleId(h.taskQueue))
    .delete()
    .catch(() => {});
  await h.close();
  await sites.close();
  await archive.close();
});

const seenRuns = new Set<string>();
let lastTriggerMs = 0;

/** Triggers the checks Schedule and waits for that run's report. */
async function scheduledChecks(): Promise<CheckDestinationsReport> {
  const schedule = h.temporal.client.schedule.getHandle(getDestinationCheckScheduleId(h.taskQueue));
  // A scheduled run's workflow ID carries its start time to the second: two triggers within one second would be
  // one run.
  const wait = lastTriggerMs + 1_100 - Date.now();
  if (wait > 0) await setTimeout(wait);
  lastTriggerMs = Date.now();
  await schedule.trigger();
  const workflowId = await eventually(
    async () =>
      (await schedule.describe()).info.recentActions
        .map((a) => a.action.workflow.workflowId)
        .find((id) => !seenRuns.has(id)),
    { what: 'the scheduled destination checks to start' },
  );
  seenRuns.add(workflowId);
  return (await h.temporal.client.workflow.getHandle(workflowId).result()) as CheckDestinationsReport;
}

/** What a reader of the web app gets for `code` until `check` accepts it. */
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

describe('link rot: checks, archived copy and fallback wired together', () => {
  test('ok, then dead after two checks a day apart (the archive page), then ok again (the destination)', async () => {
    const url = sites.url(HOST, '/2026/rot-story');
    archive.addSnapshot(url, SNAPSHOT_AT);
    const code = await createLinkCode(h, { url });
    const policy = await h.api(`/api/v1/destinations/${code}/policy`, {
      method: 'POST',
      json: { policy: 'fallback' },
    });
    assert.equal(policy.status, 200, await policy.clone().text());
    const copy = (await h.temporal.client.workflow
      .getHandle(`archive:${code}`)
      .result()) as ArchiveDestinationReport;
    assert.deepEqual(copy, { outcome: 'found', url });
    const snapshot = (await getDestinationState(h.db.sql, code))?.archiveUrl;
    assert.ok(snapshot?.includes(`/web/${SNAPSHOT_AT}/`), `the closest snapshot is recorded: ${snapshot}`);

    // The first check: the site answers 200.
    assert.equal((await scheduledChecks()).byOutcome.ok, 1);
    assert.equal((await getDestinationState(h.db.sql, code))?.verdict, 'ok');
    const alive = await readerGets(code, (r) => r.status === 301, 'the destination');
    assert.equal(alive.res.headers.get('Location'), url);

    // The story is deleted: 410. A week later the first failed check only makes it suspect…
    sites.set(HOST, { kind: 'status', status: 410 });
    aheadMs += 7 * DAY_MS + 60_000;
    assert.equal((await scheduledChecks()).byOutcome.gone, 1);
    assert.equal((await getDestinationState(h.db.sql, code))?.verdict, 'suspect');
    assert.equal((await h.app.request(`/${code}`)).status, 301, 'nothing acts on suspect');

    // …the confirming check a day later makes it dead, and the same activity switches the link to its copy.
    aheadMs += DAY_MS + 16 * 60_000;
    assert.equal((await scheduledChecks()).byOutcome.gone, 1);
    const dead = await getDestinationState(h.db.sql, code);
    assert.equal(dead?.verdict, 'dead');
    assert.ok(dead?.fallbackSince instanceof Date, 'the fallback is applied');
    const { res, body } = await readerGets(code, (r) => r.status === 200, 'the archive page');
    assert.equal(res.headers.get('Cache-Control'), 'no-store');
    assert.ok(body.includes(`href="${snapshot}"`), 'links to the closest snapshot');
    assert.ok(body.includes(url), 'names the original address');

    // The site answers again: the next check says ok, the fallback is lifted, readers go to the destination.
    sites.set(HOST, { kind: 'page', paths: ['/2026/rot-story'], title: 'A story that will rot' });
    aheadMs += 7 * DAY_MS + 60_000;
    assert.equal((await scheduledChecks()).byOutcome.ok, 1);
    const again = await getDestinationState(h.db.sql, code);
    assert.deepEqual([again?.verdict, again?.fallbackSince], ['ok', null]);
    const back = await readerGets(code, (r) => r.status === 301, 'the destination again');
    assert.equal(back.res.headers.get('Location'), url);

    const audit = await h.db.sql`
      SELECT action, actor FROM audit_log WHERE code = ${code} AND action LIKE 'link.fallback%' ORDER BY id`;
    assert.deepEqual(
      audit.map((r) => r.action),
      ['link.fallback_applied', 'link.fallback_lifted'],
    );
    assert.ok(audit.every((r) => String(r.actor).startsWith('system:destination-checks:')));
  });
});
