// The prober with two short domains (ADR 0073) against the real server (the Node fast path and the app, on one
// port answering each Host): each domain's canary and sample asked on its own base URL, compared with its own
// links (the same code answers differently on each), counted under its own `domain`; a domain that does not answer
// opens an incident of its own while the other stays clean, and its first clean probe closes it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import type { ProbeDeps } from '../../../lib/prober/probe_deps.ts';
import { type ProberDeps, runProbe } from '../../../lib/prober/run_probe.ts';
import { listProbeIncidents } from '../../../lib/stores/probe_store.ts';
import { getFreePort } from '../../../scripts/dev_server.ts';
import { type RunningServer, serveNode } from '../../../server/node_server.ts';
import { createWorkerDeps } from '../../../workers/worker_deps.ts';

const HOME = '127.0.0.1';
const TWO = 'localhost';

let h: Harness;
let server: RunningServer;
let port: number;
let deps: ProberDeps & { probe: ProbeDeps };

before(async () => {
  port = await getFreePort();
  h = await createHarness({
    env: {
      SHORT_BASE_URL: `http://${HOME}:${port}`,
      SHORT_DOMAINS: `${HOME},${TWO}`,
      PROBE_CANARY_URL: 'https://news.example/canary',
      PROBE_SAMPLE: '5',
      PROBE_TIMEOUT_MS: '2000',
    },
  });
  // The same code on both domains, to different places; settled an hour ago.
  await h.db.sql`
    INSERT INTO links (code, domain, target_url, status, safety, origin, owner, updated_at) VALUES
      ('pdSame', '', 'https://news.example/home', 'active', 'clean', 'api', 'test', now() - interval '1 hour'),
      (${`${TWO}/pdSame`}, ${TWO}, 'https://news.example/two', 'active', 'clean', 'api', 'test',
        now() - interval '1 hour'),
      (${`${TWO}/pdGone`}, ${TWO}, 'https://news.example/two-gone', 'gone', 'clean', 'api', 'test',
        now() - interval '1 hour')`;
  deps = createWorkerDeps(h.config, { sql: h.db.sql, logger: h.logger, resolver: h.deps.resolver }) as never;
  server = await serveNode(h.app.fetch, { port, host: '::', fastPath: h.deps });
});
after(async () => {
  await server?.close(100);
  await h?.close();
});

async function counts(): Promise<Record<string, number>> {
  const { values } = await deps.probe.metrics.probes.get();
  return Object.fromEntries(values.map((v) => [`${v.labels.domain} ${v.labels.result}`, v.value]));
}

describe('the prober with two short domains', () => {
  test('each domain is asked on its own base, with its own canary and sample, counted under its name', async () => {
    assert.deepEqual(
      deps.probe.domains.map((d) => [d.stored, d.name, d.baseUrl]),
      [
        ['', HOME, `http://${HOME}:${port}`],
        [TWO, TWO, `http://${TWO}:${port}`],
      ],
    );
    const report = await runProbe(deps);
    assert.equal(report.mismatch + report.error, 0, JSON.stringify(report));
    assert.deepEqual(
      report.domains?.map((d) => [d.domain, d.canary, d.checked, d.ok]),
      [
        [HOME, 'lifeline-canary', 2, 2],
        [TWO, `${TWO}/lifeline-canary`, 3, 3],
      ],
    );
    assert.equal(report.checked, 5);
    const c = await counts();
    assert.equal(c[`${HOME} ok`], 2);
    assert.equal(c[`${TWO} ok`], 3);
    assert.equal(c[`${TWO} mismatch`], 0);
    // The canaries are links of their own domains.
    const canaries = await h.db.sql<{ code: string; domain: string }[]>`
      SELECT code, domain FROM links WHERE owner = 'lifeline:prober' ORDER BY code`;
    assert.deepEqual(
      canaries.map((r) => [r.code, r.domain]),
      [
        ['lifeline-canary', ''],
        [`${TWO}/lifeline-canary`, TWO],
      ],
    );
  });

  test('a domain that does not answer opens its own incident; the other stays clean; a clean probe closes it', async () => {
    const dead = `http://127.0.0.1:${await getFreePort()}`;
    const broken = {
      ...deps,
      probe: {
        ...deps.probe,
        domains: [deps.probe.domains[0]!, { ...deps.probe.domains[1]!, baseUrl: dead }],
      },
    };
    const failing = await runProbe(broken);
    const [home, two] = failing.domains!;
    assert.equal(home!.error + home!.mismatch, 0);
    assert.equal(home!.incident, null);
    assert.equal(two!.error, 3);
    assert.equal(two!.incident?.change, 'opened');
    const [incident] = await listProbeIncidents(h.db.sql, 1);
    assert.equal(incident?.domain, TWO);
    assert.equal(incident?.closedAt, null);
    assert.equal((await counts())[`${TWO} error`], 3);
    const again = await runProbe(deps);
    assert.deepEqual(again.domains?.[1]?.incident, { id: incident!.id, change: 'closed' });
    assert.equal(again.domains?.[0]?.incident, null);
  });
});
