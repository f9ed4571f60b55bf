// The domain watch through the Temporal dev server: the Schedule's run reads the short domain's and the app
// host's registration from the RDAP fake (found through its bootstrap file; one registry answers 429 first and
// the workflow retries after its Retry-After), the certificates a real TLS server on loopback serves by SNI
// (one near expiry), and Safe Browsing (the fake lists the short host); Postgres then holds every fact, and the
// web process's /metrics registry shows the days left. A second run meets a registry that refuses, one that
// holds no such domain and a TLD with no RDAP service: each is recorded, the last reading stays.
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { after, before, describe, test } from 'node:test';
import { ScheduleNotFoundError } from '@temporalio/client';
import { type RdapFake, startRdapFake } from '../../devkit/fakes/rdap_fake.ts';
import { type SafeBrowsingFake, startSafeBrowsingFake } from '../../devkit/fakes/safe_browsing_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { getDomainWatchSchedule } from '../../lib/domains/domain_facts.ts';
import type { OutgoingLookup } from '../../lib/shared/outgoing_request.ts';
import { type DomainFactRow, listDomainFacts } from '../../lib/stores/domain_watch_store.ts';
import { ensureSchedules } from '../../lib/temporal/schedules.ts';
import {
  getDomainWatchScheduleId,
  getRescanScheduleId,
  type WatchDomainsReport,
  WORKFLOW_TYPES,
} from '../../workflows/contract.ts';
import {
  createTestCa,
  startTestTlsServer,
  type TestCa,
  type TestTlsServer,
} from '../helpers/tls_certificates.ts';

const DAY = 86_400_000;
const SHORT = 'shrt.test';
const APP = 'links.newsroom.example';
const toLoopback: OutgoingLookup = (_host, _o, callback) =>
  callback(null, [{ address: '127.0.0.1', family: 4 } as LookupAddress]);

let h: Harness;
let rdap: RdapFake;
let safeBrowsing: SafeBrowsingFake;
let ca: TestCa;
let tls: TestTlsServer;
const now = Date.now();

before(async () => {
  rdap = await startRdapFake();
  rdap.addRegistry('tld-test', ['test']);
  rdap.addRegistry('tld-example', ['example']);
  rdap.setDomain('tld-test', SHORT, {
    expiresAt: new Date(now + 20 * DAY),
    statuses: ['client transfer prohibited', 'active'],
    delegationSigned: true,
  });
  rdap.setDomain('tld-example', 'newsroom.example', {
    expiresAt: new Date(now + 300 * DAY),
    statuses: ['active'],
    delegationSigned: false,
  });
  safeBrowsing = await startSafeBrowsingFake();
  safeBrowsing.addThreat(`${SHORT}/`, 'SOCIAL_ENGINEERING');
  ca = createTestCa();
  const at = (days: number) => new Date(now + days * DAY);
  tls = await startTestTlsServer(ca.issue(['fallback.test'], at(-1), at(90)));
  tls.serve(SHORT, ca.issue([SHORT], at(-85), at(5)));
  tls.serve(APP, ca.issue([APP], at(-10), at(80)));
  h = await createHarness({
    env: {
      SHORT_BASE_URL: `https://${SHORT}`,
      APP_BASE_URL: `https://${APP}`,
      DOMAIN_WATCH_RDAP_BOOTSTRAP_URL: rdap.bootstrapUrl,
      DOMAIN_WATCH_TLS_PORT: String(tls.port),
      DOMAIN_WATCH_INTERVAL: '12h',
      SAFE_BROWSING_API_KEY: safeBrowsing.apiKey,
      SAFE_BROWSING_API_BASE_URL: safeBrowsing.baseUrl,
    },
  });
  await h.startWorker({ domainWatch: { lookup: toLoopback, ca: [ca.caPem] } });
});
after(async () => {
  for (const id of [getDomainWatchScheduleId(h.taskQueue), getRescanScheduleId(h.taskQueue)]) {
    await h.temporal.client.schedule
      .getHandle(id)
      .delete()
      .catch(() => {});
  }
  await h.close();
  await tls.close();
  ca.close();
  await rdap.stop();
  await safeBrowsing.close();
});

const factsBy = async () =>
  new Map<string, DomainFactRow>((await listDomainFacts(h.db.sql)).map((r) => [`${r.subject} ${r.fact}`, r]));

/** One sample of the web process's registry: `name{labels} value` lines. */
async function metricValue(name: string, labels: string): Promise<number | undefined> {
  const text = await h.deps.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('watchDomainsWorkflow', () => {
  test('the Schedule reads registration, certificates and reputation into Postgres; /metrics shows them', async () => {
    const schedule = getDomainWatchSchedule(h.config);
    assert.deepEqual(schedule, {
      interval: '12h',
      hosts: [SHORT, APP],
      domains: [SHORT, 'newsroom.example'],
    });
    const settings = { taskQueue: h.taskQueue, rescanInterval: '12h', domainWatch: schedule };
    await ensureSchedules(h.temporal.client, settings, h.logger);
    const handle = h.temporal.client.schedule.getHandle(getDomainWatchScheduleId(h.taskQueue));
    const described = await handle.describe();
    assert.equal(Number(described.spec.intervals?.[0]?.every), 12 * 3_600_000);
    assert.ok(described.action.type === 'startWorkflow');
    assert.equal(described.action.workflowType, WORKFLOW_TYPES.watchDomains);
    assert.deepEqual(described.action.args, [
      { reason: 'schedule', hosts: [SHORT, APP], domains: [SHORT, 'newsroom.example'] },
    ]);

    // The .example registry is busy: its first answer is 429 with Retry-After: 1.
    rdap.reset();
    rdap.rateLimitNext('tld-example', 1);
    await handle.trigger();
    const workflowId = await eventually(
      async () => (await handle.describe()).info.recentActions[0]?.action.workflow.workflowId,
      { what: 'the triggered run' },
    );
    const report = (await h.temporal.client.workflow.getHandle(workflowId).result()) as WatchDomainsReport;
    await recordHistory('watchDomainsWorkflow-scheduled', workflowId);
    assert.deepEqual(report, { read: 10, failed: [], flagged: [SHORT] });

    const example = rdap.queriesTo('tld-example');
    assert.deepEqual(
      example.map((q) => [q.name, q.status]),
      [
        ['newsroom.example', 429],
        ['newsroom.example', 200],
      ],
      'retried once, by the workflow',
    );
    assert.ok(example[1]!.at - example[0]!.at >= 950, 'not before the registry’s Retry-After');
    assert.equal(rdap.bootstrapFetches(), 1);

    const facts = await factsBy();
    assert.equal(facts.size, 10);
    const pick = (key: string) => {
      const row = facts.get(key);
      assert.ok(row, key);
      return { ok: row.ok, error: row.error, read: row.readAt !== null };
    };
    assert.deepEqual(pick(`${SHORT} registration`), { ok: false, error: null, read: true }, '20 days left');
    assert.deepEqual(pick(`${SHORT} dnssec`), { ok: true, error: null, read: true });
    assert.deepEqual(pick(`${SHORT} lock`), { ok: true, error: null, read: true });
    assert.deepEqual(pick('newsroom.example registration'), { ok: true, error: null, read: true });
    assert.deepEqual(pick('newsroom.example dnssec'), { ok: false, error: null, read: true });
    assert.deepEqual(pick('newsroom.example lock'), { ok: false, error: null, read: true });
    assert.deepEqual(pick(`${SHORT} certificate`), { ok: false, error: null, read: true }, '5 days left');
    assert.deepEqual(pick(`${APP} certificate`), { ok: true, error: null, read: true });
    assert.deepEqual(pick(`${SHORT} reputation`), { ok: false, error: null, read: true });
    assert.deepEqual(pick(`${APP} reputation`), { ok: true, error: null, read: true });
    assert.deepEqual(facts.get(`${SHORT} reputation`)?.detail, { threats: ['SOCIAL_ENGINEERING'] });
    assert.equal(facts.get(`${APP} certificate`)?.detail.issuer, 'Lifeline Tests — Lifeline Test CA');

    const registrationDays = await metricValue('lifeline_domain_registration_days_left', `domain="${SHORT}"`);
    assert.ok(
      registrationDays !== undefined && Math.abs(registrationDays - 20) < 0.01,
      String(registrationDays),
    );
    const certificateDays = await metricValue('lifeline_tls_certificate_days_left', `host="${SHORT}"`);
    assert.ok(certificateDays !== undefined && Math.abs(certificateDays - 5) < 0.01, String(certificateDays));
    assert.equal(await metricValue('lifeline_domain_watch_ok', `domain="${SHORT}",fact="reputation"`), 0);
    assert.equal(await metricValue('lifeline_domain_watch_ok', `domain="${APP}",fact="certificate"`), 1);
    const readAt = await metricValue(
      'lifeline_domain_watch_read_timestamp_seconds',
      `domain="newsroom.example",fact="registration"`,
    );
    assert.ok(readAt !== undefined && Math.abs(readAt - Date.now() / 1000) < 120, String(readAt));
  });

  test('a refusal, an unknown domain and a TLD without RDAP: recorded; what was read before stays', async () => {
    const before = (await factsBy()).get(`${SHORT} registration`)!;
    rdap.reset();
    rdap.server.failNext({ path: '/tld-test/domain/shrt', answer: { status: 403, body: '' } });
    const report = (await h.temporal.client.workflow.execute(WORKFLOW_TYPES.watchDomains, {
      taskQueue: h.taskQueue,
      workflowId: uniqueId('domain-watch-manual'),
      args: [{ reason: 'manual', hosts: [], domains: [SHORT, 'gone.test', 'orphan.invalid'] }],
    })) as WatchDomainsReport;
    assert.equal(report.read, 3, 'gone.test: three facts read (registration bad, the rest unknown)');
    assert.deepEqual(
      report.failed.map((f) => [f.subject, f.facts.join(',')]),
      [
        [SHORT, 'registration,dnssec,lock'],
        ['orphan.invalid', 'registration,dnssec,lock'],
      ],
    );
    assert.match(report.failed[0]!.error, /answered 403/);
    assert.match(report.failed[1]!.error, /no RDAP service for orphan\.invalid/);
    assert.deepEqual(
      rdap.queriesTo('tld-test').map((q) => [q.name, q.status]),
      [
        [SHORT, 403],
        ['gone.test', 404],
      ],
      'a refusal is not retried',
    );

    const facts = await factsBy();
    const kept = facts.get(`${SHORT} registration`)!;
    assert.equal(kept.ok, false);
    assert.equal(kept.expiresAt?.getTime(), before.expiresAt?.getTime());
    assert.equal(kept.readAt?.getTime(), before.readAt?.getTime());
    assert.match(kept.error ?? '', /answered 403/);
    assert.ok(kept.checkedAt.getTime() > before.checkedAt.getTime());
    const gone = facts.get('gone.test registration')!;
    assert.deepEqual([gone.ok, gone.error, gone.detail.notFound], [false, null, true]);
    const orphan = facts.get('orphan.invalid registration')!;
    assert.deepEqual([orphan.ok, orphan.readAt], [null, null]);
    assert.match(orphan.error ?? '', /no RDAP service/);
    // Unknown facts have no `ok` series; a registration never read has no days left. (A scrape within a second
    // of the last one shares its read, so the new rows show at the next.)
    await eventually(
      async () =>
        (await metricValue('lifeline_domain_watch_ok', `domain="gone.test",fact="registration"`)) === 0 ||
        undefined,
      { what: 'the second run in /metrics' },
    );
    assert.equal(
      await metricValue('lifeline_domain_watch_ok', `domain="orphan.invalid",fact="registration"`),
      undefined,
    );
    assert.equal(await metricValue('lifeline_domain_watch_ok', `domain="gone.test",fact="registration"`), 0);
    assert.equal(
      await metricValue('lifeline_domain_registration_days_left', `domain="gone.test"`),
      undefined,
    );
  });

  test('DOMAIN_WATCH_INTERVAL=off: the next start removes the Schedule', async () => {
    const handle = h.temporal.client.schedule.getHandle(getDomainWatchScheduleId(h.taskQueue));
    await handle.describe();
    await ensureSchedules(h.temporal.client, { taskQueue: h.taskQueue, rescanInterval: '12h' }, h.logger);
    await assert.rejects(handle.describe(), (e) => e instanceof ScheduleNotFoundError);
  });
});
