// The outcome table of docs/OPERATIONS.md ("Dead destinations and archived copies", "What a link answers after
// its checks"), row by row, end to end: links to loopback sites that answer as each outcome, each with its policy
// and (where the row says so) an archived copy the Internet Archive fake holds; the destination checks Schedule
// runs twice a day apart on the Temporal dev server (the worker's clock is the test's) and acts on its verdicts;
// then a reader asks the web app for each code through the real redirect path (the resolver over Postgres), and
// once more through a web app with DEAD_FALLBACK_ANSWER=redirect. The rows seen are printed as the table's rows,
// so the documentation can be checked against them. WordPress post ID 976201 of site `rot-table` is this file's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import {
  type DestinationSites,
  type SiteBehaviour,
  startDestinationSites,
} from '../../devkit/fakes/destination_sites.ts';
import {
  type InternetArchiveFake,
  startInternetArchiveFake,
} from '../../devkit/fakes/internet_archive_fake.ts';
import { createHarness, createLinkCode, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { DAY_MS } from '../../lib/destinations/destination_verdict.ts';
import { createMetrics } from '../../lib/shared/metrics.ts';
import { getDestinationState } from '../../lib/stores/destination_state_store.ts';
import { ensureSchedules } from '../../lib/temporal/schedules.ts';
import { createApp } from '../../routes/app.ts';
import { loadStaticFiles } from '../../routes/static.ts';
import { createWebDeps } from '../../server/web_deps.ts';
import {
  type CheckDestinationsReport,
  getArchiveWorkflowId,
  getDestinationCheckScheduleId,
  getWordPressPostReconcileWorkflowId,
} from '../../workflows/contract.ts';

const SNAPSHOT_AT = '20251104083000';
const OWN = 'own.rot-table.example';
const UNREACHABLE = 'unreachable.rot-table.example';

type Policy = 'notify' | 'fallback' | 'off';
/** One row of the table: a destination that behaves as `site`, the link's policy, and what a reader gets. */
interface Row {
  row: string;
  host: string;
  path: string;
  site?: SiteBehaviour;
  policy: Policy;
  copy: boolean;
  post?: { site: string; postId: number };
  /** The outcome and verdict the checks write. */
  saw: [string, string];
  /** What the answer must be: the target (301), our archive page (200), or a 302 to the copy. */
  answer: 'target' | 'page' | 'copy';
  /** The web app with DEAD_FALLBACK_ANSWER=redirect answers this row. */
  redirectAnswer?: boolean;
}

let h: Harness;
let sites: DestinationSites;
let archive: InternetArchiveFake;
let aheadMs = 0;
/** The same links through a web app whose fallback answer is a 302 to the copy. */
let redirectApp: { request(path: string): Promise<Response> | Response; close(): Promise<void> };
const codes = new Map<string, string>();
const urls = new Map<string, string>();

const ROWS: Row[] = [
  {
    row: 'ok (any policy)',
    host: 'ok.rot-table.example',
    path: '/story',
    site: { kind: 'page', paths: ['/story'] },
    policy: 'fallback',
    copy: true,
    saw: ['ok', 'ok'],
    answer: 'target',
  },
  {
    row: 'moved, own host',
    host: OWN,
    path: '/hop0',
    site: { kind: 'redirects', hops: 1, status: 301 },
    policy: 'notify',
    copy: false,
    saw: ['moved', 'moved'],
    answer: 'target',
  },
  {
    row: 'moved, other host',
    host: 'old.rot-table.example',
    path: '/hop0',
    policy: 'fallback',
    copy: true,
    saw: ['moved', 'moved'],
    answer: 'target',
  },
  {
    row: 'gone, notify',
    host: 'gone-notify.rot-table.example',
    path: '/story',
    site: { kind: 'status', status: 410 },
    policy: 'notify',
    copy: true,
    saw: ['gone', 'dead'],
    answer: 'target',
  },
  {
    row: 'gone, fallback',
    host: 'gone-fallback.rot-table.example',
    path: '/story',
    site: { kind: 'status', status: 404 },
    policy: 'fallback',
    copy: true,
    saw: ['gone', 'dead'],
    answer: 'page',
    redirectAnswer: true,
  },
  {
    row: 'gone, fallback, no copy',
    host: 'gone-nocopy.rot-table.example',
    path: '/story',
    site: { kind: 'status', status: 410 },
    policy: 'fallback',
    copy: false,
    saw: ['gone', 'dead'],
    answer: 'target',
  },
  {
    row: 'gone, off',
    host: 'gone-off.rot-table.example',
    path: '/story',
    site: { kind: 'status', status: 410 },
    policy: 'off',
    copy: true,
    saw: ['gone', 'dead'],
    answer: 'target',
  },
  {
    row: 'soft-404, fallback',
    host: 'soft.rot-table.example',
    path: '/2026/removed-story',
    site: { kind: 'soft-404', realPaths: [] },
    policy: 'fallback',
    copy: true,
    saw: ['soft-404', 'dead'],
    answer: 'page',
  },
  {
    row: 'unreachable, fallback',
    host: UNREACHABLE,
    path: '/story',
    policy: 'fallback',
    copy: true,
    saw: ['unreachable', 'dead'],
    answer: 'page',
  },
  {
    row: 'parked, fallback',
    host: 'parked.rot-table.example',
    path: '/story',
    site: { kind: 'parking' },
    policy: 'fallback',
    copy: true,
    saw: ['parked', 'dead'],
    answer: 'page',
  },
  {
    row: 'WordPress-bound, gone, fallback',
    host: 'news.rot-table.example',
    path: '/2026/12/article',
    site: { kind: 'status', status: 404 },
    policy: 'fallback',
    copy: true,
    post: { site: 'rot-table', postId: 976_201 },
    saw: ['gone', 'dead'],
    answer: 'target',
  },
];

before(async () => {
  sites = await startDestinationSites();
  archive = await startInternetArchiveFake();
  h = await createHarness({
    env: {
      DESTINATION_CHECK_HOST_RATE: '20',
      DESTINATION_CHECK_OWN_HOST_RATE: '20',
      SAFETY_TRUSTED_HOSTS: OWN,
      ARCHIVE_MODE: 'lookup',
      ARCHIVE_SAVE_BASE_URL: archive.baseUrl,
      ARCHIVE_AVAILABILITY_BASE_URL: archive.baseUrl,
    },
  });
  await h.startWorker({
    destinations: {
      lookup: sites.lookup([UNREACHABLE]),
      resolveNs: async () => [],
      now: () => new Date(Date.now() + aheadMs),
    },
  });
  await ensureSchedules(
    h.temporal.client,
    // Runs only when the test triggers it.
    { taskQueue: h.taskQueue, rescanInterval: '12h', destinationChecksEvery: '24h' },
    h.logger,
  );
  const config = { ...h.config, redirect: { ...h.config.redirect, fallbackAnswer: 'redirect' as const } };
  const deps = await createWebDeps(config, { sql: h.db.sql, logger: h.logger, metrics: createMetrics() });
  const app = createApp(deps, { staticFiles: await loadStaticFiles() });
  redirectApp = { request: (path) => app.request(path), close: () => deps.close() };
});
after(async () => {
  await h.temporal.client.schedule
    .getHandle(getDestinationCheckScheduleId(h.taskQueue))
    .delete()
    .catch(() => {});
  await redirectApp?.close();
  await h.close();
  await sites.close();
  await archive.close();
});

const seenRuns = new Set<string>();
let lastTriggerMs = 0;

/** Triggers the checks Schedule and waits for that run's report. */
async function scheduledChecks(): Promise<CheckDestinationsReport> {
  const schedule = h.temporal.client.schedule.getHandle(getDestinationCheckScheduleId(h.taskQueue));
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

/** A reader's answer: the status and, for a 3xx, its Location; for our page, what it names. */
async function readerAnswer(app: { request(path: string): Promise<Response> | Response }, code: string) {
  const res = await app.request(`/${code}`);
  const body = await res.text();
  return {
    status: res.status,
    location: res.headers.get('Location'),
    body,
    cache: res.headers.get('Cache-Control'),
  };
}

describe('what a link answers after its checks: the outcome table', () => {
  test('every row, through the real redirect path', async () => {
    const other = sites.url('new.rot-table.example', '/story');
    sites.set('new.rot-table.example', { kind: 'page', paths: ['/story'] });
    for (const r of ROWS) {
      sites.set(r.host, r.site ?? { kind: 'redirects', hops: 0, status: 301, to: other });
      const url = sites.url(r.host, r.path);
      urls.set(r.row, url);
      if (r.copy) archive.addSnapshot(url, SNAPSHOT_AT);
      const code = await createLinkCode(h, { url, ...(r.post ?? {}) });
      codes.set(r.row, code);
      const policy = await h.api(`/api/v1/destinations/${code}/policy`, {
        method: 'POST',
        json: { policy: r.policy },
      });
      assert.equal(policy.status, 200, await policy.clone().text());
      // The copy is recorded at create (ARCHIVE_MODE=lookup): our own host is never asked about.
      await h.temporal.client.workflow.getHandle(getArchiveWorkflowId(code)).result();
    }

    // The first check: failures only make a destination suspect…
    await scheduledChecks();
    // …the confirming check a day later decides, and the same activity acts on the verdict.
    aheadMs += DAY_MS + 16 * 60_000;
    await scheduledChecks();

    const observed: string[] = [];
    for (const r of ROWS) {
      const code = codes.get(r.row)!;
      const url = urls.get(r.row)!;
      const state = await getDestinationState(h.db.sql, code);
      assert.deepEqual([state?.outcome, state?.verdict], r.saw, `${r.row}: what the checks saw`);
      const expectPage = r.answer === 'page';
      const seen = await eventually(
        async () => {
          const a = await readerAnswer(h.app, code);
          return (expectPage ? a.status === 200 : a.status === 301) ? a : undefined;
        },
        { what: `${r.row}: the reader's answer`, timeoutMs: 20_000, intervalMs: 100 },
      );
      if (r.answer === 'target') {
        assert.equal(seen.location, url, `${r.row}: the target`);
      } else {
        assert.equal(seen.cache, 'no-store', `${r.row}: our page is never cached`);
        assert.ok(seen.body.includes(`href="${state?.archiveUrl}"`), `${r.row}: links to the copy`);
        assert.ok(seen.body.includes(url), `${r.row}: names the original address`);
      }
      let line = `| ${r.row} | \`${state?.outcome}\` → \`${state?.verdict}\` | ${r.policy} | ${
        r.answer === 'target' ? `301 → target` : `200, our page: the copy (${state?.archiveUrl}) and ${url}`
      }`;
      if (r.row === 'moved, own host') {
        assert.equal(state?.proposedUrl, sites.url(OWN, '/hop1'), 'a retarget to the new URL is proposed');
        line += `; retarget proposed to ${state?.proposedUrl}`;
      }
      if (r.post) {
        const reconcile = await h.temporal.client.workflow
          .getHandle(getWordPressPostReconcileWorkflowId(h.taskQueue, r.post.site, r.post.postId))
          .describe();
        assert.equal(reconcile.type, 'reconcileWordPressPostWorkflow', 'that post’s reconciliation');
        assert.equal(state?.fallbackSince, null, 'never switched to the copy');
        line += `; the post's WordPress reconciliation started`;
      }
      if (r.redirectAnswer) {
        const copy = await readerAnswer(redirectApp, code);
        assert.deepEqual([copy.status, copy.location], [302, state?.archiveUrl], `${r.row}: 302 to the copy`);
        observed.push(`${line} |`);
        line = `| ${r.row} (DEAD_FALLBACK_ANSWER=redirect) | \`${state?.outcome}\` → \`${state?.verdict}\` | ${r.policy} | 302 → ${copy.location}`;
      } else if (r.answer === 'target') {
        // The other web app gives the same answer: nothing about a row without a fallback depends on it.
        const same = await readerAnswer(redirectApp, code);
        assert.deepEqual([same.status, same.location], [301, url], `${r.row}: the same with redirect`);
      }
      observed.push(`${line} |`);
    }
    console.log(
      ['observed outcome table:', '| row | check saw | policy | link answers |', ...observed].join('\n'),
    );
  });
});
