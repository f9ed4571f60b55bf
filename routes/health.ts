import { Hono } from 'hono';
import { createPostgresCheck } from '../lib/health/web_readiness.ts';
import type { AppEnv, WebDeps } from './app_env.ts';
import { requireMetricsToken } from './middleware/metrics_token.ts';

/** /healthz (can this instance serve redirects?) and /metrics (Prometheus text, behind METRICS_TOKEN). */
export function createHealthRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  const checkPostgres = createPostgresCheck(deps.sql);

  app.get('/healthz', async (c) => {
    const postgres = await checkPostgres();
    const ok = postgres === 'ok';
    return c.json({ status: ok ? 'ok' : 'degraded', postgres }, ok ? 200 : 503, {
      'Cache-Control': 'no-store',
    });
  });

  app.get('/metrics', requireMetricsToken(deps.config.metricsToken), async (c) => {
    const text = await (deps.metricsText ?? (() => deps.metrics.registry.metrics()))();
    return c.body(text, 200, {
      'Content-Type': deps.metrics.registry.contentType,
      'Cache-Control': 'no-store',
    });
  });

  return app;
}
