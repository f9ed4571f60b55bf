import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type SafeBrowsingFake, startSafeBrowsingFake } from '../../devkit/fakes/safe_browsing_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { syncQueueBatches, uniqueId, workflowExists } from '../../devkit/harness/temporal.ts';
import { startWorkerProcess } from '../../devkit/harness/worker_process.ts';
import { listLinksToRescan, RESCAN_WINDOW } from '../../lib/stores/link_lifecycle_store.ts';
import { ensureSchedules } from '../../lib/temporal/schedules.ts';
import {
  getReconcileScheduleId,
  getRescanScheduleId,
  getSyncQueueWorkflowId,
  getSyncWorkflowId,
  type RescanLinksInput,
  type RescanReport,
} from '../../workflows/contract.ts';

let h: Harness;
let fake: SafeBrowsingFake;
let worker: { stop(): Promise<void> } | undefined;
before(async () => {
  fake = await startSafeBrowsingFake();
  h = await createHarness({
    env: { SAFE_BROWSING_API_KEY: fake.apiKey, SAFE_BROWSING_API_BASE_URL: fake.baseUrl },
  });
  worker = await h.startWorker();
});
after(async () => {
  await h.temporal.client.schedule
    .getHandle(getRescanScheduleId(h.taskQueue))
    .delete()
    .catch(() => {});
  await h.close();
  await fake.close();
});

async function createLink(url: string): Promise<string> {
  const res = await h.api('/api/v1/links', { method: 'POST', json: { url } });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { code: string }).code;
}

/** Records `code` as last clicked `secondsAgo` seconds ago (what a click flush writes). */
async function setLastClicked(code: string, secondsAgo: number): Promise<void> {
  await h.db.sql`
    INSERT INTO link_last_clicks (code, last_clicked_at) VALUES (${code}, now() - make_interval(secs => ${secondsAgo}))
    ON CONFLICT (code) DO UPDATE SET last_clicked_at = EXCLUDED.last_clicked_at`;
}

async function runRescan(input: RescanLinksInput): Promise<{ workflowId: string; report: RescanReport }> {
  const workflowId = uniqueId('rescan:test');
  const handle = await h.temporal.client.workflow.start('rescanLinksWorkflow', {
    taskQueue: h.taskQueue,
    workflowId,
    args: [input],
  });
  return { workflowId, report: (await handle.result()) as RescanReport };
}

async function safetyOf(code: string): Promise<string> {
  const [row] = await h.db.sql`SELECT safety FROM links WHERE code = ${code}`;
  return row!.safety as string;
}

describe('rescanLinksWorkflow', () => {
  test('the Schedule is registered idempotently, and a target that turns malicious is blocked within one run', async () => {
    const settings = { taskQueue: h.taskQueue, rescanInterval: '12h' };
    await ensureSchedules(h.temporal.client, settings, h.logger);
    await ensureSchedules(h.temporal.client, settings, h.logger);
    const schedule = h.temporal.client.schedule.getHandle(getRescanScheduleId(h.taskQueue));
    assert.equal(Number((await schedule.describe()).spec.intervals?.[0]?.every), 12 * 3_600_000);
    // A changed interval updates the existing Schedule.
    await ensureSchedules(h.temporal.client, { ...settings, rescanInterval: '6h' }, h.logger);
    assert.equal(Number((await schedule.describe()).spec.intervals?.[0]?.every), 6 * 3_600_000);
    // The reconciliation Schedule beside it.
    await ensureSchedules(h.temporal.client, { ...settings, reconcileInterval: '1d' }, h.logger);
    const reconcileSchedule = h.temporal.client.schedule.getHandle(getReconcileScheduleId(h.taskQueue));
    const described = await reconcileSchedule.describe();
    assert.equal(Number(described.spec.intervals?.[0]?.every), 86_400_000);
    assert.equal(
      described.action.type === 'startWorkflow' && described.action.workflowType,
      'reconcileLinksWorkflow',
    );
    await reconcileSchedule.delete();

    const turning = await createLink('https://news-site.example/story-that-turns');
    const fine = await createLink('https://news-site.example/fine');
    assert.equal(await safetyOf(turning), 'clean');
    assert.equal((await h.app.request(`/${turning}`)).status, 301);

    fake.addThreat('https://news-site.example/story-that-turns', 'SOCIAL_ENGINEERING');
    await schedule.trigger();
    const workflowId = await eventually(
      async () => {
        const d = await schedule.describe();
        return d.info.recentActions[0]?.action.workflow.workflowId;
      },
      { what: 'the scheduled re-scan to start' },
    );
    assert.match(workflowId, new RegExp(`^rescan:${h.taskQueue}`));
    const report = (await h.temporal.client.workflow.getHandle(workflowId).result()) as RescanReport;
    assert.deepEqual(report.changedTo, { blocked: 1 });
    assert.ok(report.verified >= 2);
    assert.equal(await safetyOf(turning), 'blocked');
    assert.equal(await safetyOf(fine), 'clean');
    assert.equal((await h.app.request(`/${turning}`)).status, 451);
    const link = (await (await h.api(`/api/v1/links/${turning}`)).json()) as {
      safety: string;
      safetyReason: string;
    };
    assert.deepEqual(
      [link.safety, link.safetyReason],
      ['blocked', 'Google Safe Browsing lists it as SOCIAL_ENGINEERING'],
    );
    const [run] = await h.db.sql`SELECT kind, status, report FROM ops_runs WHERE workflow_id = ${workflowId}`;
    assert.deepEqual([run!.kind, run!.status, run!.report.reason], ['rescan', 'succeeded', 'schedule']);
    const [audit] = await h.db.sql`
      SELECT actor, reason FROM audit_log WHERE code = ${turning} AND action = 'link.safety_changed'`;
    assert.deepEqual([audit!.actor, audit!.reason], ['system:rescan', `re-scan ${workflowId}`]);
    // The change was queued with its verdict and the sync queue's drainer took it (no workflow of its own).
    await eventually(
      async () =>
        (await syncQueueBatches(h.temporal.client, getSyncQueueWorkflowId(h.taskQueue)))
          .flat()
          .includes(turning)
          ? true
          : undefined,
      { what: 'the drainer to take the blocked link' },
    );
    // Operators find the run by kind.
    const attrs = (await h.temporal.client.workflow.getHandle(workflowId).describe()).typedSearchAttributes;
    assert.equal(attrs.getAll().find((p) => p.key.name === 'LifelineKind')?.value, 'rescan');
    await recordHistory('rescanLinksWorkflow-scheduled', workflowId);
  });

  test('recently clicked links go first; a long run continues as new and still visits each link once', async () => {
    const codes: Record<string, string> = {};
    for (const name of ['r1', 'r2', 'r3', 'r4', 'r5'])
      codes[name] = await createLink(`https://order.example/${name}`);
    await setLastClicked(codes.r3!, 60);
    await setLastClicked(codes.r1!, 120);
    await setLastClicked(codes.r5!, 180);
    const sent = fake.requests.length;
    const workflowId = uniqueId('rescan:test');
    const handle = await h.temporal.client.workflow.start('rescanLinksWorkflow', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ contains: 'order.example', linksPerCall: 1, callsPerRun: 2 } satisfies RescanLinksInput],
    });
    const report = (await handle.result()) as RescanReport;
    const order = fake.requests.slice(sent).flatMap((r) => r.urls);
    const never = [codes.r2!, codes.r4!].sort().map((c) => (c === codes.r2 ? 'r2' : 'r4'));
    assert.deepEqual(
      order,
      ['r3', 'r1', 'r5', ...never].map((n) => `https://order.example/${n}`),
    );
    assert.equal(report.verified, 5);
    assert.equal(report.work.scanned, 5);
    assert.notEqual((await handle.describe()).runId, handle.firstExecutionRunId, 'continued as new');
    await recordHistory('rescanLinksWorkflow-continued-first-run', workflowId, handle.firstExecutionRunId);
    await recordHistory('rescanLinksWorkflow-continued-last-run', workflowId);
  });

  test('a link clicked during a run jumps ahead of the cursor and is caught by the sweep', async () => {
    const a = await createLink('https://sweep.example/a');
    const b = await createLink('https://sweep.example/b');
    await setLastClicked(a, 60);
    const startedAt = new Date(Date.now() + 1_000);
    const first = await listLinksToRescan(h.db.sql, {
      cursor: { phase: 'recent', lastClickedAt: null, code: '' },
      startedAt,
      contains: 'sweep.example',
      limit: 1,
    });
    assert.equal(first.links[0]!.code, a);
    const cursor = first.next;
    // b is clicked now: it sorts before the cursor and the recent phase no longer sees it...
    await setLastClicked(b, 0);
    const recent = await listLinksToRescan(h.db.sql, {
      cursor,
      startedAt,
      contains: 'sweep.example',
      limit: 10,
    });
    assert.equal(recent.links.length, 0);
    // ...the sweep does.
    const swept = await listLinksToRescan(h.db.sql, {
      cursor: { phase: 'sweep', lastClickedAt: null, code: '' },
      startedAt,
      contains: 'sweep.example',
      limit: 10,
    });
    assert.deepEqual(swept.links.map((l) => l.code).sort(), [a, b].sort());
  });

  test('each statement walks one window of its index: sparse matches are found window by window', async () => {
    // 120 links by code, two of them in scope; windows of 25 index entries.
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      SELECT 'win' || lpad(i::text, 3, '0'),
             CASE WHEN i IN (5, 110) THEN 'https://window-match.example/' ELSE 'https://window-other.example/' END || i,
             'active', 'clean', 'api', 'test'
      FROM generate_series(0, 119) AS i`;
    const startedAt = new Date(Date.now() + 1_000);
    const scope = { startedAt, contains: 'window-match.example', limit: 10, window: 25 };
    const first = await listLinksToRescan(h.db.sql, {
      ...scope,
      cursor: { phase: 'sweep', lastClickedAt: null, code: 'win' },
    });
    // win000–win024: one link in scope, then on past the window's end.
    assert.deepEqual(
      first.links.map((l) => l.code),
      ['win005'],
    );
    assert.deepEqual([first.next.code, first.end], ['win024', false]);
    const second = await listLinksToRescan(h.db.sql, { ...scope, cursor: first.next });
    assert.deepEqual([second.links.length, second.next.code, second.end], [0, 'win049', false]);
    let page = second;
    const found: string[] = [];
    let statements = 2;
    while (!page.end) {
      page = await listLinksToRescan(h.db.sql, { ...scope, cursor: page.next });
      found.push(...page.links.map((l) => l.code));
      statements++;
      assert.ok(statements < 1_000, 'the walk ends');
    }
    assert.ok(found.includes('win110'), `found ${found.join(', ')}`);

    // The clicked links by last click, likewise: 60 of them clicked a year ago, a minute apart; one in scope.
    await h.db.sql`
      INSERT INTO link_last_clicks (code, last_clicked_at)
      SELECT 'win' || lpad(i::text, 3, '0'), now() - interval '365 days' - make_interval(mins => i)
      FROM generate_series(60, 119) AS i`;
    const yearAgo = new Date(Date.now() - 364 * 86_400_000).toISOString();
    const clicked = await listLinksToRescan(h.db.sql, {
      ...scope,
      cursor: { phase: 'recent', lastClickedAt: yearAgo, code: '' },
    });
    // win060–win084 by last click: none in scope; the next statement starts past win084.
    assert.deepEqual([clicked.links.length, clicked.next.code, clicked.end], [0, 'win084', false]);
    const next = await listLinksToRescan(h.db.sql, { ...scope, cursor: clicked.next });
    assert.deepEqual([next.links.length, next.next.code], [0, 'win109']);
    // The last ten, then on into the never-clicked links by code.
    const last = await listLinksToRescan(h.db.sql, { ...scope, cursor: next.next });
    assert.equal(last.links[0]?.code, 'win110');
  });

  test('a scoped re-scan of an archive larger than a window finds the links past the first windows', async () => {
    // More links than one statement walks, none in scope, and two in scope after them by code.
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      SELECT 'wide' || lpad(i::text, 5, '0'), 'https://wide-other.example/' || i, 'active', 'clean', 'api', 'test'
      FROM generate_series(1, ${RESCAN_WINDOW + 100}) AS i`;
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      VALUES ('widez1', 'https://wide-match.example/bad', 'active', 'clean', 'api', 'test'),
             ('widez2', 'https://wide-match.example/good', 'active', 'clean', 'api', 'test')`;
    fake.addThreat('https://wide-match.example/bad', 'MALWARE');
    const { report } = await runRescan({ contains: 'wide-match.example' });
    assert.equal(report.verified, 2);
    assert.deepEqual(report.changedTo, { blocked: 1 });
    assert.equal(await safetyOf('widez1'), 'blocked');
    assert.equal(await safetyOf('widez2'), 'clean');
  });

  test('a routing rule target that turns malicious blocks its link, found by the target text it contains', async () => {
    const res = await h.api('/api/v1/links', {
      method: 'POST',
      json: {
        url: 'https://news-site.example/en/routed',
        rules: [{ kind: 'language', values: ['ar'], target: 'https://rule-target.example/ar/routed' }],
      },
    });
    assert.equal(res.status, 201, await res.clone().text());
    const code = ((await res.json()) as { code: string }).code;
    assert.equal(await safetyOf(code), 'clean');
    fake.addThreat('https://rule-target.example/ar/routed', 'MALWARE');
    // A blocklist-style run: only links whose url or rule targets contain the text (ADR 0080).
    const { report } = await runRescan({ contains: 'rule-target.example' });
    assert.deepEqual(report.changedTo, { blocked: 1 });
    assert.equal(await safetyOf(code), 'blocked');
    // Blocked for every reader, whichever target they would have matched.
    assert.equal((await h.app.request(`/${code}`)).status, 451);
    assert.equal((await h.app.request(`/${code}`, { headers: { 'Accept-Language': 'ar' } })).status, 451);
  });

  test('three distinct reader reports keep a link at warn however clean its target scans', async () => {
    const code = await createLink('https://reported.example/');
    for (const who of ['r1', 'r2', 'r3']) {
      await h.db.sql`INSERT INTO reports (code, reporter_hash) VALUES (${code}, ${who})`;
    }
    await h.db
      .sql`UPDATE links SET safety = 'warn', safety_reason = 'reported by 3 readers' WHERE code = ${code}`;
    const { report } = await runRescan({ contains: 'reported.example' });
    assert.equal(await safetyOf(code), 'warn');
    assert.deepEqual(report.changedTo, {});
  });

  test('killing the worker mid-run: its successor resumes, every link is checked, changes are recorded once', async () => {
    await worker?.stop();
    worker = undefined;
    const total = 3_000;
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      SELECT 'kill' || i, 'https://kill' || (i % 50) || '.example/p/' || i, 'active', 'clean', 'api', 'test'
      FROM generate_series(1, ${total}) AS i`;
    fake.addThreat('kill7.example/', 'MALWARE');
    fake.delayNext(800, 12);

    const child = startWorkerProcess({
      h,
      env: { SAFE_BROWSING_API_KEY: fake.apiKey, SAFE_BROWSING_API_BASE_URL: fake.baseUrl },
    });
    try {
      await eventually(async () => (child.ready ? true : undefined), {
        timeoutMs: 60_000,
        what: 'the worker process',
      });
      const before = fake.requests.length;
      const workflowId = uniqueId('rescan:test');
      const handle = await h.temporal.client.workflow.start('rescanLinksWorkflow', {
        taskQueue: h.taskQueue,
        workflowId,
        args: [{ contains: 'example/p/' } satisfies RescanLinksInput],
      });
      await eventually(async () => (fake.requests.length - before >= 3 ? true : undefined), {
        timeoutMs: 60_000,
        what: 'two chunks to complete',
      });
      child.process.kill('SIGKILL');
      await new Promise((r) => child.process.once('exit', r));
      const checkedBeforeKill = fake.requests.slice(before).length;
      assert.ok(checkedBeforeKill < 6, 'killed mid-run');

      worker = await h.startWorker();
      const report = (await handle.result()) as RescanReport;
      assert.equal(report.verified, total);
      assert.deepEqual(report.changedTo, { blocked: total / 50 });
      const urlsSent = fake.requests.slice(before).flatMap((r) => r.urls);
      assert.equal(new Set(urlsSent).size, total);
      // At most the chunk in flight when the worker died is checked twice.
      assert.ok(urlsSent.length <= total + 500, `${urlsSent.length} URLs sent`);
      const [dupes] = await h.db.sql`
        SELECT count(*)::int AS entries, count(DISTINCT code)::int AS links FROM audit_log
        WHERE action = 'link.safety_changed' AND reason = ${`re-scan ${workflowId}`}`;
      assert.deepEqual([dupes!.entries, dupes!.links], [total / 50, total / 50]);
      const [unchecked] = await h.db.sql`
        SELECT count(*)::int AS n FROM links WHERE code LIKE 'kill%' AND safety_checked_at IS NULL`;
      assert.equal(unchecked!.n, 0);
      // Every change reached the sync queue's drainer, the ones recorded before the kill included, and no link
      // got a sync workflow of its own.
      const changedCodes = (
        await h.db.sql<{ code: string }[]>`
          SELECT code FROM audit_log WHERE action = 'link.safety_changed' AND reason = ${`re-scan ${workflowId}`}`
      ).map((r) => r.code);
      await eventually(
        async () => {
          const synced = new Set(
            (await syncQueueBatches(h.temporal.client, getSyncQueueWorkflowId(h.taskQueue))).flat(),
          );
          return changedCodes.every((code) => synced.has(code)) ? true : undefined;
        },
        { what: 'the drainer to take every changed link' },
      );
      for (const code of changedCodes.slice(0, 5))
        assert.equal(await workflowExists(h.temporal.client, getSyncWorkflowId(code)), false, code);
      await recordHistory('rescanLinksWorkflow-worker-killed', workflowId);
    } finally {
      child.process.kill('SIGKILL');
    }
  });
});

// Last: a Safe Browsing failure puts the worker's client into back-off for the rest of the file.
describe('rescanLinksWorkflow while Safe Browsing is down', () => {
  test('an outage never clears a block and never verifies an unknown link', async () => {
    const blocked = await createLink('https://outage.example/was-bad');
    const unknown = await createLink('https://outage.example/unverified');
    await h.db
      .sql`UPDATE links SET safety = 'blocked', safety_reason = 'Google Safe Browsing lists it as MALWARE'
                   WHERE code = ${blocked}`;
    await h.db.sql`UPDATE links SET safety = 'unknown', safety_checked_at = NULL WHERE code = ${unknown}`;
    fake.failNext(503);
    const { report } = await runRescan({ contains: 'outage.example' });
    assert.equal(await safetyOf(blocked), 'blocked');
    assert.equal(await safetyOf(unknown), 'unknown');
    assert.equal(report.unverified, 2);
    assert.deepEqual(report.changedTo, {});
  });
});
