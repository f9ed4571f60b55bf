// Fronts per short domain (ADR 0073), through the real app, worker, Temporal dev server, Postgres and the Bitly
// fake: two domains (`127.0.0.1`, the default, and `localhost`) served by one local server that answers each Host
// as the front its own "DNS" points at. A failback of the second domain to Bitly switches that domain only: the
// DNS adapter is asked for it by name, its public check goes through its own base URL, the default stays in-house.
// A drill of one domain verifies that domain's links only; the drill Schedule's workflow drills each domain in
// turn, and the drill gauges carry the domain.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { getActiveFront } from '../../lib/failover/active_front.ts';
import { getDrillGaugeValues } from '../../lib/failover/scheduled_drill.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import type { ScheduledDrillReport } from '../../workflows/contract.ts';

const HOME = '127.0.0.1';
const TWO = 'localhost';
const BITLY_TWO = 'bit.two.test';
const DNS_TOKEN = 'dns-automation-token-for-tests';

let fake: BitlyFake;
let h: Harness;
let port: number;
let server: ReturnType<typeof createServer>;
/** What each domain's "DNS" points at, and every call the DNS adapter made. */
const fronts = new Map<string, 'bitly' | 'inhouse'>([
  [HOME, 'inhouse'],
  [TWO, 'inhouse'],
]);
const dnsCalls: Record<string, unknown>[] = [];

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const host = String(req.headers.host ?? '');
  const name = host.replace(/:\d+$/, '');
  const url = new URL(req.url ?? '/', `http://${host}`);
  if (url.pathname === '/_dns' && req.method === 'POST') {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.headers.authorization !== `Bearer ${DNS_TOKEN}`) return void res.writeHead(401).end();
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    dnsCalls.push(body);
    if (body.action === 'setTtl') return void res.writeHead(501).end();
    fronts.set(typeof body.domain === 'string' ? body.domain : HOME, body.front as 'bitly' | 'inhouse');
    return void res.writeHead(204).end();
  }
  if (fronts.get(name) === 'bitly') {
    const link = fake.linkByKeyword(url.pathname.slice(1), name === TWO ? BITLY_TWO : fake.domains[0]);
    if (!link || link.archived) res.writeHead(404).end('Not Found');
    else res.writeHead(301, { Location: link.longUrl }).end();
    return;
  }
  const answer = await h.app.fetch(new Request(url, { method: req.method ?? 'GET', headers: { host } }));
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, key) => {
    headers[key] = value;
  });
  res.writeHead(answer.status, headers).end(Buffer.from(await answer.arrayBuffer()));
}

before(async () => {
  fake = await startBitlyFake({ domains: ['bit.home.test', BITLY_TWO] });
  port = await getFreePort();
  h = await createHarness({
    env: {
      ...fake.env(),
      SHORT_BASE_URL: `http://${HOME}:${port}`,
      SHORT_DOMAINS: `${HOME},${TWO}`,
      BITLY_DOMAINS: `${TWO}=${BITLY_TWO}`,
      DNS_ADAPTER_URL: `http://${HOME}:${port}/_dns`,
      DNS_ADAPTER_TOKEN: DNS_TOKEN,
      FAILOVER_DNS_TTL_SECONDS: '300',
    },
  });
  server = createServer((req, res) => {
    handle(req, res).catch((error) => res.writeHead(500).end(String(error)));
  });
  // Both families: `localhost` may resolve to ::1 first.
  await new Promise<void>((resolve) => server.listen(port, '::', resolve));
  await h.startWorker({ vendors: { retryBaseMs: 50, retryMaxMs: 500 } });
});
after(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await h?.close();
  await fake?.stop();
});

/** Creates `n` links on a domain through the API and waits until Bitly holds each (its sync workflow). */
async function makeLinks(domain: string, prefix: string, n: number): Promise<string[]> {
  const codes: string[] = [];
  for (let i = 1; i <= n; i++) {
    const res = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: `https://news.example/${prefix}/${i}`, alias: `${prefix}${i}`, domain },
    });
    assert.equal(res.status, 201, await res.clone().text());
    codes.push(`${prefix}${i}`);
  }
  for (const code of codes) {
    const key = domain === HOME ? code : `${domain}/${code}`;
    await eventually(
      async () => {
        const [row] = await h.db.sql<{ state: string }[]>`
          SELECT state FROM vendor_links WHERE code = ${key} AND vendor = 'bitly'`;
        return row?.state === 'synced' ? true : undefined;
      },
      { timeoutMs: 60_000, what: `Bitly sync of ${key}` },
    );
  }
  return codes;
}

async function waitForRun(workflowId: string): Promise<{ status: string; report: Record<string, unknown> }> {
  return eventually(
    async () => {
      const [run] = await h.db.sql<{ status: string; report: Record<string, unknown> }[]>`
        SELECT status, report FROM ops_runs WHERE workflow_id = ${workflowId}`;
      return run && run.status !== 'running' ? run : undefined;
    },
    { timeoutMs: 180_000, what: workflowId },
  );
}

interface FrontJson {
  active: string;
  domain: string;
  domains: { domain: string; active: string; since: string | null; lastDrill?: { workflowId: string } }[];
}

describe('fronts per short domain', () => {
  test('GET /ops/front lists each domain; a domain that is not configured is refused by name', async () => {
    const front = (await (await h.api('/api/v1/ops/front')).json()) as FrontJson;
    assert.equal(front.domain, HOME);
    assert.deepEqual(
      front.domains.map((d) => [d.domain, d.active]),
      [
        [HOME, 'inhouse'],
        [TWO, 'inhouse'],
      ],
    );
    const bad = await h.api('/api/v1/ops/failover', {
      method: 'POST',
      json: { to: 'inhouse', drill: true, domain: 'elsewhere.test' },
    });
    assert.equal(bad.status, 422);
    assert.match(await bad.text(), /"domain"/);
  });

  test('a drill of the second domain verifies its links only, and names it', async () => {
    await makeLinks(HOME, 'hm', 3);
    await makeLinks(TWO, 'tw', 2);
    const res = await h.api('/api/v1/ops/failover', {
      method: 'POST',
      json: { to: 'inhouse', drill: true, domain: TWO },
    });
    assert.equal(res.status, 202, await res.clone().text());
    const { workflowId } = (await res.json()) as { workflowId: string };
    assert.match(workflowId, new RegExp(`^drill:inhouse:${TWO}:\\d{4}-`));
    const run = await waitForRun(workflowId);
    assert.equal(run.status, 'succeeded', JSON.stringify(run.report));
    assert.equal(run.report.domain, TWO);
    assert.deepEqual(run.report.verify, { checked: 2, mismatched: 0, examples: [] });
    const front = (await (await h.api('/api/v1/ops/front')).json()) as FrontJson;
    assert.equal(front.domains[1]!.lastDrill?.workflowId, workflowId);
    assert.equal(front.domains[0]!.lastDrill, undefined, 'the default domain has not been drilled');
  });

  test('a failback of the second domain to Bitly switches that domain only', async () => {
    const res = await h.api('/api/v1/ops/failover', {
      method: 'POST',
      json: { to: 'bitly', domain: TWO, emergency: true },
    });
    assert.equal(res.status, 202, await res.clone().text());
    const { workflowId } = (await res.json()) as { workflowId: string };
    assert.match(workflowId, new RegExp(`^failback:bitly:${TWO}:`));
    const run = await waitForRun(workflowId);
    assert.equal(run.status, 'succeeded', JSON.stringify(run.report));
    assert.equal((await getActiveFront(h.db.sql, TWO)).active, 'bitly');
    assert.equal((await getActiveFront(h.db.sql)).active, 'inhouse', 'the default domain is untouched');
    // The DNS adapter was asked for that domain, by name.
    assert.deepEqual(
      dnsCalls.filter((c) => c.front !== undefined),
      [{ front: 'bitly', workflowId, domain: TWO }],
    );
    assert.equal(fronts.get(HOME), 'inhouse');
    // Readers of the second domain now get Bitly's answer; the default's still ours.
    const two = await fetch(`http://${TWO}:${port}/tw1`, { redirect: 'manual' });
    assert.equal(two.status, 301);
    assert.equal((await fetch(`http://${HOME}:${port}/healthz`)).status, 200);
    const [audit] = await h.db.sql<{ after: Record<string, unknown> }[]>`
      SELECT after FROM audit_log WHERE action = 'front.switched' ORDER BY id DESC LIMIT 1`;
    assert.equal(audit?.after.domain, TWO);
    // Already Bitly there: a second failback is refused; the default domain's is its own question.
    const again = await h.api('/api/v1/ops/failover', { method: 'POST', json: { to: 'bitly', domain: TWO } });
    assert.equal(again.status, 409);
  });

  test('the drill Schedule’s workflow drills each domain in turn; the gauges carry the domain', async () => {
    const report = (await h.temporal.client.workflow.execute('scheduledDrillWorkflow', {
      workflowId: `drill-schedule:test:${randomUUID()}`,
      taskQueue: h.taskQueue,
      args: [{ reason: 'test', dnsTtlSeconds: 300, domains: ['', TWO] }],
    })) as ScheduledDrillReport;
    assert.equal(report.outcome, 'passed');
    assert.deepEqual(
      report.domains?.map((d) => [d.domain, d.outcome]),
      [
        ['', 'passed'],
        [TWO, 'passed'],
      ],
    );
    assert.match(report.domains![0]!.workflowId!, /^drill:inhouse:scheduled:/);
    assert.match(report.domains![1]!.workflowId!, new RegExp(`^drill:inhouse:${TWO}:scheduled:`));
    assert.equal(report.domains![0]!.report?.verify.checked, 3);
    assert.equal(report.domains![1]!.report?.verify.checked, 2);
    const gauges = await getDrillGaugeValues(h.db.sql, h.config);
    assert.deepEqual(gauges.map((g) => [g.to, g.domain, g.passed]).sort(), [
      ['inhouse', HOME, true],
      ['inhouse', TWO, true],
    ]);
  });
});
