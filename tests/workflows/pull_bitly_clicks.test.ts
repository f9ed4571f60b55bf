// Bitly's clicks, reconciled: the Schedule's workflow pulls each active Bitly link's clicks per day from the
// Bitly fake (its seeded per-day data and its own redirects), through its rate limit (a durable wait, then on
// from the same link), resumably (heartbeated cursor, continue-as-new), into vendor_daily_clicks; the stats API
// and the link page then show ours and Bitly's side by side for the same days.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, createLinkCode, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { pullBitlyClicks } from '../../lib/analytics/pull_bitly_clicks.ts';
import type { LinkStats } from '../../lib/clicks/link_stats.ts';
import { runOnce, type TaskContext } from '../../lib/shared/task_context.ts';
import { ensureSchedules } from '../../lib/temporal/schedules.ts';
import { createBitlyProvider } from '../../lib/vendors/bitly.ts';
import {
  getBitlyClicksScheduleId,
  getRescanScheduleId,
  type PullBitlyClicksReport,
} from '../../workflows/contract.ts';
import { createUiClient } from '../helpers/ui_client.ts';

const FAST = {
  bitly: { timeoutMs: 2_000, rateLimitRetryMs: 300, quotaRetryMs: 300 },
  retryBaseMs: 50,
  retryMaxMs: 400,
  publishWaitMs: 5_000,
};
const HUMAN =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 Version/17.4 Safari/605.1.15';
const DAY_MS = 86_400_000;
const dayAgo = (n: number) => new Date(Date.now() - n * DAY_MS).toISOString().slice(0, 10);

let fake: BitlyFake;
let h: Harness;
const codes: string[] = [];
before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({ env: { ...fake.env(), BITLY_CLICKS_DAYS: '5' } });
  await h.startWorker({ vendors: FAST });
  for (const path of ['a', 'b', 'c']) {
    codes.push(await createLinkCode(h, { url: `https://news.example/bitly-clicks/${path}` }));
  }
  // Not on Bitly: never asked about.
  await h.db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    VALUES ('notOnBitly', 'https://news.example/x', 'active', 'clean', 'api', 'test')`;
  await eventually(
    async () => {
      const [row] = await h.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM vendor_links
        WHERE code = ANY(${h.db.sql.array(codes)}) AND vendor = 'bitly' AND state = 'synced'`;
      return row?.n === 3 ? true : undefined;
    },
    { what: 'the three links synced to Bitly', timeoutMs: 30_000 },
  );
});
after(async () => {
  for (const id of [getBitlyClicksScheduleId(h.taskQueue), getRescanScheduleId(h.taskQueue)]) {
    await h.temporal.client.schedule
      .getHandle(id)
      .delete()
      .catch(() => {});
  }
  await h.close();
  await fake.stop();
});

async function stats(code: string): Promise<LinkStats> {
  const res = await h.api(`/api/v1/links/${code}/stats`);
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as LinkStats;
}

describe('pullBitlyClicksWorkflow', () => {
  test('the Schedule pulls per-day counts through a rate limit; ours and Bitly’s appear side by side', async () => {
    const [a, b] = codes as [string, string];
    fake.seedDailyClicks(a, { [dayAgo(0)]: 9, [dayAgo(1)]: 4, [dayAgo(3)]: 2, [dayAgo(10)]: 50 });
    fake.seedDailyClicks(b, { [dayAgo(0)]: 1 });
    // Our own clicks of `a` today: six people, two bots.
    for (let i = 0; i < 6; i++) {
      assert.equal((await h.app.request(`/${a}`, { headers: { 'User-Agent': HUMAN } })).status, 301);
    }
    for (let i = 0; i < 2; i++) await h.app.request(`/${a}`, { headers: { 'User-Agent': 'curl/8.5.0' } });
    await h.deps.clicks.flush();
    // Bitly rate-limits the first clicks request.
    fake.failNext({ path: /\/clicks$/, status: 429, message: 'RATE_LIMIT_EXCEEDED', times: 1 });

    const settings = {
      taskQueue: h.taskQueue,
      rescanInterval: '12h',
      bitlyClicks: { interval: '6h', days: 5 },
    };
    await ensureSchedules(h.temporal.client, settings, h.logger);
    await ensureSchedules(h.temporal.client, settings, h.logger);
    const schedule = h.temporal.client.schedule.getHandle(getBitlyClicksScheduleId(h.taskQueue));
    const described = await schedule.describe();
    assert.equal(Number(described.spec.intervals?.[0]?.every), 6 * 3_600_000);
    assert.ok(described.action.type === 'startWorkflow');
    assert.equal(described.action.workflowType, 'pullBitlyClicksWorkflow');
    assert.deepEqual(described.action.args, [{ reason: 'schedule', days: 5 }]);

    await schedule.trigger();
    const workflowId = await eventually(
      async () => (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId,
      { what: 'the triggered run' },
    );
    const report = (await h.temporal.client.workflow.getHandle(workflowId).result()) as PullBitlyClicksReport;
    assert.equal(report.links, 3);
    assert.equal(report.days, 15, 'five days per link, zero days included');
    assert.equal(report.waits, 1, 'one rate limit, waited out on a durable timer');
    assert.equal(report.missing + report.failed, 0);
    await recordHistory('pullBitlyClicksWorkflow-scheduled', workflowId);
    const clicksCalls = fake.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/clicks'));
    assert.equal(clicksCalls.filter((r) => r.status === 429).length, 1);
    assert.ok(!clicksCalls.some((r) => r.path.includes('notOnBitly')));

    const stored = await h.db.sql<{ day: string; clicks: number }[]>`
      SELECT to_char(day, 'YYYY-MM-DD') AS day, clicks FROM vendor_daily_clicks
      WHERE code = ${a} AND vendor = 'bitly' ORDER BY day`;
    assert.deepEqual(
      [...stored],
      [4, 3, 2, 1, 0].map((n) => ({ day: dayAgo(n), clicks: { 0: 9, 1: 4, 3: 2 }[n] ?? 0 })),
    );

    // The stats API: the same days side by side, with the difference.
    const s = await stats(a);
    assert.equal(s.clicks, 6);
    assert.equal(s.botHits, 2);
    const v = s.vendor!;
    assert.equal(v.name, 'bitly');
    assert.equal(v.comparedDays, 5);
    assert.equal(v.clicks, 15, 'the 50 clicks ten days ago were not pulled (BITLY_CLICKS_DAYS=5)');
    assert.equal(v.ourClicks, 6);
    assert.equal(v.difference, -9);
    assert.ok(v.fetchedAt && Date.now() - Date.parse(v.fetchedAt) < 120_000);
    assert.deepEqual(v.activeFront, { active: 'inhouse', since: null });
    assert.deepEqual(
      v.byDay.find((d) => d.day === dayAgo(0)),
      { day: dayAgo(0), ourClicks: 6, vendorClicks: 9, difference: -3, front: 'inhouse' },
    );
    assert.equal(v.byDay.find((d) => d.day === dayAgo(10))?.vendorClicks, null, 'not pulled: null, not 0');
    // A link Bitly does not hold has no vendor section.
    assert.equal((await stats('notOnBitly')).vendor, undefined);

    // The link page shows both, with the difference and its causes.
    const ui = createUiClient(h.app as never);
    await ui.login('admin@example.test', 'correct horse battery');
    const page = await ui.get(`/ui/links/${a}`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /Ours and Bitly’s, day by day/);
    assert.match(html, /browser-cached 301/i);
    assert.ok(html.includes(`<td class="num">9</td>`), 'Bitly’s 9 clicks today');
    assert.match(html, /−3|-3/);
  });

  test('resumable: continue-as-new carries the cursor; a retried call resumes from its heartbeat', async () => {
    const handle = await h.temporal.client.workflow.start('pullBitlyClicksWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: uniqueId('bitly-clicks:test'),
      args: [{ reason: 'test', days: 2, linksPerCall: 1, callsPerRun: 2 }],
    });
    const result = (await handle.result()) as PullBitlyClicksReport;
    await recordHistory(
      'pullBitlyClicksWorkflow-continued-first-run',
      handle.workflowId,
      handle.firstExecutionRunId,
    );
    await recordHistory('pullBitlyClicksWorkflow-continued-last-run', handle.workflowId);
    assert.equal(result.links, 3);
    assert.equal(result.days, 6);
    assert.equal(result.calls, 4, 'one link per call, and a last call that finds no more');

    // A retry of a call starts from the heartbeated cursor, with the counts it had.
    const bitly = createBitlyProvider(h.config.bitly!, FAST.bitly);
    const sorted = [...codes].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    const before = fake.requests.length;
    const resumed: TaskContext = {
      ...runOnce(),
      attempt: 2,
      resumed: { cursor: sorted[1], counts: { links: 2, days: 6, missing: 0, failed: 0 } },
    };
    const step = await pullBitlyClicks(
      { sql: h.db.sql, logger: h.logger, bitly },
      { runId: 'resume-test', cursor: '', days: 3, maxLinks: 100 },
      resumed,
    );
    assert.equal(step.done, true);
    assert.deepEqual(step.counts, { links: 3, days: 9, missing: 0, failed: 0 });
    const asked = fake.requests.slice(before).filter((r) => r.path.endsWith('/clicks'));
    assert.equal(asked.length, 1, 'only the link after the cursor');
    const [last] = await h.db.sql<{ id: string }[]>`
      SELECT vendor_id AS id FROM vendor_links WHERE code = ${sorted[2]!} AND vendor = 'bitly'`;
    assert.equal(asked[0]!.path, `/bitlinks/${last!.id}/clicks`);
  });

  test('a plan without click metrics stops the run at once; without Bitly there is nothing to do', async () => {
    const bitly = createBitlyProvider(h.config.bitly!, FAST.bitly);
    fake.failNext({ path: /\/clicks$/, status: 402, message: 'UPGRADE_REQUIRED', times: 10 });
    const refused = await pullBitlyClicks(
      { sql: h.db.sql, logger: h.logger, bitly },
      { runId: 'refused-test', cursor: '', days: 1, maxLinks: 100 },
      runOnce(),
    );
    assert.equal(refused.stopped, 'refused');
    assert.equal(refused.done, true);
    assert.equal(refused.counts.links, 0);
    fake.reset();
    const off = await pullBitlyClicks(
      { sql: h.db.sql, logger: h.logger, bitly: undefined },
      { runId: 'off-test', cursor: '', days: 1, maxLinks: 100 },
      runOnce(),
    );
    assert.deepEqual(off, {
      cursor: '',
      counts: { links: 0, days: 0, missing: 0, failed: 0 },
      done: true,
      stopped: 'disabled',
    });
    // Turning the pull off removes its Schedule on the next start.
    await ensureSchedules(h.temporal.client, { taskQueue: h.taskQueue, rescanInterval: '12h' }, h.logger);
    await assert.rejects(
      h.temporal.client.schedule.getHandle(getBitlyClicksScheduleId(h.taskQueue)).describe(),
    );
  });
});
