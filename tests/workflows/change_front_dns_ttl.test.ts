import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { setActiveFront } from '../../lib/failover/active_front.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import type { ChangeFrontReport, FrontChangeStatus } from '../../workflows/contract.ts';
import { startDnsSwitch } from '../helpers/dns_switch.ts';
import { createUiClient } from '../helpers/ui_client.ts';

// A planned switch lowers the short domain's TTL through the DNS adapter, waits out the old TTL with a durable
// timer, switches, verifies and sets the TTL back; the operations page shows each step, and the history names
// them. The zone's old TTL is 61 s here (the DNS helper's setting), so the wait is real: just above the floor.
const DNS_TOKEN = 'dns-automation-token-for-tests';
// Above the 60 s floor of FAILOVER_DNS_LOWERED_TTL_SECONDS, so the switch lowers it and waits it out (61 s).
const OLD_TTL_SECONDS = 61;
let fake: BitlyFake;
let h: Harness;
let dns: Awaited<ReturnType<typeof startDnsSwitch>>;

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  const port = await getFreePort();
  h = await createHarness({
    env: {
      ...fake.env(),
      SHORT_BASE_URL: `http://127.0.0.1:${port}`,
      DNS_ADAPTER_URL: `http://127.0.0.1:${port}/_dns`,
      DNS_ADAPTER_TOKEN: DNS_TOKEN,
      FAILOVER_DNS_TTL_SECONDS: '300',
      FAILOVER_DNS_LOWERED_TTL_SECONDS: '60',
    },
  });
  dns = await startDnsSwitch({
    port,
    app: () => h.app,
    bitly: fake,
    token: DNS_TOKEN,
    front: 'bitly',
    ttlSeconds: OLD_TTL_SECONDS,
  });
  await setActiveFront(h.db.sql, { active: 'bitly', since: new Date().toISOString() });
  // A few active links Bitly holds exactly as we do.
  for (let i = 1; i <= 20; i++) {
    const code = `t${i}`;
    const url = `https://news.example/ttl/${i}`;
    const made = fake.seed({ keyword: code, longUrl: url, tags: ['lifeline'] });
    await h.db
      .sql`INSERT INTO links (code, target_url, status, safety, origin, owner) VALUES (${code}, ${url}, 'active', 'clean', 'api', 'test')`;
    await h.db
      .sql`INSERT INTO vendor_links (code, vendor, vendor_id, state, synced_url, synced_at) VALUES (${code}, 'bitly', ${made.id}, 'synced', ${url}, now())`;
  }
  await h.startWorker();
});
after(async () => {
  await h.close();
  await dns.close();
  await fake.stop();
});

describe('DNS TTL around a planned switch', () => {
  test('lowered, the old TTL waited out by a durable timer, switched, verified, raised again', async () => {
    const res = await h.api('/api/v1/ops/failover', { method: 'POST', json: { to: 'inhouse' } });
    assert.equal(res.status, 202, await res.clone().text());
    const { workflowId } = (await res.json()) as { workflowId: string };
    const handle = h.temporal.client.workflow.getHandle(workflowId);

    // While it waits: the TTL is down, the front not switched yet, and the API and the page say where it stands.
    const waiting = await eventually(
      async () => {
        const state = await handle.query<FrontChangeStatus>('frontChangeStatus');
        return state.step === 'wait out the old DNS TTL' ? state : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50, what: 'the TTL wait' },
    );
    assert.ok(waiting.ttlWaitUntilMs && waiting.ttlWaitUntilMs > Date.now() - 1_000);
    assert.deepEqual(
      waiting.steps?.map((s) => s.name),
      ['lower DNS TTL', 'preflight repair', 'preflight check', 'verify in-house answers'],
    );
    assert.equal(dns.ttlSeconds, 60);
    assert.equal(dns.front, 'bitly', 'not switched before the old TTL ran out');
    const front = (await (await h.api('/api/v1/ops/front')).json()) as {
      inProgress?: { step?: string; dnsTtlWaitUntil?: string; steps?: unknown[] };
    };
    assert.equal(front.inProgress?.step, 'wait out the old DNS TTL');
    assert.ok(front.inProgress?.dnsTtlWaitUntil);
    const admin = createUiClient(h.app as never);
    assert.equal((await admin.login('admin@example.test', 'correct horse battery')).status, 303);
    const page = await (await admin.get('/ui/ops')).text();
    assert.match(page, /✓ lower DNS TTL/);
    assert.match(page, /▶ wait out the old DNS TTL[^<]* until /);
    assert.match(page, /· switch/);
    assert.match(page, /· raise DNS TTL/);

    const report = (await handle.result()) as ChangeFrontReport;
    assert.deepEqual(
      report.steps.map((s) => s.name),
      [
        'lower DNS TTL',
        'preflight repair',
        'preflight check',
        'verify in-house answers',
        'wait out the old DNS TTL',
        'switch',
        'DNS change',
        'verify public front',
        'raise DNS TTL',
      ],
    );
    assert.equal(report.switched, true);
    assert.ok(report.dnsTtl && 'raised' in report.dnsTtl);
    assert.equal(report.dnsTtl.lowered, 60);
    assert.equal(report.dnsTtl.previous, OLD_TTL_SECONDS);
    assert.equal(report.dnsTtl.raised, true);
    assert.ok(report.dnsTtl.waitedMs >= OLD_TTL_SECONDS * 1000, `waited ${report.dnsTtl.waitedMs} ms`);
    // The DNS automation saw: TTL 60, then (the old TTL later) the switch, then the old TTL back.
    assert.deepEqual(
      dns.log.map((l) => l.call),
      ['ttl 60', 'front inhouse', `ttl ${OLD_TTL_SECONDS}`],
    );
    assert.ok(dns.log[1]!.at - dns.log[0]!.at >= OLD_TTL_SECONDS * 1000);
    assert.equal(dns.ttlSeconds, OLD_TTL_SECONDS);

    // The history names its steps: the activities' summaries and the timer's.
    const history = await handle.fetchHistory();
    const summaries = (history.events ?? [])
      .map((e) => e.userMetadata?.summary?.data)
      .filter((d): d is Uint8Array => d instanceof Uint8Array)
      .map((d) => JSON.parse(Buffer.from(d).toString('utf8')) as string);
    assert.deepEqual(summaries, [
      'lower the DNS TTL before the switch',
      `wait out the old DNS TTL (${OLD_TTL_SECONDS} s)`,
      'set the DNS TTL back after the switch',
    ]);
    const timers = (history.events ?? []).filter((e) => e.timerStartedEventAttributes);
    assert.equal(timers.length, 1, 'one durable timer');
    await recordHistory('changeFrontWorkflow-dns-ttl', workflowId);
  });

  test('an emergency switch changes DNS at once, without touching the TTL', async () => {
    const before = dns.log.length;
    const res = await h.api('/api/v1/ops/failover', {
      method: 'POST',
      json: { to: 'bitly', emergency: true },
    });
    assert.equal(res.status, 202, await res.clone().text());
    const { workflowId } = (await res.json()) as { workflowId: string };
    const report = (await h.temporal.client.workflow.getHandle(workflowId).result()) as ChangeFrontReport;
    assert.ok(!report.steps.some((s) => /TTL/.test(s.name)));
    assert.equal(report.dnsTtl, undefined);
    assert.deepEqual(
      dns.log.slice(before).map((l) => l.call),
      ['front bitly'],
    );
  });
});
