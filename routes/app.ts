import { Hono } from 'hono';
import { requestId } from 'hono/request-id';
import { AppError, NotFoundError } from '../lib/shared/errors.ts';
import { problemResponse } from '../lib/shared/problem.ts';
import { createBlocklistRoutes } from './api/blocklist.ts';
import { createDestinationRoutes } from './api/destinations.ts';
import { createExportRoutes } from './api/exports.ts';
import { createHooksRoutes } from './api/hooks.ts';
import { createKeysRoutes } from './api/keys.ts';
import { createLinkQrApiRoutes } from './api/link_qr.ts';
import { createLinksRoutes } from './api/links.ts';
import { createOpenApiRoutes } from './api/openapi.ts';
import { createOpsRoutes } from './api/ops.ts';
import { createReportsRoutes } from './api/reports.ts';
import { createRetargetRoutes } from './api/retargets.ts';
import { createSafetyRoutes } from './api/safety.ts';
import { createWebhookRoutes } from './api/webhooks.ts';
import { createWordPressAdminRoutes } from './api/wordpress_admin.ts';
import type { AppEnv, WebDeps } from './app_env.ts';
import { createHealthRoutes } from './health.ts';
import { authorizeApi } from './middleware/authorize.ts';
import { refuseNulInUrl } from './middleware/refuse_nul.ts';
import { traceRequests } from './middleware/trace_requests.ts';
import { createProbeRoutes } from './probes.ts';
import { createRedirectRoutes } from './redirect.tsx';
import { createReportRoutes } from './report.tsx';
import { createStaticRoutes, type StaticFile } from './static.ts';
import { createUiRoutes } from './ui/index.tsx';

/** The whole web tier as one Hono app; the same app runs on Node and Deno. */
export function createApp(deps: WebDeps, options: { staticFiles?: Map<string, StaticFile> } = {}) {
  const app = new Hono<AppEnv>();
  const routing = deps.hostRouting;

  app.use(requestId({ limitLength: 100 }));
  // Probes answer before the access log and request metrics (an orchestrator asks every few seconds), on every host.
  app.route('/', createProbeRoutes(deps));

  // Access log and request metrics for everything but redirects (counted by outcome instead).
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    const route = c.req.routePath || 'unmatched';
    if (route === '/:code') return;
    const seconds = (performance.now() - started) / 1000;
    deps.metrics.httpRequests.inc({ route, method: c.req.method, status: String(c.res.status) });
    deps.metrics.httpDuration.observe({ route }, seconds);
    deps.logger.info(
      {
        reqId: c.get('requestId'),
        method: c.req.method,
        path: c.req.path,
        route,
        status: c.res.status,
        ms: Math.round(seconds * 10_000) / 10,
      },
      'request',
    );
  });

  // With separate hosts, each serves only its own routes (lib/redirect/host_routing.ts decides which).
  if (routing.split) {
    app.use(async (c, next) => {
      if (!routing.serves(c.req.header('Host') ?? '', c.req.path)) throw new NotFoundError();
      await next();
    });
  }

  app.onError((error, c) => {
    if (!(error instanceof AppError)) {
      deps.logger.error({ err: error, reqId: c.get('requestId'), path: c.req.path }, 'unhandled error');
    }
    return problemResponse(error, c.req.path);
  });
  // Unknown paths (e.g. /a/b on the short host) are not pages for search engines either.
  app.notFound((c) => {
    const response = problemResponse(new NotFoundError(`Nothing at ${c.req.path}.`), c.req.path);
    response.headers.set('X-Robots-Tag', 'noindex');
    return response;
  });

  // With tracing on (OTEL_EXPORTER_OTLP_*), a span per API and UI request; nothing else is traced here.
  if (deps.tracer) {
    app.use('/api/*', traceRequests(deps.tracer));
    app.use('/ui/*', traceRequests(deps.tracer));
  }
  // No path segment or parameter of the API or the UI takes a NUL character (Postgres cannot compare one).
  app.use('/api/*', refuseNulInUrl());
  app.use('/ui/*', refuseNulInUrl());
  // Every API route's permission, from the one table (routes/route_rules.ts).
  app.use('/api/v1/*', authorizeApi(deps));
  app.route('/', createHealthRoutes(deps));
  app.route('/api/v1/links', createLinksRoutes(deps));
  app.route('/api/v1/links', createLinkQrApiRoutes(deps));
  app.route('/api/v1/hooks', createHooksRoutes(deps));
  app.route('/api/v1/blocklist', createBlocklistRoutes(deps));
  app.route('/api/v1/ops', createOpsRoutes(deps));
  app.route('/api/v1/safety', createSafetyRoutes(deps));
  app.route('/api/v1/keys', createKeysRoutes(deps));
  app.route('/api/v1/webhooks', createWebhookRoutes(deps));
  app.route('/api/v1/reports', createReportsRoutes(deps));
  app.route('/api/v1/destinations', createDestinationRoutes(deps));
  app.route('/api/v1/retargets', createRetargetRoutes(deps));
  app.route('/api/v1/wordpress', createWordPressAdminRoutes(deps));
  app.route('/api/v1', createOpenApiRoutes(deps));
  app.route('/api/v1', createExportRoutes(deps));
  app.route('/ui', createUiRoutes(deps));
  if (options.staticFiles) app.route('/', createStaticRoutes(options.staticFiles));

  app.get('/', (c) => {
    if (routing.isShortHost(c.req.header('Host') ?? '')) {
      return deps.config.rootRedirectUrl ? c.redirect(deps.config.rootRedirectUrl, 302) : c.notFound();
    }
    return c.redirect('/ui', 302);
  });

  // Reader reports (POST /{code}/report), before the catch-all code route.
  app.route('/', createReportRoutes(deps));
  // Last: any other single path segment is a code.
  app.route('/', createRedirectRoutes(deps));
  return app;
}
