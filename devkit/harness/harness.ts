import type { Hono } from 'hono';
import { ensureBootstrap } from '../../lib/auth/bootstrap.ts';
import { signWebhook } from '../../lib/auth/webhook_signature.ts';
import type { DomainWatchOverrides } from '../../lib/domains/domain_watch_deps.ts';
import type { SyncQueueSettings } from '../../lib/propagation/sync_link_batch.ts';
import { type Config, parseConfig } from '../../lib/shared/config.ts';
import { randomToken } from '../../lib/shared/crypto.ts';
import { createLogger, type Logger } from '../../lib/shared/logger.ts';
import { createMetrics } from '../../lib/shared/metrics.ts';
import type { VendorDepsOverrides } from '../../lib/vendors/vendor_deps.ts';
import { createApp } from '../../routes/app.ts';
import type { AppEnv, WebDeps } from '../../routes/app_env.ts';
import { loadStaticFiles } from '../../routes/static.ts';
import { createWebDeps } from '../../server/web_deps.ts';
import {
  createLifelineWorker,
  installTemporalRuntime,
  type LifelineWorker,
} from '../../workers/create_worker.ts';
import { createWorkerDeps } from '../../workers/worker_deps.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { connectTestTemporal, type TestTemporal, uniqueId } from './temporal.ts';

export interface Harness {
  db: TestDatabase;
  temporal: TestTemporal;
  config: Config;
  logger: Logger;
  deps: WebDeps;
  app: Hono<AppEnv>;
  /** The run-unique task queue this harness's workflows and worker use. */
  taskQueue: string;
  /** An admin-scoped API key (BOOTSTRAP_API_KEY). */
  apiKey: string;
  webhookSecret: string;
  /** Calls the app in-process with the admin key (unless headers say otherwise). */
  api(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  /** Sends a signed WordPress webhook. */
  webhook(
    body: unknown,
    options?: { secret?: string; timestamp?: number; rawBody?: string },
  ): Promise<Response>;
  /** Starts a real worker on this harness's task queue; stop() drains it. `vendors` tunes vendor timings. */
  startWorker(options?: {
    vendors?: VendorDepsOverrides;
    /** Sync-queue tuning (ADR 0024), e.g. a shorter backoff. */
    syncQueue?: Partial<SyncQueueSettings>;
    /** The domain watch's resolver and trusted roots (made-up names, the test's own CA). */
    domainWatch?: DomainWatchOverrides;
    /** Destination checks: a resolver for made-up names (loopback sites), name servers, a clock. */
    destinations?: Parameters<typeof createWorkerDeps>[1]['destinations'];
  }): Promise<{ worker: LifelineWorker; stop(): Promise<void> }>;
  close(): Promise<void>;
}

/**
 * One test file's world: its own Postgres database, a unique task queue on the shared Temporal dev server,
 * the real app (called in-process with Request objects), and real workers on demand. Nothing is mocked.
 */
/** OUTGOING_ALLOWED_PRIVATE for tests: loopback, where every fake listens. */
export const TEST_OUTGOING_ALLOWANCE = '127.0.0.0/8,::1,localhost';

/** The first admin every harness bootstraps (ADMIN_EMAIL, ADMIN_PASSWORD). */
export const HARNESS_ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };

export async function createHarness(options: { env?: Record<string, string> } = {}): Promise<Harness> {
  // The Temporal Runtime must be installed before the first native connection of the process.
  installTemporalRuntime(createLogger({ level: process.env.LOG_LEVEL ?? 'silent', name: 'temporal' }));
  const db = await createTestDatabase();
  const temporal = await connectTestTemporal();
  const taskQueue = uniqueId('tq');
  const apiKey = `ll_test_${randomToken(32)}`;
  const webhookSecret = `whsec_test_${randomToken(32)}`;
  const config = parseConfig({
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    BOOTSTRAP_API_KEY: apiKey,
    WORDPRESS_WEBHOOK_SECRET: webhookSecret,
    ADMIN_EMAIL: HARNESS_ADMIN.email,
    ADMIN_PASSWORD: HARNESS_ADMIN.password,
    SHORT_BASE_URL: 'http://sho.rt.test',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    // The vendor fakes, listings and webhooks of tests listen on loopback: allowed explicitly, as an operator
    // would allow an internal host (a test of the rule itself passes an empty list).
    OUTGOING_ALLOWED_PRIVATE: TEST_OUTGOING_ALLOWANCE,
    ...options.env,
  });
  const logger = createLogger({ level: config.logLevel, name: 'test' });
  await ensureBootstrap(db.sql, config);
  const deps = await createWebDeps(config, { sql: db.sql, logger, metrics: createMetrics() });
  const app = createApp(deps, { staticFiles: await loadStaticFiles() });
  const workers = new Set<{ stop(): Promise<void> }>();

  return {
    db,
    temporal,
    config,
    logger,
    deps,
    app,
    taskQueue,
    apiKey,
    webhookSecret,
    api(path, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has('Authorization')) headers.set('Authorization', `Bearer ${apiKey}`);
      let body = init.body;
      if (init.json !== undefined) {
        body = JSON.stringify(init.json);
        if (!headers.has('Content-Type')) headers.set('Content-Type', 'application/json');
      }
      return Promise.resolve(app.request(path, { ...init, headers, body }));
    },
    async webhook(payload, opts = {}) {
      const raw = opts.rawBody ?? JSON.stringify(payload);
      const signature = await signWebhook(
        opts.secret ?? webhookSecret,
        raw,
        opts.timestamp ?? Date.now() / 1000,
      );
      return app.request('/api/v1/hooks/wordpress', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Lifeline-Signature': signature },
        body: raw,
      });
    },
    async startWorker(workerOptions = {}) {
      const worker = await createLifelineWorker({
        connection: temporal.nativeConnection,
        namespace: config.temporal.namespace,
        taskQueue,
        ...(temporal.workflowBundle ? { workflowBundle: temporal.workflowBundle } : {}),
        // One process: the worker shares the web tier's resolver, so a refresh drops this process's LRU
        // entry before the activity completes (and still writes the serving store and publishes).
        deps: createWorkerDeps(config, {
          sql: db.sql,
          logger,
          resolver: deps.resolver,
          servingStore: deps.servingStore,
          ...(workerOptions.vendors ? { vendors: workerOptions.vendors } : {}),
          ...(workerOptions.syncQueue ? { syncQueue: workerOptions.syncQueue } : {}),
          ...(workerOptions.domainWatch ? { domainWatch: workerOptions.domainWatch } : {}),
          ...(workerOptions.destinations ? { destinations: workerOptions.destinations } : {}),
        }),
      });
      const running = worker.run();
      const handle = {
        worker,
        async stop() {
          workers.delete(handle);
          // Both task queues' workers, whichever still runs (a test may have stopped one).
          worker.shutdown();
          await running;
        },
      };
      workers.add(handle);
      return handle;
    },
    async close() {
      for (const w of [...workers]) await w.stop();
      await deps.close();
      await temporal.close();
      await db.drop();
    },
  };
}

/**
 * Polls `check` until it returns a value other than undefined (or throws after `timeoutMs`). `what` names the
 * condition in the error; a function is called then, so it can show what was seen until the deadline.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string | (() => string) } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 50));
  }
  const what = typeof options.what === 'function' ? options.what() : options.what;
  throw new Error(`timed out waiting for ${what ?? 'a condition'}${last ? `: ${last}` : ''}`);
}

/** Creates a link through the API (201, or 200 for a deduplicated one) and returns its code. */
export async function createLinkCode(
  h: Pick<Harness, 'api'>,
  json: Record<string, unknown>,
): Promise<string> {
  const res = await h.api('/api/v1/links', { method: 'POST', json });
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`create failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { code: string }).code;
}
