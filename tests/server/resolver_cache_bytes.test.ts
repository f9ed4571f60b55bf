// RESOLVER_CACHE_MAX_BYTES against the real web entry (main.ts, real Postgres, over HTTP): the LRU evicts its
// least recently used records once their estimated bytes pass the budget, one budget across every short domain,
// and /metrics shows the bytes held, the budget and the entries. Which answer came from where is read from the
// lookup counters, never from timing.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { type EntryProcess, standaloneWebEnv, startEntry } from '../../devkit/harness/entry_process.ts';
import { eventually } from '../../devkit/harness/harness.ts';
import { estimateRecordBytes } from '../../lib/redirect/resolver_cache.ts';
import { insertLink } from '../../lib/stores/link_store.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { activeRecord } from '../helpers/serving_records.ts';

const HOME = 'go.example';
const TWO = 'two.example';
const TOKEN = 'resolver-cache-bytes-metrics-token-0123456789';
/** Every link's target has this length, so every record is estimated alike. */
const target = (i: number) =>
  `https://news.example/2026/12/02/${String(i).padStart(4, '0')}-${'x'.repeat(60)}`;
/** One record's estimate for a link key (the codes below all have four digits after their prefix). */
const estimate = (key: string) => estimateRecordBytes(activeRecord(key, target(1)));
const ONE = estimate('bb0001');
/** A record of the second domain: its key is `two.example/<code>`. */
const ONE_TWO = estimate(`${TWO}/bb0001`);
/** Room for four such records, not five. */
const BUDGET = ONE * 4 + Math.floor(ONE / 2);

let db: TestDatabase;
let web: EntryProcess | undefined;
let port: number;

/** A GET with a Host header (fetch cannot set one); the status. */
function get(host: string, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { Host: host, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

async function metrics(): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(response.status, 200);
  return response.text();
}

function sample(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  assert.ok(m, `${name} in /metrics`);
  return Number(m[1]);
}

function lookups(text: string, layer: string, result: string): number {
  const m = new RegExp(
    `^lifeline_link_lookups_total\\{layer="${layer}",result="${result}"\\} (\\S+)$`,
    'm',
  ).exec(text);
  return m ? Number(m[1]) : 0;
}

/** Requests `path` on `host` and says which layer answered: the LRU or Postgres (by the counters' deltas). */
async function answeredBy(host: string, path: string): Promise<'lru' | 'postgres'> {
  const before = await metrics();
  assert.equal(await get(host, path), 301, `${host}${path}`);
  const after = await metrics();
  if (lookups(after, 'lru', 'hit') > lookups(before, 'lru', 'hit')) return 'lru';
  assert.equal(lookups(after, 'postgres', 'hit'), lookups(before, 'postgres', 'hit') + 1, `${host}${path}`);
  return 'postgres';
}

before(async () => {
  db = await createTestDatabase();
  for (let i = 1; i <= 8; i++) {
    const code = `bb${String(i).padStart(4, '0')}`;
    for (const key of [code, `${TWO}/${code}`])
      await insertLink(db.sql, {
        code: key,
        targetUrl: target(i),
        status: 'active',
        origin: 'api',
        owner: 'test',
      });
  }
  port = await getFreePort();
  web = startEntry('main.ts', {
    env: {
      ...(await standaloneWebEnv(port, db.url)),
      LOG_LEVEL: 'warn',
      SHORT_BASE_URL: `http://${HOME}`,
      SHORT_DOMAINS: `${HOME},${TWO}`,
      METRICS_TOKEN: TOKEN,
      // The entries bound far away: only the bytes decide.
      RESOLVER_CACHE_MAX: '1000',
      RESOLVER_CACHE_MAX_BYTES: String(BUDGET),
      CLICK_FLUSH_INTERVAL_MS: '600000',
    },
  });
  await eventually(
    async () => ((await fetch(`http://127.0.0.1:${port}/livez`)).status === 200 ? true : undefined),
    {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: `main.ts listening (${web.output()})`,
    },
  );
});
after(async () => {
  web?.kill();
  await db?.drop();
});

test('the LRU keeps what fits the byte budget: the least recently used record goes, and /metrics says so', async () => {
  const idle = await metrics();
  assert.equal(sample(idle, 'lifeline_resolver_cache_max_bytes'), BUDGET);
  assert.equal(sample(idle, 'lifeline_resolver_cache_bytes'), 0);
  for (let i = 1; i <= 6; i++) assert.equal(await answeredBy(HOME, `/bb000${i}`), 'postgres');
  const full = await metrics();
  // Four fit; the fifth and sixth pushed out the two least recently used.
  assert.equal(sample(full, 'lifeline_resolver_cache_bytes'), ONE * 4);
  assert.equal(sample(full, 'lifeline_resolver_cache_entries'), 4);
  assert.equal(await answeredBy(HOME, '/bb0006'), 'lru');
  assert.equal(await answeredBy(HOME, '/bb0003'), 'lru');
  assert.equal(await answeredBy(HOME, '/bb0001'), 'postgres', 'evicted by bytes, looked up again');
  // bb0001 came back in; bb0004, the least recently used now, went for it.
  assert.equal(await answeredBy(HOME, '/bb0004'), 'postgres');
  assert.ok(sample(await metrics(), 'lifeline_resolver_cache_bytes') <= BUDGET);
});

test('one budget for every short domain: records of another domain push out the busiest domain’s oldest', async () => {
  // The home domain holds four records (the test above); two of the second domain take the room of two of them.
  for (const code of ['bb0007', 'bb0008']) assert.equal(await answeredBy(TWO, `/${code}`), 'postgres');
  const shared = await metrics();
  assert.equal(sample(shared, 'lifeline_resolver_cache_bytes'), ONE * 2 + ONE_TWO * 2);
  assert.equal(sample(shared, 'lifeline_resolver_cache_entries'), 4);
  assert.equal(await answeredBy(TWO, '/bb0007'), 'lru');
  assert.equal(await answeredBy(TWO, '/bb0008'), 'lru');
});
