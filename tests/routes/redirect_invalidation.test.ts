import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import type { Hono } from 'hono';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { createMetrics, type Metrics } from '../../lib/shared/metrics.ts';
import { createSql, type Sql } from '../../lib/stores/sql.ts';
import {
  createUnavailableGateway,
  createUnavailableOpsGateway,
} from '../../lib/temporal/unavailable_gateways.ts';
import { createApp } from '../../routes/app.ts';
import type { AppEnv, WebDeps } from '../../routes/app_env.ts';
import { loadStaticFiles } from '../../routes/static.ts';
import { createWebDeps } from '../../server/web_deps.ts';

const REDIS_URL = process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Far longer than any bus delivery: an answer that changes before this elapses was invalidated, not expired. */
const LRU_TTL_MS = 60_000;
/** What we allow between the change's API answer and the other instance answering anew (Temporal included). */
const PROPAGATION_LIMIT_MS = 5_000;

/** A second web instance on the same database: its own pool, LRU, serving-store client and bus subscription. */
async function startSecondInstance(h: Harness) {
  const sql: Sql = createSql({ url: h.db.url, max: 4 });
  const metrics = createMetrics();
  const deps: WebDeps = await createWebDeps(h.config, {
    sql,
    logger: createLogger({ level: 'silent' }),
    metrics,
    workflows: createUnavailableGateway('second instance: reads only'),
    ops: createUnavailableOpsGateway('second instance: reads only'),
  });
  const app: Hono<AppEnv> = createApp(deps, { staticFiles: await loadStaticFiles() });
  return {
    app,
    metrics,
    async close() {
      await deps.close();
      await sql.end({ timeout: 5 });
    },
  };
}

async function lruHits(metrics: Metrics): Promise<number> {
  const { values } = await metrics.lookups.get();
  return values.find((v) => v.labels.layer === 'lru' && v.labels.result === 'hit')?.value ?? 0;
}

for (const [name, env] of [
  ['Redis pub/sub (REDIS_URL)', { REDIS_URL, REDIS_KEY_PREFIX: `lltest:${randomUUID()}:` }],
  ['Postgres LISTEN/NOTIFY (no Redis)', {}],
] as const) {
  describe(`invalidation across two web instances: ${name}`, () => {
    let h: Harness;
    let second: Awaited<ReturnType<typeof startSecondInstance>>;
    let worker: { stop(): Promise<void> };
    after(async () => {
      await worker?.stop();
      await second?.close();
      await h?.close();
    });

    test('an edit, then an unpublish, made through instance A reach instance B’s LRU within the bound', async () => {
      h = await createHarness({ env: { ...env, RESOLVER_CACHE_TTL_MS: String(LRU_TTL_MS) } });
      worker = await h.startWorker();
      second = await startSecondInstance(h);
      // Let B's subscription settle (its first resync clears an empty cache).
      await new Promise((r) => setTimeout(r, 300));

      const created = await h.api('/api/v1/links', {
        method: 'POST',
        json: { url: 'https://news.example/v1' },
      });
      assert.equal(created.status, 201);
      const { code } = (await created.json()) as { code: string };
      await h.temporal.client.workflow
        .getHandle(`sync:${code}`)
        .result()
        .catch(() => {});
      const location = async (app: Hono<AppEnv>) => (await app.request(`/${code}`)).headers.get('Location');
      assert.equal(await location(second.app), 'https://news.example/v1');
      assert.equal(await location(second.app), 'https://news.example/v1');
      assert.ok((await lruHits(second.metrics)) >= 1, 'B answers from its LRU');

      const edited = Date.now();
      const patch = await h.api(`/api/v1/links/${code}`, {
        method: 'PATCH',
        json: { url: 'https://news.example/v2' },
      });
      assert.equal(patch.status, 200, await patch.clone().text());
      await eventually(
        async () => ((await location(second.app)) === 'https://news.example/v2' ? true : undefined),
        { timeoutMs: PROPAGATION_LIMIT_MS, intervalMs: 20, what: 'B to see the edit' },
      );
      const tookMs = Date.now() - edited;
      assert.ok(tookMs < LRU_TTL_MS / 10, `took ${tookMs} ms`);
      process.stderr.write(`[invalidation ${name}] edit visible on instance B after ${tookMs} ms\n`);
      assert.equal(await location(h.app), 'https://news.example/v2', 'A too');

      const gone = await h.api(`/api/v1/links/${code}`, { method: 'PATCH', json: { status: 'gone' } });
      assert.equal(gone.status, 200);
      await eventually(
        async () => ((await second.app.request(`/${code}`)).status === 410 ? true : undefined),
        {
          timeoutMs: PROPAGATION_LIMIT_MS,
          intervalMs: 20,
          what: 'B to answer 410',
        },
      );
    });

    test('Temporal unreachable: an edit made on B (its sync deferred) still reaches A at once', async () => {
      const created = await h.api('/api/v1/links', {
        method: 'POST',
        json: { url: 'https://news.example/t1' },
      });
      const { code } = (await created.json()) as { code: string };
      await h.temporal.client.workflow
        .getHandle(`sync:${code}`)
        .result()
        .catch(() => {});
      assert.equal((await h.app.request(`/${code}`)).headers.get('Location'), 'https://news.example/t1');
      // B's workflow gateway refuses everything, like a Temporal outage.
      const patch = await second.app.request(`/api/v1/links/${code}`, {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${h.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: 'https://news.example/t2' }),
      });
      assert.equal(patch.status, 200, await patch.clone().text());
      assert.equal(patch.headers.get('Lifeline-Sync'), 'deferred');
      await eventually(
        async () =>
          (await h.app.request(`/${code}`)).headers.get('Location') === 'https://news.example/t2'
            ? true
            : undefined,
        { timeoutMs: PROPAGATION_LIMIT_MS, intervalMs: 20, what: 'A to see the edit' },
      );
    });
  });
}
