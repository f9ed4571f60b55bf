// `npm run web` (main.ts) on SIGTERM, as a rolling deploy sends it: /readyz turns 503 at once while redirects
// keep being answered for SHUTDOWN_DELAY_MS (the load balancer's time to take the instance out), then the
// server stops accepting and the process exits 0 with its clicks flushed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { type EntryProcess, standaloneWebEnv, startEntry } from '../../devkit/harness/entry_process.ts';
import { eventually } from '../../devkit/harness/harness.ts';
import { insertLink } from '../../lib/stores/link_store.ts';
import { getFreePort } from '../../scripts/dev_server.ts';

const DELAY_MS = 2_000;
let db: TestDatabase;
let web: EntryProcess | undefined;

before(async () => {
  db = await createTestDatabase();
  await insertLink(db.sql, {
    code: 'drain1',
    targetUrl: 'https://news.example/drain',
    status: 'active',
    origin: 'api',
    owner: 'test',
  });
});
after(async () => {
  web?.kill();
  await db?.drop();
});

test('SIGTERM: readiness 503 first, redirects served through the delay, then closed and exit 0', async () => {
  const port = await getFreePort();
  const base = `http://127.0.0.1:${port}`;
  // Nothing here talks to Temporal; the client connects lazily.
  const entry = startEntry('main.ts', {
    env: {
      ...(await standaloneWebEnv(port, db.url)),
      SHUTDOWN_DELAY_MS: String(DELAY_MS),
      CLICK_FLUSH_INTERVAL_MS: '600000',
    },
  });
  web = entry;
  await eventually(async () => ((await fetch(`${base}/readyz`)).status === 200 ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 200,
    what: `main.ts ready (${entry.output()})`,
  });
  const human = { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/124.0 Safari/537.36' };
  assert.equal((await fetch(`${base}/drain1`, { redirect: 'manual', headers: human })).status, 301);

  const signalled = Date.now();
  entry.child.kill('SIGTERM');
  const draining = await eventually(
    async () => {
      const response = await fetch(`${base}/readyz`);
      return response.status === 503
        ? { body: await response.json(), ms: Date.now() - signalled }
        : undefined;
    },
    { timeoutMs: 1_500, intervalMs: 20, what: '/readyz to turn 503' },
  );
  assert.equal((draining.body as { status: string }).status, 'draining');
  // Still serving: the balancer may send requests until it has seen the probe fail.
  const during = await fetch(`${base}/drain1`, { redirect: 'manual', headers: human });
  assert.equal(during.status, 301);
  assert.equal((await fetch(`${base}/livez`)).status, 200);
  assert.ok(Date.now() - signalled < DELAY_MS, 'those answers came within the delay');

  assert.equal(await entry.exited, 0, entry.output().slice(-2000));
  const stoppedAfter = Date.now() - signalled;
  assert.ok(stoppedAfter >= DELAY_MS, `did not close before the delay (${stoppedAfter} ms)`);
  assert.match(entry.output(), /readiness now answers 503; still serving for 2000 ms before closing/);
  await assert.rejects(fetch(`${base}/livez`), 'nothing listens any more');
  // The buffered clicks (the two human redirects) were written on the way out.
  const rows = await db.sql<{ clicks: number }[]>`SELECT clicks FROM click_counts WHERE code = 'drain1'`;
  assert.equal(
    rows.reduce((n, r) => n + r.clicks, 0),
    2,
  );
});
