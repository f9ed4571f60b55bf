import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getHeapStatistics } from 'node:v8';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { createMetrics } from '../../lib/shared/metrics.ts';
import { createApp } from '../../routes/app.ts';
import { createWebDeps } from '../../server/web_deps.ts';
import { exposeGc } from '../helpers/gc.ts';
import { createUiClient } from '../helpers/ui_client.ts';

// The login form. The per-account limiter was keyed by the typed e-mail with no size cap (a
// heap that grew with every huge e-mail), and attempts an IP was already refused for still counted against
// the account (one blocked address locked anyone's account for 15 minutes).

const gc = exposeGc();

let h: Harness;
const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };

before(async () => {
  h = await createHarness({
    env: {
      TRUSTED_CLIENT_IP_HEADER: 'X-Test-Client-IP',
      RATE_LIMIT_LOGIN_PER_IP: '5',
      RATE_LIMIT_LOGIN_PER_ACCOUNT: '10',
    },
  });
});
after(async () => {
  await h?.close();
});

/** One login attempt from `ip`, as a browser without JavaScript makes it (form token included). */
async function attempt(ip: string, email: string, password: string): Promise<number> {
  const client = createUiClient(h.app as never);
  const headers = { 'X-Test-Client-IP': ip };
  await client.get('/ui/login', headers);
  const res = await client.post('/ui/login', { email, password }, { headers });
  return res.status;
}

function heapUsed(): number {
  gc();
  gc();
  return getHeapStatistics().used_heap_size;
}

describe('item 3: the login limiter', () => {
  test('attempts refused by the IP limit do not count against the account: the owner still gets in', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push(await attempt('198.51.100.7', ADMIN.email, 'wrong password'));
    assert.deepEqual(
      statuses.slice(0, 5),
      [401, 401, 401, 401, 401],
      'five failures are allowed from one address',
    );
    assert.ok(
      statuses.slice(5).every((s) => s === 429),
      `the address is limited after that: ${statuses.join(',')}`,
    );
    assert.equal(await attempt('203.0.113.8', ADMIN.email, ADMIN.password), 303, 'the right password works');
  });

  test('an IPv6 client counts as its /64: rotating addresses inside it does not reset the limit', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 7; i++)
      statuses.push(await attempt(`2001:db8:77:1::${i.toString(16)}`, 'nobody@example.test', 'x'));
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429]);
    assert.equal(await attempt('2001:db8:77:2::1', 'nobody@example.test', 'x'), 401, 'another /64 is not');
  });

  test('huge e-mails cost bounded memory: 400 attempts of 15 KB each leave the heap where it was', async (t) => {
    // Warm up every path first (pages, limiter, the dummy hash), so only what the attempts keep is measured.
    await attempt('192.0.2.200', `warm-${'w'.repeat(1000)}@example.test`, 'x');
    const before = heapUsed();
    for (let i = 0; i < 400; i++) {
      // As long as the sign-in form's body limit (16 KiB) lets through.
      const email = `${i}-${'x'.repeat(15 * 1024)}@example.test`;
      const status = await attempt(`192.0.2.${i % 200}`, email, 'wrong password');
      assert.ok(status === 401 || status === 429, `attempt ${i}: ${status}`);
    }
    const grown = (heapUsed() - before) / 2 ** 20;
    t.diagnostic(`heap growth after 400 attempts with 15 KB e-mails: ${grown.toFixed(2)} MiB`);
    assert.ok(grown < 4, `the heap grew by ${grown.toFixed(1)} MiB`);
  });
});

describe('failed-login logs', () => {
  test('a typed e-mail reaches the log as at most 64 characters, its length and a short hash', async (t) => {
    // The app on this file's database with a logger whose lines the test reads.
    const lines: string[] = [];
    const logger = createLogger({
      level: 'warn',
      name: 'test',
      destination: { write: (line: string) => lines.push(line) },
    });
    const deps = await createWebDeps(h.config, { sql: h.db.sql, logger, metrics: createMetrics() });
    t.after(() => deps.close());
    const app = createApp(deps);
    const client = createUiClient(app as never);
    const headers = { 'X-Test-Client-IP': '192.0.2.77' };
    await client.get('/ui/login', headers);
    // 60 KB: refused at the door now (the sign-in body limit), and in no case logged whole.
    const huge = `${'Long.Name'.repeat(6_700)}@example.test`;
    const hugeStatus = (await client.post('/ui/login', { email: huge, password: 'wrong' }, { headers }))
      .status;
    assert.ok(hugeStatus === 413 || hugeStatus === 401, `a 60 KB e-mail: ${hugeStatus}`);
    assert.ok(
      lines.every((line) => line.length < 2_000),
      `no log line carries it: ${lines.map((l) => l.length)}`,
    );
    // One that fits the form (12 KB): logged cut to 64 characters, with its length and a short hash.
    const typed = `${'Long.Name'.repeat(1_300)}@example.test`;
    await client.get('/ui/login', headers); // a fresh form token (the 413 page has none)
    const res = await client.post('/ui/login', { email: typed, password: 'wrong password' }, { headers });
    assert.equal(res.status, 401);
    const failed = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'login failed');
    assert.equal(failed.length, hugeStatus === 401 ? 2 : 1, lines.join('\n').slice(0, 2_000));
    const entry = failed.at(-1);
    assert.equal(entry.account, `${typed.toLowerCase().slice(0, 64)}…`);
    assert.equal(entry.accountLength, typed.length);
    assert.match(entry.accountSha256, /^[0-9a-f]{16}$/);
    assert.ok(
      lines.every((line) => line.length < 2_000),
      `the log lines are short: ${lines.map((l) => l.length)}`,
    );

    // An ordinary address is logged as typed (lower-cased), nothing added.
    lines.length = 0;
    await client.post(
      '/ui/login',
      { email: 'Someone@Example.test', password: 'wrong password' },
      { headers },
    );
    const plain = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'login failed');
    assert.equal(plain?.account, 'someone@example.test');
    assert.equal(plain?.accountLength, undefined);
  });
});
