// `npm run web` with WEB_CONCURRENCY=2 and no Redis (ADR 0023, ADR 0061): the two web processes share one set of
// rate-limit counters, kept by their primary. Reader reports from one address, spread over both processes by the
// kernel, are allowed RATE_LIMIT_REPORTS_PER_HOUR times in all — not that many times per process.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { type EntryProcess, standaloneWebEnv, startEntry } from '../../devkit/harness/entry_process.ts';
import { eventually } from '../../devkit/harness/harness.ts';
import { insertLink } from '../../lib/stores/link_store.ts';
import { getFreePort } from '../../scripts/dev_server.ts';

const CODE = 'limits2p';
const REPORTS_PER_HOUR = 3;
const METRICS_TOKEN = 'web-concurrency-limits-metrics';

let db: TestDatabase;
let web: EntryProcess | undefined;

before(async () => {
  db = await createTestDatabase();
  await insertLink(db.sql, {
    code: CODE,
    targetUrl: 'https://news.example/limits',
    status: 'active',
    origin: 'api',
    owner: 'test',
  });
});
after(async () => {
  web?.kill();
  await db?.drop();
});

/** A JSON report on a new connection (agent: false), so the kernel picks a process for each: the status. */
function reportFresh(port: number): Promise<number> {
  const body = JSON.stringify({ reason: 'spam' });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: `/${CODE}/report`,
        method: 'POST',
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Report requests each web process answered, from the gathered /metrics view. */
async function reportsByProcess(base: string): Promise<Record<string, number>> {
  const response = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
  assert.equal(response.status, 200);
  const out: Record<string, number> = {};
  for (const m of (await response.text()).matchAll(/^lifeline_http_requests_total\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    if (labels.route !== '/:code/report' || labels.web_process === undefined) continue;
    out[labels.web_process] = (out[labels.web_process] ?? 0) + Number(m[2]);
  }
  return out;
}

test('WEB_CONCURRENCY=2 without Redis: one report budget for both processes, not one each', async () => {
  const port = await getFreePort();
  const base = `http://127.0.0.1:${port}`;
  const entry = startEntry('main.ts', {
    env: {
      ...(await standaloneWebEnv(port, db.url)),
      WEB_CONCURRENCY: '2',
      METRICS_TOKEN,
      RATE_LIMIT_REPORTS_PER_HOUR: String(REPORTS_PER_HOUR),
    },
  });
  web = entry;
  await entry.waitForOutput(/every web process listening/, {
    timeoutMs: 90_000,
    what: 'both web processes listening',
  });

  // Reports on fresh connections until each process has answered more than the whole budget's worth.
  const statuses: number[] = [];
  const spread = await eventually(
    async () => {
      for (let i = 0; i < 6; i++) statuses.push(await reportFresh(port));
      const seen = await reportsByProcess(base);
      return (seen['0'] ?? 0) > REPORTS_PER_HOUR && (seen['1'] ?? 0) > REPORTS_PER_HOUR ? seen : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 0, what: 'both processes answering reports' },
  );
  const allowed = statuses.filter((s) => s !== 429);
  assert.equal(
    allowed.length,
    REPORTS_PER_HOUR,
    `reports allowed in all: ${JSON.stringify({ statuses, spread })}`,
  );
  assert.ok(
    allowed.every((s) => s === 202),
    `allowed reports are accepted: ${statuses.join(' ')}`,
  );

  entry.child.kill('SIGTERM');
  assert.equal(await entry.exited, 0, entry.output().slice(-3000));
});
