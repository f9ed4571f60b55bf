import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { eventually } from '../../../devkit/harness/harness.ts';
import { createConfiguredResolver } from '../../../lib/redirect/create_resolver.ts';
import type { LayeredResolver } from '../../../lib/redirect/layered_resolver.ts';
import { parseConfig } from '../../../lib/shared/config.ts';
import { insertLink, updateLink } from '../../../lib/stores/link_store.ts';
import { createSql, type Sql } from '../../../lib/stores/sql.ts';
import { type PrivateRedis, startPrivateRedis } from '../../helpers/private_redis.ts';

let db: TestDatabase;
let redis: PrivateRedis;
before(async () => {
  db = await createTestDatabase();
  redis = await startPrivateRedis();
});
after(async () => {
  await redis.stop();
  await db.drop();
});

let n = 0;
async function createCode(url: string): Promise<string> {
  const code = `bus${Date.now().toString(36)}${n++}`;
  await insertLink(db.sql, { code, targetUrl: url, status: 'active', origin: 'api', owner: 'test' });
  return code;
}

/** A web instance (own pool, LRU with a long TTL, subscribed) and a worker that announces changes. */
async function pair(env: Record<string, string>) {
  const config = parseConfig({ DATABASE_URL: db.url, RESOLVER_CACHE_TTL_MS: '60000', ...env });
  const webSql: Sql = createSql({ url: db.url, max: 2 });
  const web = createConfiguredResolver(config, { sql: webSql, role: 'web' });
  const worker = createConfiguredResolver(config, { sql: db.sql, role: 'worker' });
  return {
    web,
    worker,
    async close() {
      await web.close();
      await worker.close();
      await webSql.end({ timeout: 5 });
    },
  };
}

async function answers(resolver: LayeredResolver, code: string, url: string, timeoutMs: number) {
  await eventually(async () => ((await resolver.resolve(code))?.url === url ? true : undefined), {
    timeoutMs,
    intervalMs: 20,
    what: `${code} → ${url}`,
  });
}

for (const kind of ['redis', 'postgres'] as const) {
  describe(`invalidation bus: ${kind}`, () => {
    let p: Awaited<ReturnType<typeof pair>>;
    before(async () => {
      p = await pair(kind === 'redis' ? { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'bus:' } : {});
      await new Promise((r) => setTimeout(r, 300));
    });
    after(async () => {
      await p.close();
    });

    test('a refresh on the worker drops the web instance’s entry', async () => {
      const code = await createCode('https://example.com/one');
      assert.equal((await p.web.resolve(code))?.url, 'https://example.com/one');
      await updateLink(db.sql, code, { targetUrl: 'https://example.com/two' });
      assert.equal((await p.web.resolve(code))?.url, 'https://example.com/one', 'cached');
      await p.worker.refresh(code);
      await answers(p.web, code, 'https://example.com/two', 2_000);
    });

    test('a subscriber that lost its connection drops everything when it is back (messages may be lost)', async () => {
      const code = await createCode('https://example.com/before');
      assert.equal((await p.web.resolve(code))?.url, 'https://example.com/before');
      // The change whose message is "lost": written, never announced.
      await updateLink(db.sql, code, { targetUrl: 'https://example.com/after' });
      await p.worker.store?.delete(code);
      assert.equal((await p.web.resolve(code))?.url, 'https://example.com/before', 'cached');
      if (kind === 'redis') {
        const admin = createClient({ url: redis.url });
        await admin.connect();
        await admin.sendCommand(['CLIENT', 'KILL', 'TYPE', 'pubsub']);
        await admin.close();
      } else {
        // Only our own database's LISTEN connection.
        await db.sql`
          SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND query ILIKE 'listen%'`;
      }
      await answers(p.web, code, 'https://example.com/after', 10_000);
      // And the bus works again after the reconnection.
      await updateLink(db.sql, code, { targetUrl: 'https://example.com/again' });
      await p.worker.refresh(code);
      await answers(p.web, code, 'https://example.com/again', 2_000);
    });
  });
}

describe('a refresh fails (so its activity retries) when the change cannot be stored or announced', () => {
  test('Redis down: refresh rejects quickly instead of leaving a stale serving record', async () => {
    const own = await startPrivateRedis();
    const p = await pair({ REDIS_URL: own.url, REDIS_KEY_PREFIX: 'down:' });
    try {
      const code = await createCode('https://example.com/x');
      await eventually(async () => {
        await p.worker.refresh(code);
        return true;
      });
      await own.stop();
      const started = Date.now();
      await assert.rejects(p.worker.refresh(code));
      assert.ok(Date.now() - started < 3_000);
      // The web instance still answers, from Postgres.
      assert.equal((await p.web.resolve(code))?.url, 'https://example.com/x');
    } finally {
      await p.close();
      await own.stop();
    }
  });
});
