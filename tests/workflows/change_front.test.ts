import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { startWorkerProcess } from '../../devkit/harness/worker_process.ts';
import { setActiveFront } from '../../lib/failover/active_front.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import type { ChangeFrontInput, ChangeFrontReport } from '../../workflows/contract.ts';
import { startDnsSwitch } from '../helpers/dns_switch.ts';

// Failover with a DNS adapter: the short domain is a local server that answers as Bitly or as our web tier,
// and the adapter is the real webhook adapter calling its DNS endpoint.
let fake: BitlyFake;
let h: Harness;
let dns: Awaited<ReturnType<typeof startDnsSwitch>>;
let worker: { stop(): Promise<void> } | undefined;
const DNS_TOKEN = 'dns-automation-token-for-tests';

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
    },
  });
  dns = await startDnsSwitch({ port, app: () => h.app, bitly: fake, token: DNS_TOKEN, front: 'bitly' });
  await setActiveFront(h.db.sql, { active: 'bitly', since: new Date().toISOString() });
  worker = await h.startWorker();
});
after(async () => {
  await h.close();
  await dns.close();
  await fake.stop();
});

/** `n` active links that Bitly holds exactly as we do (what a healthy deployment looks like). */
async function seedSyncedLinks(prefix: string, n: number): Promise<void> {
  await h.db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    SELECT ${prefix} || i, 'https://news.example/' || ${prefix} || '/' || i, 'active', 'clean', 'api', 'test'
    FROM generate_series(1, ${n}) AS i`;
  const mappings: { code: string; vendorId: string; url: string }[] = [];
  for (let i = 1; i <= n; i++) {
    const code = `${prefix}${i}`;
    const url = `https://news.example/${prefix}/${i}`;
    const made = fake.seed({ keyword: code, longUrl: url, tags: ['lifeline'] });
    mappings.push({ code, vendorId: made.id, url });
  }
  await h.db.sql`
    INSERT INTO vendor_links (code, vendor, vendor_id, state, synced_url, synced_at)
    SELECT t.code, 'bitly', t.vendor_id, 'synced', t.url, now()
    FROM unnest(${h.db.sql.array(mappings.map((m) => m.code))}::text[],
                ${h.db.sql.array(mappings.map((m) => m.vendorId))}::text[],
                ${h.db.sql.array(mappings.map((m) => m.url))}::text[]) AS t(code, vendor_id, url)`;
}

async function front(): Promise<{
  active: string;
  lastDrill?: { estimatedFailoverMs: number; status: string };
}> {
  return (await (await h.api('/api/v1/ops/front')).json()) as never;
}

describe('changeFrontWorkflow', () => {
  test('a drill on 10,000 links completes, changes nothing, and reports how long a real failover takes', async () => {
    await seedSyncedLinks('d', 10_000);
    const res = await h.api('/api/v1/ops/failover', { method: 'POST', json: { to: 'inhouse', drill: true } });
    assert.equal(res.status, 202, await res.clone().text());
    const { workflowId } = (await res.json()) as { workflowId: string };
    assert.match(workflowId, /^drill:inhouse:/);
    // One at a time.
    const second = await h.api('/api/v1/ops/failover', { method: 'POST', json: { to: 'inhouse' } });
    assert.equal(second.status, 409);
    const during = (await (await h.api('/api/v1/ops/front')).json()) as {
      inProgress?: { workflowId: string };
    };
    assert.equal(during.inProgress?.workflowId, workflowId);

    const report = (await h.temporal.client.workflow.getHandle(workflowId).result()) as ChangeFrontReport;
    assert.equal(report.verify.checked, 10_000);
    assert.equal(report.verify.mismatched, 0);
    assert.equal(report.switched, false);
    assert.deepEqual(
      report.steps.map((s) => s.name),
      ['preflight repair', 'preflight check', 'verify in-house answers'],
    );
    assert.equal(report.estimatedFailoverMs, report.automatedMs + 300_000);
    assert.deepEqual(report.preflight?.check.bitly?.drift, {});
    assert.equal((await front()).active, 'bitly', 'a drill never switches');
    assert.deepEqual(dns.calls, []);
    const lastDrill = (await front()).lastDrill;
    assert.equal(lastDrill?.status, 'succeeded');
    assert.equal(lastDrill?.estimatedFailoverMs, report.estimatedFailoverMs);
    console.log(
      `drill on 10,000 links: ${report.durationMs} ms (${report.steps.map((s) => `${s.name} ${s.ms} ms`).join(', ')}); estimated failover ${report.estimatedFailoverMs} ms with a 300 s TTL`,
    );
    await recordHistory('changeFrontWorkflow-drill', workflowId);
  });

  test('a failover killed mid-verification resumes on a new worker: switched once, every code checked once', async () => {
    await worker?.stop();
    worker = undefined;
    const child = startWorkerProcess({
      h,
      env: { ...fake.env(), DNS_ADAPTER_URL: `${dns.url}/_dns`, DNS_ADAPTER_TOKEN: DNS_TOKEN },
    });
    try {
      await eventually(async () => (child.ready ? true : undefined), {
        timeoutMs: 60_000,
        what: 'the worker process',
      });
      const workflowId = `failover:inhouse:test-${Date.now()}`;
      const handle = await h.temporal.client.workflow.start('changeFrontWorkflow', {
        taskQueue: h.taskQueue,
        workflowId,
        args: [
          {
            to: 'inhouse',
            drill: false,
            requestedBy: 'test',
            dnsTtlSeconds: 300,
            verifyPerCall: 1_000,
          } satisfies ChangeFrontInput,
        ],
      });
      await eventually(
        async () => {
          const state = await handle.query<{ step: string; verified: number }>('frontChangeStatus');
          return state.step === 'verify in-house answers' && state.verified >= 2_000 ? true : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 100, what: 'verification under way' },
      );
      child.process.kill('SIGKILL');
      await new Promise((r) => child.process.once('exit', r));
      assert.equal((await front()).active, 'bitly', 'killed before the switch');

      worker = await h.startWorker();
      const report = (await handle.result()) as ChangeFrontReport;
      const total = (await h.db.sql`SELECT count(*)::int AS n FROM links WHERE status = 'active'`)[0]!
        .n as number;
      assert.equal(report.verify.checked, total, 'each active code counted once');
      assert.equal(report.switched, true);
      assert.equal(report.dns, 'adapter');
      assert.deepEqual(dns.calls, ['inhouse']);
      assert.equal(dns.front, 'inhouse');
      assert.equal((await front()).active, 'inhouse');
      const switches = await h.db
        .sql`SELECT after->>'active' AS active FROM audit_log WHERE action = 'front.switched'`;
      assert.deepEqual(
        switches.map((s) => s.active),
        ['inhouse'],
      );
      const [run] = await h.db.sql`SELECT kind, status FROM ops_runs WHERE workflow_id = ${workflowId}`;
      assert.deepEqual([run?.kind, run?.status], ['failover', 'succeeded']);
      // Readers now reach our resolver through the short domain.
      const reached = await fetch(`${dns.url}/d42`, { redirect: 'manual' });
      assert.deepEqual([reached.status, reached.headers.get('Location')], [301, 'https://news.example/d/42']);
      assert.equal((await fetch(`${dns.url}/healthz`)).status, 200);
      await recordHistory('changeFrontWorkflow-failover-worker-killed', workflowId);
    } finally {
      child.process.kill('SIGKILL');
    }
  });

  test('failing back to Bitly: the preflight proves Bitly holds every active code, then DNS follows', async () => {
    const res = await h.api('/api/v1/ops/failover', { method: 'POST', json: { to: 'bitly' } });
    assert.equal(res.status, 202, await res.clone().text());
    const { workflowId } = (await res.json()) as { workflowId: string };
    assert.match(workflowId, /^failback:bitly:/);
    const report = (await h.temporal.client.workflow.getHandle(workflowId).result()) as ChangeFrontReport;
    assert.deepEqual(report.preflight?.check.bitly?.drift, {});
    assert.equal(report.dns, 'adapter');
    assert.equal(dns.front, 'bitly');
    assert.equal((await front()).active, 'bitly');
    // Already the active front: nothing to fail over to.
    assert.equal(
      (await h.api('/api/v1/ops/failover', { method: 'POST', json: { to: 'bitly' } })).status,
      409,
    );
  });
});
