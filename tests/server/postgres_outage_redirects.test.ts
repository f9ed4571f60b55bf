// `npm run web` while its Postgres stops answering, as a visitor sees it: a link in the LRU keeps redirecting, and
// a code no cache holds gets its 503 at once once the resolver's breaker has opened, for as long as the outage
// lasts (its probe, not a visitor, finds out whether Postgres is back). The web process reaches Postgres through
// a proxy the test controls: a stall (connections held, nothing answered, as in a network partition) and a cut
// (connections dropped, new ones refused). The breaker it replaced let lookups through again after a fixed
// second, so every few seconds of an outage a batch of visitors waited the whole 3 s lookup deadline.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { type EntryProcess, standaloneWebEnv, startEntry } from '../../devkit/harness/entry_process.ts';
import { eventually } from '../../devkit/harness/harness.ts';
import { insertLink } from '../../lib/stores/link_store.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp_proxy.ts';

const CODE = 'outage1';
const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;
/** How long each outage lasts while visitors ask for codes: past the first deadline (3 s) and several probes. */
const OUTAGE_MS = 9_000;
/** Requests that start this long into the outage come after the first lookups' deadline (3 s) has passed. */
const SETTLED_MS = 4_000;

let db: TestDatabase;
let proxy: TcpProxy;
let web: EntryProcess | undefined;
let base = '';

before(async () => {
  db = await createTestDatabase();
  await insertLink(db.sql, {
    code: CODE,
    targetUrl: 'https://news.example/kept',
    status: 'active',
    origin: 'api',
    owner: 'test',
  });
  const url = new URL(db.url);
  proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.port = String(proxy.port);
  const port = await getFreePort();
  base = `http://127.0.0.1:${port}`;
  web = startEntry('main.ts', {
    env: {
      ...(await standaloneWebEnv(port, url.toString())),
      METRICS_TOKEN,
      // Short enough that each round's "unknown" answers come from Postgres, not from the negative cache.
      RESOLVER_NEGATIVE_TTL_MS: '0',
    },
  });
  await eventually(async () => ((await fetch(`${base}/readyz`).catch(() => null))?.ok ? true : undefined), {
    timeoutMs: 90_000,
    what: `the web process ready (${web.output().slice(-2000)})`,
  });
});
after(async () => {
  web?.kill();
  await proxy?.close();
  await db?.drop();
});

/** A code the resolver must look up (no link has it, no cache holds it). */
const unknownCode = () => `nx${randomBytes(6).toString('hex')}`;

async function get(path: string): Promise<{ status: number; location: string | null; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, { redirect: 'manual' });
  await response.arrayBuffer();
  return {
    status: response.status,
    location: response.headers.get('location'),
    ms: performance.now() - started,
  };
}

async function breakerOpen(): Promise<string | undefined> {
  const response = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await response.text();
  return /^lifeline_lookup_breaker_open\{layer="postgres"\} (\d)$/m.exec(text)?.[1];
}

/**
 * Visitors during an outage: eight at a time (so the first lookups, which wait the whole deadline, are enough
 * failures to open the breaker: six of them ask for unknown codes first), each asking for fresh unknown codes one after another for
 * OUTAGE_MS, and the cached code now and then. Every answer with its start (ms into the outage) and duration.
 */
async function visitorsDuringOutage() {
  const began = performance.now();
  const answers: { at: number; status: number; ms: number; cached: boolean }[] = [];
  await Promise.all(
    Array.from({ length: 8 }, async (_, visitor) => {
      for (let i = 0; performance.now() - began < OUTAGE_MS; i++) {
        const cached = (i + visitor) % 5 === 0;
        const at = performance.now() - began;
        const answer = await get(cached ? `/${CODE}` : `/${unknownCode()}`);
        if (cached) assert.equal(answer.location, 'https://news.example/kept');
        answers.push({ at, status: answer.status, ms: answer.ms, cached });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }),
  );
  return answers;
}

describe('redirects while Postgres does not answer', () => {
  for (const outage of ['stall', 'cut'] as const) {
    test(`${outage}: the LRU keeps redirecting; after the first deadline, every other code gets its 503 at once`, async (t) => {
      // Warm: the code is in the LRU, and Postgres answers unknown codes with 404.
      assert.equal((await get(`/${CODE}`)).status, 301);
      assert.equal((await get(`/${unknownCode()}`)).status, 404);
      assert.equal(await breakerOpen(), '0');

      await proxy[outage]();
      let answers: Awaited<ReturnType<typeof visitorsDuringOutage>>;
      let openDuring: string | undefined;
      try {
        answers = await visitorsDuringOutage();
        openDuring = await breakerOpen();
      } finally {
        await proxy.restore();
      }
      const unknown = answers.filter((a) => !a.cached);
      const settled = unknown.filter((a) => a.at >= SETTLED_MS);
      const slowest = Math.max(...settled.map((a) => a.ms));
      const waited = unknown
        .filter((a) => a.ms >= 1_000)
        .map((a) => `${Math.round(a.ms)} ms at ${Math.round(a.at)}`);
      t.diagnostic(
        `${answers.length} answers; unknown codes: ${unknown.length}, ${settled.length} after ${SETTLED_MS} ms ` +
          `(slowest ${Math.round(slowest)} ms); waits of a second or more: ${waited.join(', ') || 'none'}`,
      );
      assert.deepEqual(new Set(answers.filter((a) => a.cached).map((a) => a.status)), new Set([301]));
      assert.deepEqual(new Set(unknown.map((a) => a.status)), new Set([503]));
      assert.ok(settled.length >= 20, `${settled.length} requests after the first deadline`);
      assert.ok(
        slowest < 1_000,
        `no visitor waits on Postgres once the breaker is open: ${waited.join(', ')}`,
      );
      assert.equal(openDuring, '1');

      // Postgres answers again: the probe closes the breaker (at most 5 s apart, plus its deadline).
      await eventually(async () => ((await get(`/${unknownCode()}`)).status === 404 ? true : undefined), {
        timeoutMs: 15_000,
        intervalMs: 200,
        what: 'unknown codes answered 404 again',
      });
      assert.equal(await breakerOpen(), '0');
    });
  }
});
