// OpenTelemetry traces for a process, when configured (OTEL_EXPORTER_OTLP_*; ADR 0072). Off, none of the
// OpenTelemetry SDK is loaded (prom-client's own require of the no-op @opentelemetry/api aside): every package
// below is imported dynamically, inside startTracing, and only type imports sit at the top (the build keeps dynamic
// imports of packages as they are; a static import inside a lazily run module would be hoisted into the entry and
// loaded at start).
//
// What is traced: the web tier's API and UI requests (routes/middleware/trace_requests.ts), the Temporal client's
// workflow starts and signals, the workflows and activities a worker runs (Temporal's own interceptors), and the
// worker's outgoing HTTP calls (a vendor such as Bitly). The W3C trace context rides in the Temporal headers, so
// one trace goes from an API request through the workflow it starts to that workflow's activities. The redirect
// path never makes a span: the Node fast path and the redirect route are outside the middleware.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Span, Tracer } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import type { TracingConfig } from '../lib/shared/config/tracing.ts';
import type { Logger } from '../lib/shared/logger.ts';

export type TracingSettings = NonNullable<TracingConfig['tracing']>;

export interface Tracing {
  /** The process's tracer (request spans, outgoing calls). */
  tracer: Tracer;
  /** For the Temporal client: a span per workflow start, signal, query, with its context in the headers. */
  clientInterceptors: WorkflowClientInterceptor[];
  /** Sends what is still buffered and stops exporting; graceful shutdown calls it last. */
  shutdown(): Promise<void>;
}

export interface WorkerTracing extends Tracing {
  /** Activity spans (parented by the workflow's schedule span) and the activities' own Temporal client. */
  interceptors: WorkerInterceptors;
  /** The sink through which workflow spans leave the workflow sandbox for this process's exporter. */
  sinks: InjectedSinks<OpenTelemetrySinks>;
}

/** The process's tracing, or undefined (nothing imported) when OTEL_EXPORTER_OTLP_* is not configured. */
export async function startTracing(
  settings: TracingSettings | undefined,
  options: { role: 'web'; logger: Logger },
): Promise<Tracing | undefined>;
export async function startTracing(
  settings: TracingSettings | undefined,
  options: { role: 'worker'; logger: Logger },
): Promise<WorkerTracing | undefined>;
export async function startTracing(
  settings: TracingSettings | undefined,
  options: { role: 'web' | 'worker'; logger: Logger },
): Promise<Tracing | WorkerTracing | undefined> {
  if (!settings) return undefined;
  const [api, core, resources, base, hooks, otlp] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const serviceName = settings.serviceName ?? `lifeline-${options.role}`;
  const resource = new resources.Resource({ 'service.name': serviceName, 'lifeline.process': options.role });
  const exporter = new otlp.OTLPTraceExporter({
    url: settings.tracesUrl,
    headers: settings.headers,
    timeoutMillis: 10_000,
  });
  // Batched off the request: a slow or absent collector costs a bounded queue (spans past it are dropped), never
  // a request's time.
  const processor: SpanProcessor = new base.BatchSpanProcessor(exporter, {
    maxQueueSize: 2048,
    maxExportBatchSize: 512,
    scheduledDelayMillis: 2_000,
    exportTimeoutMillis: 10_000,
  });
  const provider = new base.BasicTracerProvider({
    resource,
    sampler: makeSampler(base, settings.sampler),
    spanProcessors: [processor],
  });
  provider.register({
    contextManager: new hooks.AsyncLocalStorageContextManager().enable(),
    propagator: new core.W3CTraceContextPropagator(),
  });
  // The exporter's own complaints (a collector that refuses or cannot be reached) go to our log, once per kind.
  api.diag.setLogger(exporterDiagnostics(options.logger), api.DiagLogLevel.WARN);
  const tracer = api.trace.getTracer('lifeline');
  options.logger.info(
    // The URL's origin and path only: credentials belong in OTEL_EXPORTER_OTLP_HEADERS, which is never logged.
    { tracesUrl: redactUrl(settings.tracesUrl), serviceName, sampler: settings.sampler.name },
    'tracing: exporting spans over OTLP/HTTP',
  );
  const stopOutgoing = options.role === 'worker' ? traceOutgoingHttp(api, tracer) : () => {};
  const shutdown = async () => {
    stopOutgoing();
    await provider.shutdown().catch((err: unknown) => {
      options.logger.warn({ err }, 'tracing: could not send the last spans');
    });
  };

  if (options.role === 'web') {
    const { OpenTelemetryWorkflowClientInterceptor } = await import(
      '@temporalio/interceptors-opentelemetry/lib/client/index.js'
    );
    return { tracer, clientInterceptors: [new OpenTelemetryWorkflowClientInterceptor({ tracer })], shutdown };
  }
  const temporal = await import('@temporalio/interceptors-opentelemetry');
  const clientInterceptors = [new temporal.OpenTelemetryWorkflowClientInterceptor({ tracer })];
  return {
    tracer,
    clientInterceptors,
    shutdown,
    interceptors: {
      client: { workflow: clientInterceptors },
      activity: [
        (ctx) => ({
          inbound: new temporal.OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
          outbound: new temporal.OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: temporal.makeWorkflowExporter(processor, resource) },
  };
}

type Base = typeof import('@opentelemetry/sdk-trace-base');

function makeSampler(base: Base, sampler: TracingSettings['sampler']) {
  const root = (name: string) => {
    if (name.endsWith('always_off')) return new base.AlwaysOffSampler();
    if (name.endsWith('traceidratio')) return new base.TraceIdRatioBasedSampler(sampler.ratio);
    return new base.AlwaysOnSampler();
  };
  return sampler.name.startsWith('parentbased_')
    ? new base.ParentBasedSampler({ root: root(sampler.name) })
    : root(sampler.name);
}

function redactUrl(value: string): string {
  const url = new URL(value);
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** OpenTelemetry's diagnostics at warn and above, each distinct message logged once (an outage repeats it). */
function exporterDiagnostics(logger: Logger) {
  const seen = new Set<string>();
  const once = (level: 'warn' | 'error') => (message: string) => {
    const text = String(message).slice(0, 300);
    if (seen.has(text) || seen.size > 100) return;
    seen.add(text);
    logger[level]({ tracing: true }, `tracing: ${text}`);
  };
  const ignore = () => {};
  return { error: once('error'), warn: once('warn'), info: ignore, debug: ignore, verbose: ignore };
}

type Api = typeof import('@opentelemetry/api');

/**
 * A client span for each HTTP request made with fetch inside traced work (a vendor's API in an activity), from
 * undici's diagnostics channels, which fire in the caller's async context so the activity's span is the parent;
 * outside a span nothing is recorded. Method, host and status only: paths and queries may carry keys.
 */
function traceOutgoingHttp(api: Api, tracer: Tracer): () => void {
  const spans = new WeakMap<object, Span>();
  const onCreate = (message: unknown) => {
    if (!api.trace.getSpan(api.context.active())) return;
    const { request } = message as { request: { method: string; origin: string | URL } };
    const origin = new URL(String(request.origin));
    spans.set(
      request,
      tracer.startSpan(request.method, {
        kind: api.SpanKind.CLIENT,
        attributes: {
          'http.request.method': request.method,
          'server.address': origin.hostname,
          'server.port': Number(origin.port || (origin.protocol === 'https:' ? 443 : 80)),
        },
      }),
    );
  };
  const onHeaders = (message: unknown) => {
    const { request, response } = message as { request: object; response: { statusCode: number } };
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    span.setAttribute('http.response.status_code', response.statusCode);
    if (response.statusCode >= 400) span.setStatus({ code: api.SpanStatusCode.ERROR });
    span.end();
  };
  const onError = (message: unknown) => {
    const { request, error } = message as { request: object; error: Error };
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: error.name });
    span.end();
  };
  subscribe('undici:request:create', onCreate);
  subscribe('undici:request:headers', onHeaders);
  subscribe('undici:request:error', onError);
  return () => {
    unsubscribe('undici:request:create', onCreate);
    unsubscribe('undici:request:headers', onHeaders);
    unsubscribe('undici:request:error', onError);
  };
}
