// An OpenTelemetry collector's OTLP/HTTP traces receiver on loopback, for tests (the OTLP specification,
// opentelemetry.io/docs/specs/otlp, "OTLP/HTTP"):
//   - `POST /v1/traces` with `Content-Type: application/json` (the JSON mapping of ExportTraceServiceRequest:
//     trace and span ids as hex strings, enums as integers), optionally `Content-Encoding: gzip`; answers 200 with
//     an empty ExportTraceServiceResponse `{}`, as a collector does when it took every span;
//   - protobuf bodies (`application/x-protobuf`) answer 415, as a JSON-only receiver would: Lifeline sends JSON;
//   - a body that is not an ExportTraceServiceRequest answers 400 with a Status `{code, message}`;
//   - `refuseNext(n, status)` answers the next n exports with that status (503: the exporter retries later).
// Every export is recorded with its headers (the collector's token arrives as OTEL_EXPORTER_OTLP_HEADERS says),
// and the spans are flattened with their service name for the test's assertions.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

export interface OtlpCollectorFake {
  /** The base URL (OTEL_EXPORTER_OTLP_ENDPOINT); traces go to `${url}/v1/traces`. */
  url: string;
  spans(): ReceivedSpan[];
  /** The headers of every export that reached /v1/traces, refused ones included. */
  exports(): IncomingHttpHeaders[];
  /** How many exports were taken (answered 200). */
  accepted(): number;
  refuseNext(count: number, status: number): void;
  stop(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface ExportTraceServiceRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: KeyValue[];
        status?: { code?: number };
      }[];
    }[];
  }[];
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (!value) continue;
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}

const HEX_ID = /^[0-9a-f]+$/;

function flatten(request: ExportTraceServiceRequest): ReceivedSpan[] {
  if (!Array.isArray(request.resourceSpans)) throw new Error('resourceSpans must be an array');
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans) {
    const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        if (!HEX_ID.test(span.traceId) || span.traceId.length !== 32)
          throw new Error('traceId must be 32 hex');
        if (!HEX_ID.test(span.spanId) || span.spanId.length !== 16) throw new Error('spanId must be 16 hex');
        spans.push({
          service,
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind ?? 0,
          attributes: attributesOf(span.attributes),
          statusCode: span.status?.code ?? 0,
        });
      }
    }
  }
  return spans;
}

export async function startOtlpCollectorFake(): Promise<OtlpCollectorFake> {
  const spans: ReceivedSpan[] = [];
  const exports: IncomingHttpHeaders[] = [];
  let accepted = 0;
  let refusals: { left: number; status: number } = { left: 0, status: 503 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url !== '/v1/traces')
        return answer(404, { code: 5, message: 'not found' });
      exports.push(req.headers);
      if (refusals.left > 0) {
        refusals.left--;
        return answer(refusals.status, { code: 14, message: 'unavailable' });
      }
      if (!String(req.headers['content-type']).startsWith('application/json')) {
        return answer(415, { code: 3, message: 'this receiver takes application/json' });
      }
      try {
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        spans.push(...flatten(JSON.parse(body.toString('utf8')) as ExportTraceServiceRequest));
      } catch (error) {
        return answer(400, { code: 3, message: (error as Error).message });
      }
      accepted++;
      answer(200, {});
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...spans],
    exports: () => [...exports],
    accepted: () => accepted,
    refuseNext(count, status) {
      refusals = { left: count, status };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
