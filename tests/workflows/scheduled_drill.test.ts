// The failover drill and the prober on their Schedules: registered with the others (and removed when `off`); the
// drill Schedule's run through the Temporal dev server drills towards in-house on a real worker, its report and
// the prober's card on the operations page in English and Arabic, its result in the drill gauges; a drill that
// finds another front change running is skipped.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ScheduleNotFoundError } from '@temporalio/client';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { getDrillGaugeValues } from '../../lib/failover/scheduled_drill.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { createProcessMetrics, registerDrillGauges } from '../../lib/shared/metrics.ts';
import { ensureSchedules } from '../../lib/temporal/schedules.ts';
import {
  getDrillScheduleId,
  getProbeScheduleId,
  type ScheduledDrillReport,
} from '../../workflows/contract.ts';
import { createUiClient, type UiClient } from '../helpers/ui_client.ts';

let h: Harness;
let admin: UiClient;
const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };
const quiet = createLogger({ level: 'silent' });
const AR = { 'Accept-Language': 'ar-EG,ar;q=0.9,en;q=0.5' };
const EN = { 'Accept-Language': 'en-GB,en;q=0.9' };

before(async () => {
  h = await createHarness({ env: { PROBE_INTERVAL: '1m', DRILL_INTERVAL: '7d' } });
  await h.db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    SELECT 'sd' || i, 'https://news.example/sd/' || i, 'active', 'clean', 'api', 'test'
    FROM generate_series(1, 300) AS i`;
  await h.startWorker();
  admin = createUiClient(h.app as never);
  assert.equal((await admin.login(ADMIN.email, ADMIN.password, EN)).status, 303);
});
after(async () => {
  await h.close();
});

const settings = (on: boolean) => ({
  taskQueue: h.taskQueue,
  rescanInterval: '12h',
  probeInterval: on ? '1m' : undefined,
  drill: on ? { interval: '7d', dnsTtlSeconds: 300 } : undefined,
});

async function scheduledDrills(): Promise<
  { status: string; workflowId: string; report: Record<string, unknown> }[]
> {
  return h.db.sql<{ status: string; workflowId: string; report: Record<string, unknown> }[]>`
    SELECT status, workflow_id AS "workflowId", report FROM ops_runs
    WHERE kind = 'drill' AND report->>'requestedBy' = 'schedule' ORDER BY id`;
}

describe('the prober and drill Schedules', () => {
  test('registered with their intervals and workflows, unchanged on a second start', async () => {
    await ensureSchedules(h.temporal.client, settings(true), quiet);
    await ensureSchedules(h.temporal.client, settings(true), quiet);
    const probe = await h.temporal.client.schedule.getHandle(getProbeScheduleId(h.taskQueue)).describe();
    assert.equal(probe.action.type === 'startWorkflow' && probe.action.workflowType, 'probeWorkflow');
    assert.equal(Number(probe.spec.intervals?.[0]?.every), 60_000);
    const drill = await h.temporal.client.schedule.getHandle(getDrillScheduleId(h.taskQueue)).describe();
    assert.equal(
      drill.action.type === 'startWorkflow' && drill.action.workflowType,
      'scheduledDrillWorkflow',
    );
    assert.equal(Number(drill.spec.intervals?.[0]?.every), 7 * 86_400_000);
    assert.deepEqual(drill.action.type === 'startWorkflow' && drill.action.args, [
      { reason: 'schedule', dnsTtlSeconds: 300 },
    ]);
  });

  test("the drill Schedule's run drills towards in-house; its report on the ops page in English and Arabic", async () => {
    await h.temporal.client.schedule.getHandle(getDrillScheduleId(h.taskQueue)).trigger();
    const [run] = await eventually(
      async () => {
        const runs = await scheduledDrills();
        return runs.length > 0 && runs[0]!.status !== 'running' ? runs : undefined;
      },
      { timeoutMs: 120_000, what: 'the scheduled drill' },
    );
    assert.equal(run?.status, 'succeeded', JSON.stringify(run?.report));
    assert.match(run!.workflowId, /^drill:inhouse:scheduled:\d{4}-/);
    assert.equal(run!.report.to, 'inhouse');
    assert.deepEqual(run!.report.verify, { checked: 300, mismatched: 0, examples: [] });
    assert.equal(run!.report.switched, false);
    assert.equal(run!.report.estimatedFailoverMs, (run!.report.automatedMs as number) + 300_000);

    const [gauge] = await getDrillGaugeValues(h.db.sql);
    assert.equal(gauge?.to, 'inhouse');
    assert.equal(gauge?.passed, true);
    assert.ok(Math.abs(gauge!.lastSuccessSeconds! - Date.now() / 1000) < 300);

    const en = await (await admin.get('/ui/ops', EN)).text();
    const drillCard = en.slice(en.indexOf('Last failover drill'));
    assert.match(drillCard, /Succeeded/);
    assert.match(drillCard, /the schedule/);
    assert.ok(drillCard.includes(run!.workflowId));
    assert.match(en, /Probes of the short domain/);
    assert.match(en, /The failover drill also runs on its own every 7d\./);
    const ar = await (await admin.get('/ui/ops', AR)).text();
    assert.match(ar, /<html[^>]+dir="rtl"/);
    const arCard = ar.slice(ar.indexOf('آخر تمرين على التحويل الاحتياطي'));
    assert.ok(arCard.length < ar.length, 'the Arabic drill card');
    assert.match(arCard, /الجدول الزمني/);
    assert.ok(arCard.includes(run!.workflowId));
    assert.match(ar, /فحوص النطاق القصير/);

    if (process.env.LIFELINE_RECORD_HISTORIES) {
      const listed = h.temporal.client.workflow.list({
        query: `WorkflowType = 'scheduledDrillWorkflow' AND TaskQueue = '${h.taskQueue}'`,
      });
      for await (const execution of listed) {
        await recordHistory('scheduledDrillWorkflow-passed', execution.workflowId, execution.runId);
        break;
      }
    }
  });

  test('a drill that fails is 0 in lifeline_drill_last_result; the next passing one brings it back to 1', async () => {
    const registry = createProcessMetrics();
    registerDrillGauges(registry, () => getDrillGaugeValues(h.db.sql));
    await h.db.sql`
      INSERT INTO ops_runs (kind, workflow_id, status, report, finished_at)
      VALUES ('drill', ${`drill:inhouse:test-${randomUUID()}`}, 'failed', '{"to": "inhouse", "failedAt": "preflight check"}', now() + interval '1 second')`;
    const text = await registry.metrics();
    assert.match(text, /^lifeline_drill_last_result\{to="inhouse",domain="[^"]*"\} 0$/m);
    const success =
      /^lifeline_drill_last_success_timestamp_seconds\{to="inhouse",domain="[^"]*"\} (\S+)$/m.exec(text);
    assert.ok(success && Math.abs(Number(success[1]) - Date.now() / 1000) < 300, text);
    assert.doesNotMatch(text, /to="bitly"/, 'no drill towards Bitly: no series');
  });

  test('another front change running: the scheduled drill is skipped, and says which ran', async () => {
    const running = `failover:inhouse:test-${randomUUID()}`;
    await h.db
      .sql`INSERT INTO ops_runs (kind, workflow_id, report) VALUES ('failover', ${running}, '{"to": "inhouse"}')`;
    try {
      const report = (await h.temporal.client.workflow.execute('scheduledDrillWorkflow', {
        workflowId: `drill-schedule:test:${randomUUID()}`,
        taskQueue: h.taskQueue,
        args: [{ reason: 'test', dnsTtlSeconds: 300 }],
      })) as ScheduledDrillReport;
      assert.deepEqual(report, { workflowId: null, outcome: 'skipped', running });
    } finally {
      await h.db
        .sql`UPDATE ops_runs SET status = 'cancelled', finished_at = now() WHERE workflow_id = ${running}`;
    }
  });

  test('`off` removes both Schedules', async () => {
    await ensureSchedules(h.temporal.client, settings(false), quiet);
    for (const id of [getProbeScheduleId(h.taskQueue), getDrillScheduleId(h.taskQueue)]) {
      await assert.rejects(h.temporal.client.schedule.getHandle(id).describe(), ScheduleNotFoundError);
    }
  });
});
