import { Hono } from 'hono';
import { createWebReadinessCheck } from '../lib/health/web_readiness.ts';
import type { AppEnv, WebDeps } from './app_env.ts';

const NO_STORE = { 'Cache-Control': 'no-store' };

/**
 * Orchestrator probes (docs/DEPLOYING.md, "Probes"; ADR 0021): /livez answers while the process can answer at all;
 * /readyz says whether this instance should get traffic (lib/health/web_readiness.ts). /healthz (API.md) stays
 * as it was, in health.ts.
 */
export function createProbeRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  const checkReadiness = createWebReadinessCheck({
    sql: deps.sql,
    servingStore: deps.servingStore,
    cache: deps.config.resolver.cacheMax > 0 ? deps.resolver : undefined,
    drain: deps.drain,
  });
  app.get('/livez', (c) => c.json({ status: 'ok' }, 200, NO_STORE));
  app.get('/readyz', async (c) => {
    const readiness = await checkReadiness();
    return c.json(readiness, readiness.status === 'ready' ? 200 : 503, NO_STORE);
  });
  return app;
}
