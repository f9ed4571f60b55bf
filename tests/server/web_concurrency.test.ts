// `npm run web` with WEB_CONCURRENCY=2 (ADR 0023): two web processes on one port (SO_REUSEPORT), each with its own
// LRU, on the one invalidation bus (here Postgres LISTEN/NOTIFY: no Redis). An edit made through the API (which
// reaches one of them) evicts the code from both LRUs, so both answer the new target at once; /metrics shows
// both processes' series (web_process label) whichever process the scrape reached; SIGTERM to the primary stops
// both in order, their clicks written exactly.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { type EntryProcess, standaloneWebEnv, startEntry } from '../../devkit/harness/entry_process.ts';
import { eventually } from '../../devkit/harness/harness.ts';
import { listChildPids } from '../../devkit/harness/process_tree.ts';
import { insertLink } from '../../lib/stores/link_store.ts';
import { getFreePort } from '../../scripts/dev_server.ts';

const CODE = 'twoproc1';
const API_KEY = `ll_test_${randomBytes(24).toString('hex')}`;
const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;
const BROWSER =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0 Safari/537.36';
/** Far longer than the test: an answer that changes was invalidated, not expired. */
const LRU_TTL_MS = 600_000;

let db: TestDatabase;
let web: EntryProcess | undefined;

before(async () => {
  db = await createTestDatabase();
  await insertLink(db.sql, {
    code: CODE,
    targetUrl: 'https://news.example/one',
    status: 'active',
    origin: 'api',
    owner: 'test',
  });
});
after(async () => {
  web?.kill();
  await db?.drop();
});

/** A GET on a new connection (agent: false), so the kernel picks a listener for each: status and Location. */
function getFresh(port: number, path: string): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, agent: false, headers: { 'User-Agent': BROWSER } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A counter's samples by web_process, from the gathered /metrics text, for series matching `labels`. */
function byProcess(text: string, name: string, labels: Record<string, string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))) {
    const found = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v) && found.web_process !== undefined)
      out[found.web_process] = Number(m[2]);
  }
  return out;
}

test('WEB_CONCURRENCY=2: one port, two LRUs, an API edit evicts both; one metrics view; orderly stop', async () => {
  const port = await getFreePort();
  const base = `http://127.0.0.1:${port}`;
  // Nothing here runs Temporal: the edit's sync is deferred, its cache refresh and bus message are not.
  const entry = startEntry('main.ts', {
    env: {
      ...(await standaloneWebEnv(port, db.url)),
      WEB_CONCURRENCY: '2',
      BOOTSTRAP_API_KEY: API_KEY,
      METRICS_TOKEN,
      RESOLVER_CACHE_TTL_MS: String(LRU_TTL_MS),
      CLICK_FLUSH_INTERVAL_MS: '600000',
    },
  });
  web = entry;
  const metrics = async () => {
    const response = await fetch(`${base}/metrics`, {
      headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
    });
    assert.equal(response.status, 200);
    return response.text();
  };
  // Both processes listen (the gathered view lists each of them).
  await eventually(
    async () => {
      if (!/every web process listening/.test(entry.output())) return undefined;
      const text = await metrics();
      return /web_process="0"/.test(text) && /web_process="1"/.test(text) ? true : undefined;
    },
    {
      timeoutMs: 90_000,
      intervalMs: 250,
      what: `both web processes listening (${entry.output().slice(-2000)})`,
    },
  );
  const webPids = listChildPids(entry.child.pid!);
  assert.equal(webPids.length, 2, `two web processes under the primary: ${webPids.join(', ')}`);

  let redirects = 0;
  // Fresh connections until each process has answered the code from its own LRU at least once.
  await eventually(
    async () => {
      for (let i = 0; i < 10; i++) {
        const answer = await getFresh(port, `/${CODE}`);
        assert.deepEqual(answer, { status: 301, location: 'https://news.example/one' });
        redirects++;
      }
      const hits = byProcess(await metrics(), 'lifeline_link_lookups_total', { layer: 'lru', result: 'hit' });
      return (hits['0'] ?? 0) >= 1 && (hits['1'] ?? 0) >= 1 ? hits : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 0, what: 'both processes answering from their LRUs' },
  );

  // The edit reaches one process; the bus tells the other.
  const patch = await fetch(`${base}/api/v1/links/${CODE}`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ url: 'https://news.example/two' }),
  });
  assert.equal(patch.status, 200, await patch.clone().text());

  const before = byProcess(await metrics(), 'lifeline_redirects_total', { outcome: 'redirect' });
  await eventually(
    async () => {
      const answers = [];
      for (let i = 0; i < 20; i++) answers.push(await getFresh(port, `/${CODE}`));
      redirects += answers.filter((a) => a.status === 301).length;
      return answers.every((a) => a.status === 301 && a.location === 'https://news.example/two')
        ? true
        : undefined;
    },
    { timeoutMs: 5_000, intervalMs: 50, what: 'every answer, from either process, the new target' },
  );
  const afterEdit = byProcess(await metrics(), 'lifeline_redirects_total', { outcome: 'redirect' });
  for (const p of ['0', '1'])
    assert.ok(
      (afterEdit[p] ?? 0) > (before[p] ?? 0),
      `web process ${p} answered after the edit too (${JSON.stringify({ before, afterEdit })})`,
    );
  // Once both answer anew, keep asking: neither process falls back to a stale copy.
  for (let i = 0; i < 20; i++) {
    const answer = await getFresh(port, `/${CODE}`);
    assert.deepEqual(answer, { status: 301, location: 'https://news.example/two' });
    redirects++;
  }

  // SIGTERM to the primary: both processes drain, flush their clicks and exit; then the primary exits 0.
  entry.child.kill('SIGTERM');
  assert.equal(await entry.exited, 0, entry.output().slice(-3000));
  for (const pid of webPids) assert.throws(() => process.kill(pid, 0), `web process ${pid} is gone`);
  await assert.rejects(fetch(`${base}/livez`), 'nothing listens any more');
  const [row] = await db.sql<{ clicks: string | null }[]>`
    SELECT sum(clicks)::text AS clicks FROM click_counts WHERE code = ${CODE} AND kind = 'human'`;
  assert.equal(Number(row?.clicks ?? 0), redirects, 'every redirect of both processes counted once');
});
