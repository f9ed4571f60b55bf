// The destination checks survive a worker lost in the middle of a call: the real worker entry, in a child process,
// is SIGKILLed while one check waits on a site that has not answered. The call never reports back, so Temporal
// notices it only at the activity's heartbeat timeout. The call heartbeats on its own every 5 s while it runs, so
// that timeout is 20 s (not the two minutes a call between two progress reports could once take), and a new worker
// carries the run to its end within it. The same keep-alive serves the escrow exports and the retarget steps.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type DestinationSites, startDestinationSites } from '../../devkit/fakes/destination_sites.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { startWorkerProcess } from '../../devkit/harness/worker_process.ts';
import type { CheckDestinationsReport } from '../../workflows/contract.ts';

// The hanging check's deadline is the longest allowed: it is still waiting when the worker is killed.
const SETTINGS = { DESTINATION_CHECK_TIMEOUT_MS: '60000', DESTINATION_CHECK_EVERY: 'off' };

let h: Harness;
let sites: DestinationSites;
let child: ReturnType<typeof startWorkerProcess> | undefined;

before(async () => {
  sites = await startDestinationSites();
  h = await createHarness({ env: SETTINGS });
});
after(async () => {
  child?.process.kill('SIGKILL');
  await h.close();
  await sites.close();
});

async function startWorker() {
  const started = startWorkerProcess({ h, env: SETTINGS });
  await eventually(async () => (started.ready ? true : undefined), {
    timeoutMs: 120_000,
    what: 'the worker process',
  });
  return started;
}

describe('destination checks and a worker lost mid-call', () => {
  test('SIGKILL while a check waits on a site: a new worker finishes the run within seconds', async (t) => {
    const res = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://www.example.com/world/slow-site-story' },
    });
    assert.equal(res.status, 201, await res.clone().text());
    const { code } = (await res.json()) as { code: string };
    // A link can never point at loopback (the safety rules refuse it), but the worker's real resolver cannot reach
    // a made-up public name either: the test points the stored target at the loopback site, as setup.
    const target = `http://localhost:${sites.port}/story`;
    await h.db.sql`UPDATE links SET target_url = ${target} WHERE code = ${code}`;
    sites.set('localhost', { kind: 'hang' });

    child = await startWorker();
    const handle = await h.temporal.client.workflow.start('checkDestinationsWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: uniqueId('destination-checks:worker-lost'),
      args: [{ reason: 'test' }],
    });
    await eventually(async () => (sites.requests.some((r) => r.host === 'localhost') ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 20,
      what: 'the check to reach the site',
    });
    child.process.kill('SIGKILL');
    await new Promise((r) => child!.process.once('exit', r));
    const killedAt = Date.now();
    sites.set('localhost', { kind: 'page', paths: ['/story'], title: 'The slow site answers now' });

    // The call is still "started" by the dead worker: a new one retries it at the heartbeat timeout.
    child = await startWorker();
    const report = (await handle.result()) as CheckDestinationsReport;
    const finishedInMs = Date.now() - killedAt;
    t.diagnostic(`the run ended ${finishedInMs} ms after the kill`);
    assert.ok(finishedInMs < 60_000, `the run ended ${finishedInMs} ms after the kill`);
    assert.equal(report.checked, 1);
    assert.deepEqual(report.byOutcome, { ok: 1 });
    const [state] = await h.db.sql<{ outcome: string; page_title: string; checks: number }[]>`
      SELECT outcome, page_title, checks FROM destination_states WHERE code = ${code}`;
    assert.deepEqual(
      [state?.outcome, state?.page_title, state?.checks],
      ['ok', 'The slow site answers now', 1],
      'the lost check recorded nothing; the retry recorded one',
    );
  });
});
