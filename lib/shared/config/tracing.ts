// OpenTelemetry traces (OTLP over HTTP, JSON): off unless an endpoint is set, under OpenTelemetry's own names.
import { z } from 'zod';
import { flag, optionalHttpUrl, optionalString } from './env_values.ts';

/** The samplers of OTEL_TRACES_SAMPLER that the SDK has without a remote service (the specification's names). */
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

/**
 * OTEL_EXPORTER_OTLP_HEADERS as the specification writes it: `name=value` pairs separated by commas, values
 * percent-encoded. The message never repeats the value: it usually holds a collector's token.
 */
const otlpHeaders = optionalString.transform((raw, ctx) => {
  if (raw === undefined) return {};
  const headers: Record<string, string> = {};
  for (const pair of raw.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    const name = at > 0 ? pair.slice(0, at).trim() : '';
    let value: string | undefined;
    try {
      value = at > 0 ? decodeURIComponent(pair.slice(at + 1).trim()) : undefined;
    } catch {
      value = undefined;
    }
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || value === undefined || /[\r\n\0]/.test(value)) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be name=value pairs separated by commas, values percent-encoded (value not shown)',
      });
      return z.NEVER;
    }
    headers[name.toLowerCase()] = value;
  }
  return headers;
});

export const tracingEnv = z.object({
  // The collector's base URL: traces go to {endpoint}/v1/traces (Jaeger and Tempo take OTLP on :4318).
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalHttpUrl,
  // The traces URL itself, used as given (wins over OTEL_EXPORTER_OTLP_ENDPOINT).
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalHttpUrl,
  // Only OTLP/HTTP with JSON bodies is sent; a collector's HTTP port takes it beside protobuf.
  OTEL_EXPORTER_OTLP_PROTOCOL: optionalString.pipe(
    z
      .enum(['http/json'], {
        message:
          'must be http/json (Lifeline sends OTLP/HTTP with JSON bodies; grpc and http/protobuf are not sent)',
      })
      .optional(),
  ),
  OTEL_EXPORTER_OTLP_HEADERS: otlpHeaders,
  OTEL_SERVICE_NAME: optionalString.pipe(
    z
      .string()
      .max(100, 'must be at most 100 characters')
      .regex(/^[\x21-\x7e][\x20-\x7e]*$/, 'must be printable ASCII')
      .optional(),
  ),
  OTEL_TRACES_SAMPLER: optionalString.pipe(
    z.enum(TRACE_SAMPLERS, { message: `must be one of ${TRACE_SAMPLERS.join(', ')}` }).optional(),
  ),
  OTEL_TRACES_SAMPLER_ARG: optionalString.pipe(
    z
      .string()
      .regex(/^\d+(\.\d+)?$/, 'must be a ratio from 0 to 1')
      .transform(Number)
      .pipe(z.number().max(1, 'must be a ratio from 0 to 1'))
      .optional(),
  ),
  // The specification's switch: true keeps tracing off whatever else is set.
  OTEL_SDK_DISABLED: flag.default(false),
});

type TracingEnv = z.infer<typeof tracingEnv>;

export interface TracingConfig {
  /**
   * Where and how spans are exported (OTLP/HTTP JSON); undefined: tracing is off and nothing of the OpenTelemetry SDK
   * is loaded. `headers` are secrets: never logged.
   */
  tracing:
    | {
        tracesUrl: string;
        headers: Record<string, string>;
        /** OTEL_SERVICE_NAME; undefined: each process names itself (lifeline-web, lifeline-worker). */
        serviceName: string | undefined;
        sampler: { name: TraceSamplerName; ratio: number };
      }
    | undefined;
}

export function tracingConfig(e: TracingEnv): TracingConfig {
  const tracesUrl =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (e.OTEL_EXPORTER_OTLP_ENDPOINT ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces` : undefined);
  if (!tracesUrl || e.OTEL_SDK_DISABLED) return { tracing: undefined };
  return {
    tracing: {
      tracesUrl,
      headers: e.OTEL_EXPORTER_OTLP_HEADERS,
      serviceName: e.OTEL_SERVICE_NAME,
      // The specification's default: follow the caller's decision, sample every root.
      sampler: {
        name: e.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on',
        ratio: e.OTEL_TRACES_SAMPLER_ARG ?? 1,
      },
    },
  };
}
