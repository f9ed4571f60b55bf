// The destination checks end to end: links created through the API, the Schedule registered and triggered on the
// Temporal dev server, its workflow checking every new destination against loopback sites, Postgres holding the
// result, and the link page showing the crawl (title, where it lands, redirects, TLS) in English and Arabic.
// The redirect path never fetches a destination.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type DestinationSites, startDestinationSites } from '../../devkit/fakes/destination_sites.ts';
import { createHarness, eventually, HARNESS_ADMIN, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { getLinkDestinationState } from '../../lib/destinations/destination_state.ts';
import { ensureSchedules } from '../../lib/temporal/schedules.ts';
import { type CheckDestinationsReport, getDestinationCheckScheduleId } from '../../workflows/contract.ts';
import { createUiClient, type UiClient } from '../helpers/ui_client.ts';

let h: Harness;
let sites: DestinationSites;
let admin: UiClient;

before(async () => {
  sites = await startDestinationSites();
  sites.set('story.dest-e2e.example', { kind: 'page', paths: ['/story'], title: 'Flood defences hold' });
  sites.set('gone.dest-e2e.example', { kind: 'status', status: 410 });
  sites.set('moved.dest-e2e.example', { kind: 'redirects', hops: 2, status: 302 });
  h = await createHarness({ env: { DESTINATION_CHECK_HOST_RATE: '20' } });
  await h.startWorker({ destinations: { lookup: sites.lookup(), resolveNs: async () => [] } });
  admin = createUiClient(h.app as never);
  assert.equal((await admin.login(HARNESS_ADMIN.email, HARNESS_ADMIN.password)).status, 303);
});
after(async () => {
  await h.temporal.client.schedule
    .getHandle(getDestinationCheckScheduleId(h.taskQueue))
    .delete()
    .catch(() => {});
  await h.close();
  await sites.close();
});

async function createLink(url: string, title?: string): Promise<string> {
  const res = await h.api('/api/v1/links', { method: 'POST', json: { url, ...(title ? { title } : {}) } });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { code: string }).code;
}

describe('checkDestinationsWorkflow', () => {
  test('the Schedule checks new links; the link page shows the crawl; redirects never fetch', async () => {
    const story = await createLink(sites.url('story.dest-e2e.example', '/story'));
    const gone = await createLink(sites.url('gone.dest-e2e.example', '/old'), 'An editor’s title');
    const hopping = await createLink(sites.url('moved.dest-e2e.example', '/hop0'));

    const before = await admin.get(`/ui/links/${story}`);
    assert.equal(before.status, 200);
    assert.match(await before.text(), /Not checked yet/);

    // No destination is fetched on the redirect path, ever.
    const requestsBefore = sites.requests.length;
    assert.equal((await h.app.request(`/${story}`)).status, 301);
    assert.equal((await h.app.request(`/${gone}`)).status, 301);
    assert.equal(sites.requests.length, requestsBefore);

    const settings = { taskQueue: h.taskQueue, rescanInterval: '12h', destinationChecksEvery: '15m' };
    await ensureSchedules(h.temporal.client, settings, h.logger);
    await ensureSchedules(h.temporal.client, settings, h.logger);
    const schedule = h.temporal.client.schedule.getHandle(getDestinationCheckScheduleId(h.taskQueue));
    const described = await schedule.describe();
    assert.equal(Number(described.spec.intervals?.[0]?.every), 15 * 60_000);
    assert.equal(
      described.action.type === 'startWorkflow' && described.action.workflowType,
      'checkDestinationsWorkflow',
    );
    await schedule.trigger();
    const workflowId = await eventually(
      async () => (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId,
      { what: 'the scheduled destination checks to start' },
    );
    const report = (await h.temporal.client.workflow
      .getHandle(workflowId)
      .result()) as CheckDestinationsReport;
    await recordHistory('checkDestinationsWorkflow-scheduled', workflowId);
    assert.equal(report.seeded, 3);
    assert.equal(report.checked, 3);
    assert.deepEqual(report.byOutcome, { ok: 2, gone: 1 });
    assert.ok(sites.requests.length > requestsBefore);
    assert.ok(
      sites.requests.slice(requestsBefore).every((r) => r.userAgent.startsWith('LifelineLinkCheck/1.0 (+')),
    );

    const state = await getLinkDestinationState(h.db.sql, story);
    assert.deepEqual([state?.outcome, state?.verdict, state?.pageTitle], ['ok', 'ok', 'Flood defences hold']);
    const goneState = await getLinkDestinationState(h.db.sql, gone);
    assert.deepEqual(
      [goneState?.outcome, goneState?.verdict, goneState?.httpStatus],
      ['gone', 'suspect', 410],
    );

    const page = await (await admin.get(`/ui/links/${story}`)).text();
    assert.doesNotMatch(page, /Not checked yet/);
    assert.match(page, /data-outcome="ok">Reachable</);
    assert.match(page, /data-page-title="true">Flood defences hold</);
    assert.match(page, /Not encrypted \(http\)/);
    const hopPage = await (await admin.get(`/ui/links/${hopping}`)).text();
    assert.match(hopPage, /Redirects followed/);
    assert.equal((hopPage.match(/<li><code>30[12]<\/code>/g) ?? []).length, 2, 'two redirects listed');
    assert.match(hopPage, /<li><code>200<\/code>/);
    // The editor's title wins: the page's is not shown.
    const gonePage = await (await admin.get(`/ui/links/${gone}`)).text();
    assert.match(gonePage, /data-verdict="suspect">Suspect/);
    assert.doesNotMatch(gonePage, /data-page-title/);

    // An editor whose browser asks for Arabic (no language stored) gets the card in Arabic.
    const arabic = await (
      await admin.get(`/ui/links/${story}`, { 'Accept-Language': 'ar-EG,ar;q=0.9,en;q=0.5' })
    ).text();
    assert.match(arabic, /<html lang="ar" dir="rtl">/);
    assert.match(arabic, /فحص الوجهة/);
    assert.match(arabic, /data-outcome="ok">يمكن الوصول إليها</);
  });

  test('a run resumes across continue-as-new, one check per call, until nothing is due', async () => {
    await h.db.sql`UPDATE destination_states SET next_check_at = now() - interval '1 minute'`;
    const workflowId = uniqueId('destination-checks:test');
    const handle = await h.temporal.client.workflow.start('checkDestinationsWorkflow', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ reason: 'test', checksPerCall: 1, callsPerRun: 1 }],
    });
    const report = (await handle.result()) as CheckDestinationsReport;
    assert.equal(report.checked, 3);
    assert.equal(report.calls, 4, 'three calls that checked one each, and one that found nothing due');
    assert.notEqual(handle.firstExecutionRunId, (await handle.describe()).runId, 'it continued as new');
    await recordHistory(
      'checkDestinationsWorkflow-continued-first-run',
      workflowId,
      handle.firstExecutionRunId,
    );
    await recordHistory('checkDestinationsWorkflow-continued-last-run', workflowId);
    const [due] = await h.db
      .sql`SELECT count(*)::int AS n FROM destination_states WHERE next_check_at <= now()`;
    assert.equal(due!.n, 0);
  });
});
