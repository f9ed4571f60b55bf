import { Hono } from 'hono';
import type { AppEnv, WebDeps } from './app_env.ts';
import { requireMetricsToken } from './middleware/metrics_token.ts';

const HEALTH_TIMEOUT_MS = 1_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms).unref?.(),
    ),
  ]);
}

/** /healthz (can this instance serve redirects?) and /metrics (Prometheus text, behind METRICS_TOKEN). */
export function createHealthRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();

  app.get('/healthz', async (c) => {
    let postgres = 'ok';
    try {
      await withTimeout(
        deps.sql`SELECT 1`.then(() => undefined),
        HEALTH_TIMEOUT_MS,
      );
    } catch {
      postgres = 'down';
    }
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
