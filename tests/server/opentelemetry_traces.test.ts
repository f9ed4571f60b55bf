// OpenTelemetry end to end (ADR 0072): the real web entry (main.ts) and worker entry (workers/main.ts), each in
// its own process, export to a loopback OTLP/HTTP receiver. One API create is one trace: the request's span, the
// Temporal client's start of `sync:{code}`, the workflow, its schedule of syncToBitly, the activity and its call
// to Bitly (the fake), each the parent of the next. Redirects make no span. Without OTEL_* the web entry loads
// nothing of OpenTelemetry's SDK or Temporal's interceptors: the one package it resolves is @opentelemetry/api,
// the no-op facade prom-client itself requires (for exemplars), as it did before tracing existed.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import {
  type OtlpCollectorFake,
  type ReceivedSpan,
  startOtlpCollectorFake,
} from '../../devkit/fakes/otlp_collector_fake.ts';
import {
  type EntryProcess,
  harnessEntryEnv,
  harnessWebEnv,
  startEntry,
} from '../../devkit/harness/entry_process.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { getFreePort } from '../../scripts/dev_server.ts';

const MODULE_WATCH = fileURLToPath(new URL('../helpers/module_watch.mjs', import.meta.url));
/** The collector's token: sent as a header, never in any output of either process. */
const OTLP_TOKEN = 'otlp-token-7f3c9a1e5b';

let collector: OtlpCollectorFake;
let bitly: BitlyFake;
let h: Harness;
let watchDir: string;
const children: EntryProcess[] = [];

before(async () => {
  collector = await startOtlpCollectorFake();
  bitly = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({ env: bitly.env() });
  watchDir = mkdtempSync(join(tmpdir(), 'lifeline-otel-'));
});
after(async () => {
  for (const child of children) child.kill();
  await h.close();
  await bitly.stop();
  await collector.stop();
  rmSync(watchDir, { recursive: true, force: true });
});

/** Starts an entry with the module watch on @opentelemetry; returns it and the file of what it loaded. */
function startWatched(script: string, env: Record<string, string>, name: string) {
  const watchFile = join(watchDir, `${name}.txt`);
  const child = startEntry(script, {
    env: { ...env, MODULE_WATCH_FILE: watchFile, MODULE_WATCH_PATTERN: 'opentelemetry' },
    imports: [MODULE_WATCH],
  });
  children.push(child);
  const loaded = () =>
    readFileSync(watchFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [importer = '', module = ''] = line.split(' -> ');
        return { importer, module };
      });
  return { child, loaded };
}

async function api(base: string, path: string, init: RequestInit & { json?: unknown } = {}) {
  return fetch(`${base}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${h.apiKey}`, 'Content-Type': 'application/json' },
    ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
  });
}

function one(spans: ReceivedSpan[], what: string, match: (s: ReceivedSpan) => boolean): ReceivedSpan {
  const found = spans.filter(match);
  assert.equal(
    found.length,
    1,
    `one ${what}; spans seen: ${spans.map((s) => `${s.service} ${s.name}`).join(', ')}`,
  );
  return found[0]!;
}

describe('OpenTelemetry traces', () => {
  test('one trace from an API create to its Bitly sync activity; no span for a redirect', async () => {
    const webUrl = `http://127.0.0.1:${await getFreePort()}`;
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${OTLP_TOKEN}`,
    };
    // From source, the worker bundles workflows/ at start: the tracing interceptors must be in that bundle.
    const worker = startWatched(
      'workers/main.ts',
      { ...harnessEntryEnv(h), WORKER_HEALTH_PORT: '0', ...bitly.env(), ...otel },
      'worker-traced',
    );
    const web = startWatched(
      'main.ts',
      { ...harnessWebEnv(h, webUrl), ...bitly.env(), ...otel },
      'web-traced',
    );
    await web.child.waitForOutput('web listening', { what: 'the traced web entry to listen' });
    await worker.child.waitForOutput('worker running', {
      timeoutMs: 120_000,
      what: 'the traced worker to run',
    });

    // The collector is briefly unavailable: the first export is refused (503) and retried, no span lost.
    collector.refuseNext(1, 503);
    // A query string on the request: it must not reach any span.
    const created = await api(webUrl, '/api/v1/links?note=query-secret-5d1', {
      method: 'POST',
      json: { url: 'https://example.com/traced-story' },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const { code } = (await created.json()) as { code: string };
    await eventually(async () => bitly.linkByKeyword(code) ?? undefined, {
      timeoutMs: 60_000,
      what: 'the sync workflow to create the bitlink',
    });

    // Redirects: the Node fast path (GET, HEAD) and the Hono code route (the preview) make no span.
    const redirect = await fetch(`${webUrl}/${code}`, { redirect: 'manual' });
    assert.ok([301, 302, 307, 308].includes(redirect.status), `redirect answered ${redirect.status}`);
    await fetch(`${webUrl}/${code}`, { method: 'HEAD', redirect: 'manual' });
    assert.equal((await fetch(`${webUrl}/${code}+`)).status, 200);
    // A marker after them: once its span arrives, any span the redirects had made was exported before it.
    assert.equal((await api(webUrl, `/api/v1/links/${code}`)).status, 200);

    const spans = await eventually(
      async () => {
        const all = collector.spans();
        const marker = all.some((s) => s.name === 'GET /api/v1/links/:code');
        const activity = all.some(
          (s) => s.name === 'RunActivity:syncToBitly' && s.attributes.temporalWorkflowId === `sync:${code}`,
        );
        const workflow = all.some(
          (s) => s.name === 'RunWorkflow:syncLinkWorkflow' && s.attributes.workflowId === `sync:${code}`,
        );
        return marker && activity && workflow ? all : undefined;
      },
      {
        timeoutMs: 60_000,
        what: () =>
          `the spans; seen: ${collector
            .spans()
            .map((s) => s.name)
            .join(', ')}`,
      },
    );

    const request = one(spans, 'API create span', (s) => s.name === 'POST /api/v1/links');
    assert.equal(request.service, 'lifeline-web');
    assert.equal(request.kind, 2, 'a server span');
    assert.equal(request.parentSpanId, '', 'the request starts the trace');
    assert.equal(request.attributes['http.route'], '/api/v1/links');
    assert.equal(request.attributes['http.response.status_code'], 201);
    const trace = spans.filter((s) => s.traceId === request.traceId);
    const childOf = (parent: ReceivedSpan, what: string, name: string) =>
      one(trace, what, (s) => s.name === name && s.parentSpanId === parent.spanId);
    const start = childOf(request, 'workflow start', 'SignalWithStartWorkflow:syncLinkWorkflow');
    assert.equal(start.service, 'lifeline-web');
    assert.equal(start.attributes.temporalWorkflowId, `sync:${code}`);
    const workflow = childOf(start, 'workflow run', 'RunWorkflow:syncLinkWorkflow');
    assert.equal(workflow.service, 'lifeline-worker');
    // The sink adds the workflow's info to the spans it carries out of the sandbox.
    assert.equal(workflow.attributes.workflowId, `sync:${code}`);
    const scheduled = childOf(workflow, 'activity schedule', 'StartActivity:syncToBitly');
    const activity = childOf(scheduled, 'activity run', 'RunActivity:syncToBitly');
    assert.equal(activity.service, 'lifeline-worker');
    assert.equal(activity.attributes.temporalWorkflowId, `sync:${code}`);
    // The activity's call to Bitly (the fake on loopback): method, host and status, no path.
    const bitlyPort = Number(new URL(bitly.url).port);
    const bitlyCalls = trace.filter((s) => s.parentSpanId === activity.spanId && s.kind === 3);
    assert.ok(bitlyCalls.length > 0, 'the activity called Bitly inside its span');
    for (const call of bitlyCalls) {
      assert.equal(call.attributes['server.address'], '127.0.0.1');
      assert.equal(call.attributes['server.port'], bitlyPort);
      assert.equal(typeof call.attributes['http.response.status_code'], 'number');
    }

    // No span for the redirects, nothing but API routes from the web tier's requests.
    const webServerSpans = spans.filter((s) => s.service === 'lifeline-web' && s.kind === 2);
    assert.deepEqual(
      webServerSpans.map((s) => s.name).sort(),
      ['GET /api/v1/links/:code', 'POST /api/v1/links'],
      'only the two API requests made spans',
    );
    for (const span of spans) {
      const text = JSON.stringify(span);
      assert.ok(!text.includes('query-secret-5d1'), `no query string in ${span.name}`);
      assert.ok(!text.includes(h.apiKey), `no API key in ${span.name}`);
      assert.ok(!text.includes(`/${code}`), `no path with the code in ${span.name}`);
    }

    // The refused export came again: more exports arrived than were taken, and the spans above are all there.
    assert.ok(
      collector.exports().length > collector.accepted(),
      'one export was refused, and later ones sent',
    );
    // The collector's token went as a header and into no log line.
    assert.ok(collector.exports().every((headers) => headers.authorization === `Bearer ${OTLP_TOKEN}`));
    assert.ok(!web.child.output().includes(OTLP_TOKEN) && !worker.child.output().includes(OTLP_TOKEN));
    // The watch sees the SDK and the interceptors when they are loaded (the check below can fail).
    for (const entry of [web, worker]) {
      const modules = entry.loaded().map((l) => l.module);
      assert.ok(modules.some((m) => m.includes('/@opentelemetry/sdk-trace-base/')));
      assert.ok(modules.some((m) => m.includes('/@temporalio/interceptors-opentelemetry/')));
    }

    // Graceful shutdown flushes: a request made just before SIGTERM still arrives.
    assert.equal((await api(webUrl, '/api/v1/links?limit=1')).status, 200);
    assert.equal(await web.child.stop(), 0);
    assert.ok(
      collector.spans().some((s) => s.name === 'GET /api/v1/links'),
      'the last request span was sent at shutdown',
    );
    assert.equal(await worker.child.stop(), 0);
  });

  test('with tracing unset the web entry loads nothing of the OpenTelemetry SDK', async () => {
    const webUrl = `http://127.0.0.1:${await getFreePort()}`;
    const web = startWatched('main.ts', { ...harnessWebEnv(h, webUrl), ...bitly.env() }, 'web-untraced');
    await web.child.waitForOutput('web listening', { what: 'the untraced web entry to listen' });
    const created = await api(webUrl, '/api/v1/links', {
      method: 'POST',
      json: { url: 'https://example.com/untraced' },
    });
    assert.equal(created.status, 201);
    const { code } = (await created.json()) as { code: string };
    assert.equal((await fetch(`${webUrl}/${code}`, { redirect: 'manual' })).status >= 300, true);
    assert.equal((await api(webUrl, `/api/v1/links/${code}`)).status, 200);
    assert.equal(await web.child.stop(), 0);
    const outsideTheFacade = web
      .loaded()
      // OpenTelemetry's packages and Temporal's interceptors (@redis/client has a folder named opentelemetry).
      .filter(({ module }) =>
        /\/node_modules\/(@opentelemetry|@temporalio\/interceptors-opentelemetry)\//.test(module),
      )
      .filter(
        ({ importer, module }) =>
          !(
            module.includes('/node_modules/@opentelemetry/api/') &&
            (importer.includes('/node_modules/prom-client/') ||
              importer.includes('/node_modules/@opentelemetry/api/'))
          ),
      );
    assert.deepEqual(
      outsideTheFacade,
      [],
      'nothing of OpenTelemetry but the API facade prom-client requires',
    );
  });
});
