import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';
import { createHarness, eventually, type Harness } from '../../../devkit/harness/harness.ts';
import { generateApiKey, getApiKeyDisplayPrefix, hashApiKey } from '../../../lib/auth/api_keys.ts';
import { parseConfig } from '../../../lib/shared/config.ts';
import { randomToken } from '../../../lib/shared/crypto.ts';
import { createLogger } from '../../../lib/shared/logger.ts';
import { createRateLimits } from '../../../lib/shared/rate_limits.ts';
import { insertApiKey } from '../../../lib/stores/api_key_store.ts';
import { createApp } from '../../../routes/app.ts';
import { getFreePort } from '../../../scripts/dev_server.ts';
import { createWebDeps } from '../../../server/web_deps.ts';
import { expectProblem } from '../../helpers/problem.ts';
import { createUiClient } from '../../helpers/ui_client.ts';

const REDIS_URL = process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
let h: Harness;
before(async () => {
  h = await createHarness({
    env: {
      REDIS_URL,
      REDIS_KEY_PREFIX: `lifeline-test-${randomToken(8)}:`,
      RATE_LIMIT_CREATE_PER_MINUTE: '5',
      RATE_LIMIT_LOGIN_PER_ACCOUNT: '3',
      RATE_LIMIT_LOGIN_PER_IP: '6',
      TRUSTED_CLIENT_IP_HEADER: 'x-test-client-ip',
    },
  });
});
after(async () => {
  await h.close();
});

async function newKey(name: string): Promise<string> {
  const key = generateApiKey();
  await insertApiKey(h.db.sql, {
    name,
    prefix: getApiKeyDisplayPrefix(key),
    keyHash: await hashApiKey(key),
    scopes: ['links:write'],
    createdBy: 'test',
  });
  return key;
}
const createWith = (key: string, app = h.app, n = 0) =>
  app.request('/api/v1/links', {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ url: `https://example.com/rl/${key.slice(-6)}/${n}/${Math.random()}` }),
  });

describe('rate limits (Redis-backed)', () => {
  test('link creation is limited per API key with 429 + Retry-After; other keys and redirects are not', async () => {
    assert.equal(h.deps.rateLimits.backend, 'redis');
    const key = await newKey('busy');
    for (let i = 0; i < 5; i++) assert.equal((await createWith(key, h.app, i)).status, 201);
    const limited = await createWith(key, h.app, 6);
    const problem = await expectProblem(limited.clone(), 429);
    const retryAfter = Number(limited.headers.get('Retry-After'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.match(problem.detail, /Retry in/);
    // A batch counts each link.
    assert.equal(
      (
        await h.app.request('/api/v1/links/batch', {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ links: [{ url: 'https://example.com/rl-batch' }] }),
        })
      ).status,
      429,
    );
    assert.equal((await createWith(await newKey('quiet'))).status, 201);
    // Redirects are never limited, however busy the creator was.
    const created = (await (
      await h.api('/api/v1/links', { method: 'POST', json: { url: 'https://example.com/hot' } })
    ).json()) as {
      code: string;
    };
    const statuses = await Promise.all(
      Array.from({ length: 60 }, async () => (await h.app.request(`/${created.code}`)).status),
    );
    assert.ok(statuses.every((s) => s === 301));
  });

  test('the budget is shared by every web instance through Redis', async () => {
    const key = await newKey('two-instances');
    // A second web instance: its own limiter and Redis connection, the same Redis.
    const deps2 = await createWebDeps(h.config, {
      sql: h.db.sql,
      logger: h.logger,
      workflows: h.deps.workflows,
    });
    const app2 = createApp(deps2);
    try {
      for (let i = 0; i < 5; i++) assert.equal((await createWith(key, i % 2 ? app2 : h.app, i)).status, 201);
      assert.equal((await createWith(key, app2, 9)).status, 429);
      assert.equal((await createWith(key, h.app, 10)).status, 429);
    } finally {
      await deps2.rateLimits.close();
    }
  });

  test('login is limited per account (failures only) and per client IP, with 429 + Retry-After', async () => {
    const ip = (addr: string) => ({ 'x-test-client-ip': addr });
    // A fresh browser each time (a signed-in one would be sent past the login form).
    const client = {
      login: (email: string, password: string, headers: Record<string, string>) =>
        createUiClient(h.app as never).login(email, password, headers),
    };
    // A success does not use up the budget.
    for (let i = 0; i < 4; i++) {
      const ok = await client.login('admin@example.test', 'correct horse battery', ip('10.0.0.1'));
      assert.equal(ok.status, 303);
    }
    for (let i = 0; i < 3; i++) {
      assert.equal((await client.login('victim@example.test', `guess-${i}`, ip(`10.0.1.${i}`))).status, 401);
    }
    // The account is locked for a while even with the right password, from any IP.
    const locked = await client.login('victim@example.test', 'whatever', ip('10.0.2.1'));
    assert.equal(locked.status, 429);
    assert.ok(Number(locked.headers.get('Retry-After')) > 60);
    assert.match(await locked.text(), /Too many sign-in attempts/);

    // One IP guessing across many accounts is stopped too; another IP is not.
    for (let i = 0; i < 6; i++) {
      assert.equal((await client.login(`user${i}@example.test`, 'nope', ip('10.9.9.9'))).status, 401);
    }
    assert.equal(
      (await client.login('admin@example.test', 'correct horse battery', ip('10.9.9.9'))).status,
      429,
    );
    assert.equal(
      (await client.login('admin@example.test', 'correct horse battery', ip('10.9.9.10'))).status,
      303,
    );
  });
});

describe('rate limits when Redis fails', () => {
  let redis: ChildProcess | undefined;
  after(() => {
    if (redis?.exitCode === null) redis.kill('SIGKILL');
  });

  test('a Redis outage falls back to per-instance limits: requests neither fail nor go unlimited', async () => {
    const port = await getFreePort();
    redis = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    const config = parseConfig({
      DATABASE_URL: h.db.url,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      RATE_LIMIT_CREATE_PER_MINUTE: '4',
    });
    const limits = createRateLimits(config, createLogger({ level: 'silent' }));
    const probe = createClient({ url: `redis://127.0.0.1:${port}` });
    try {
      // Until the limiter's client is connected, the in-process limiter answers; wait until Redis counts.
      await eventually(async () => {
        if (!probe.isOpen) await probe.connect();
        await limits.consumeCreations('warmup');
        return (await probe.exists('lifeline:rl:create:warmup')) === 1 ? true : undefined;
      });
      await probe.close();
      await limits.consumeCreations('subject', 2);
      redis.kill('SIGKILL');
      await new Promise((r) => redis!.once('exit', r));
      // Redis is gone: the in-process limiter answers within the timeout, and still limits.
      const started = Date.now();
      await limits.consumeCreations('subject', 4);
      await assert.rejects(
        limits.consumeCreations('subject'),
        (e: Error & { status?: number }) => e.status === 429,
      );
      assert.ok(Date.now() - started < 2_000, 'no hanging on the dead Redis');
    } finally {
      await limits.close();
    }
  });
});
