// A server span per API or UI request, when tracing is on (boot/tracing.ts, ADR 0072). Mounted on /api/* and /ui/*
// only: redirects, previews, probes, /metrics and static files never make a span. Only types come from
// OpenTelemetry here, so nothing of it loads with tracing off.
import type { Span, SpanKind, SpanStatusCode, Tracer } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app_env.ts';

// The API's enum values (stable since 1.0), written out so this file needs no runtime import of the package.
const SERVER = 1 as SpanKind.SERVER;
const ERROR = 2 as SpanStatusCode.ERROR;

/**
 * The span is named `{method} {route template}` (`POST /api/v1/links`, `GET /ui/links/:code`) once the route is
 * known; its attributes are the method, the template and the status, never the path, the query or a header (the
 * path of a UI page can hold a token, a query an e-mail address). A Temporal call made while handling the
 * request is its child, and carries its context on to the workflow.
 */
export function traceRequests(tracer: Tracer): MiddlewareHandler<AppEnv> {
  return (c, next) =>
    tracer.startActiveSpan(
      c.req.method,
      { kind: SERVER, attributes: { 'http.request.method': c.req.method } },
      async (span: Span) => {
        try {
          await next();
        } finally {
          // After next(): the matched handler's route (Hono keeps the last one it ran).
          const route = c.req.routePath || 'unmatched';
          const status = c.res.status;
          span.updateName(`${c.req.method} ${route}`);
          span.setAttribute('http.route', route);
          span.setAttribute('http.response.status_code', status);
          if (status >= 500) span.setStatus({ code: ERROR });
          span.end();
        }
      },
    );
}
