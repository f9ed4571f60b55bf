import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { isPossibleCode } from '../lib/codes/code_rules.ts';
import type {
  AnswerSink,
  RedirectAnswer,
  RedirectAnswerer,
  RedirectRequest,
} from '../lib/redirect/answer_redirect.ts';
import type { HostRouting } from '../lib/redirect/host_routing.ts';
import { AppError } from '../lib/shared/errors.ts';
import type { Logger } from '../lib/shared/logger.ts';
import type { BucketedHistogram, Metrics } from '../lib/shared/metrics.ts';
import { PROBLEM_CONTENT_TYPE, toProblem } from '../lib/shared/problem.ts';

type FetchHandler = (request: Request) => Response | Promise<Response>;

export interface RunningServer {
  server: Server;
  port: number;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes idle sockets. */
  close(graceMs?: number): Promise<void>;
}

/**
 * What the Node fast path needs: the deployment's redirect answerer, its host routing, a logger for surprises,
 * and where answer durations are counted (lifeline_redirect_duration_seconds).
 */
export interface FastPathDeps {
  redirects: RedirectAnswerer;
  hostRouting: HostRouting;
  logger: Pick<Logger, 'error'>;
  metrics?: Pick<Metrics, 'redirectDuration'>;
}

/**
 * The single path segment of a short-host request the fast path may answer, or null to leave it to Hono:
 * `/<code>` or `/<code>+` (the preview) where the code passes isPossibleCode. Reserved words (`/ui`,
 * `/healthz`, `/metrics`, `/api`…), percent-encoded or multi-segment paths and absolute-form URLs all
 * return null, so Hono answers them exactly as before.
 */
export function fastPathCode(url: string): { code: string; query: string } | null {
  const pathEnd = fastPathEnd(url);
  if (pathEnd < 0) return null;
  return { code: url.slice(1, pathEnd), query: pathEnd === url.length ? '' : url.slice(pathEnd + 1) };
}

/** fastPathCode without the object: where the code's segment ends (the `?` or the end), or -1 for Hono. */
function fastPathEnd(url: string): number {
  if (url.charCodeAt(0) !== 47 /* / */) return -1;
  const queryAt = url.indexOf('?');
  const pathEnd = queryAt < 0 ? url.length : queryAt;
  const slash = url.indexOf('/', 1);
  if (slash !== -1 && slash < pathEnd) return -1;
  const plus = url.charCodeAt(pathEnd - 1) === 43; /* + */
  if (!isPossibleCode(url.slice(1, plus ? pathEnd - 1 : pathEnd))) return -1;
  return pathEnd;
}

function byLowerCase(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Writes an answer with the same node:http calls the Hono node adapter makes for the route's Response (headers
 * as given, in order; a body's Content-Length computed by node; no body: end() right after writeHead), so the
 * bytes are identical (tests/server/node_server.test.ts compares raw responses) and which path answered
 * is invisible.
 */
function writeAnswer(outgoing: ServerResponse, answer: RedirectAnswer, method: string): void {
  if (method === 'HEAD') {
    // Hono answers HEAD with `new Response(null, getResponse)`: a Headers object, so lower-case names, sorted.
    const sorted: string[] = [];
    for (const name of Object.keys(answer.headers).sort(byLowerCase)) {
      sorted.push(name.toLowerCase(), answer.headers[name] as string);
    }
    outgoing.writeHead(answer.status, sorted);
    outgoing.end();
    return;
  }
  if (answer.body === null) {
    outgoing.writeHead(answer.status, (answer.headerList as string[] | undefined) ?? answer.headers);
    outgoing.end();
    return;
  }
  outgoing.statusCode = answer.status;
  for (const name in answer.headers) outgoing.setHeader(name, answer.headers[name] as string);
  outgoing.end(answer.body);
}

/** An unexpected failure answered like the Hono app's onError: problem+json (a 500 reveals nothing). */
function writeProblem(outgoing: ServerResponse, error: unknown, path: string, method: string): void {
  const { body, headers } = toProblem(error, path);
  writeAnswer(
    outgoing,
    {
      status: body.status,
      headers: { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Cache-Control': 'no-store', ...headers },
      body: JSON.stringify(body),
    },
    method,
  );
}

/**
 * A node:http listener: GET/HEAD of a possible code on the short host goes straight to the redirect answerer and is
 * written to the socket (no Request/Response objects, no router); everything else goes to the Hono listener.
 * With split hosts, a request for the app host is always Hono's (which 404s codes there).
 */
export function createNodeListener(
  fetch: FetchHandler,
  fastPath?: FastPathDeps,
): (incoming: IncomingMessage, outgoing: ServerResponse) => void {
  const hono = getRequestListener(fetch);
  if (!fastPath) return hono;
  const routing = fastPath.hostRouting;
  const context: FastPathContext = {
    deps: fastPath,
    answerer: fastPath.redirects,
    histogram: fastPath.metrics?.redirectDuration,
  };
  return (incoming, outgoing) => {
    // The request's arrival (its headers parsed): the start of lifeline_redirect_duration_seconds.
    const started = performance.now();
    const method = incoming.method;
    const url = incoming.url;
    const pathEnd = (method === 'GET' || method === 'HEAD') && url !== undefined ? fastPathEnd(url) : -1;
    if (pathEnd < 0 || (routing.split && routing.isAppHost(rawHeader(incoming.rawHeaders, 'host') ?? ''))) {
      hono(incoming, outgoing);
      return;
    }
    // One object per request: the request as the answerer reads it, when it arrived, and where its answer goes.
    const request = new NodeRedirectRequest(
      method as 'GET' | 'HEAD',
      (url as string).slice(1, pathEnd),
      pathEnd === (url as string).length ? '' : (url as string).slice(pathEnd + 1),
      incoming.rawHeaders,
      started,
      outgoing,
      context,
    );
    answerFast(context, request);
  };
}

/** Headers of which node:http keeps only the first occurrence (others are joined with ", "; cookie with "; "). */
function firstWins(name: string): boolean {
  switch (name) {
    case 'user-agent':
    case 'referer':
    case 'host':
    case 'age':
    case 'authorization':
    case 'content-length':
    case 'content-type':
    case 'etag':
    case 'expires':
    case 'from':
    case 'if-modified-since':
    case 'if-unmodified-since':
    case 'last-modified':
    case 'location':
    case 'max-forwards':
    case 'proxy-authorization':
    case 'retry-after':
    case 'server':
      return true;
    default:
      return false;
  }
}

/**
 * True when a header field name is `name` (lower-case) in any case, without making a lower-cased copy: each
 * character is `name`'s, or the upper-case form of a letter of it.
 */
function isFieldName(field: string, name: string): boolean {
  if (field.length !== name.length) return false;
  for (let i = 0; i < name.length; i++) {
    const n = name.charCodeAt(i);
    const c = field.charCodeAt(i);
    if (c !== n && (n < 97 /* a */ || n > 122 /* z */ || c !== n - 32)) return false;
  }
  return true;
}

/**
 * A header from `incoming.rawHeaders` as `incoming.headers[name]` gives it (`name` lower-case; duplicates merged
 * as node:http merges them; set-cookie joined with ", "), without making node build `incoming.headers`: that
 * builds an object of every header for each request (measured with `perf`: ~6% of the server's CPU on the
 * LRU-hit path, in object-literal property definitions).
 */
export function rawHeader(rawHeaders: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (!isFieldName(rawHeaders[i]!, name)) continue;
    if (value === undefined) {
      value = rawHeaders[i + 1]!;
      if (firstWins(name)) return value;
    } else value = `${value}${name === 'cookie' ? '; ' : ', '}${rawHeaders[i + 1]!}`;
  }
  return value;
}

/** What every fast-path request shares: built once per listener. */
interface FastPathContext {
  deps: FastPathDeps;
  answerer: RedirectAnswerer;
  histogram: BucketedHistogram | undefined;
}

/**
 * A node:http request as the hot path reads it (headers only when asked for, see rawHeader), and the sink its
 * answer is delivered to (written to `outgoing`, or a failure answered as problem+json).
 */
class NodeRedirectRequest implements RedirectRequest, AnswerSink {
  constructor(
    readonly method: 'GET' | 'HEAD',
    readonly code: string,
    readonly query: string,
    private readonly rawHeaders: string[],
    /** performance.now() at arrival (see createNodeListener). */
    readonly started: number,
    private readonly outgoing: ServerResponse,
    private readonly context: FastPathContext,
  ) {}

  header(name: string): string | undefined {
    return rawHeader(this.rawHeaders, name);
  }

  /** Writes the answer; if writing throws (e.g. an invalid header value), never leaves the socket hanging. */
  deliver(answer: RedirectAnswer): void {
    try {
      writeAnswer(this.outgoing, answer, this.method);
    } catch (error) {
      this.context.deps.logger.error({ err: error, path: `/${this.code}` }, 'could not write the answer');
      this.outgoing.destroy();
    }
    this.context.histogram?.observeMs(performance.now() - this.started);
  }

  /** An unexpected failure while answering: logged (unless an AppError) and answered as problem+json. */
  fail(error: unknown): void {
    const { outgoing, context } = this;
    const path = `/${this.code}`;
    if (!(error instanceof AppError)) context.deps.logger.error({ err: error, path }, 'unhandled error');
    if (outgoing.headersSent) {
      outgoing.destroy();
    } else {
      try {
        writeProblem(outgoing, error, path, this.method);
      } catch (writeError) {
        context.deps.logger.error({ err: writeError, path }, 'could not write the answer');
        outgoing.destroy();
      }
    }
    // A 503 (Postgres and the caches could not answer) counts too: it is the latency a reader saw.
    context.histogram?.observeMs(performance.now() - this.started);
  }
}

/**
 * The fast path proper. An LRU hit is answered synchronously (answerPeeked: no promise between the parsed
 * request and the socket write); anything else is delivered by the lookup's one reaction (answerTo).
 */
function answerFast(context: FastPathContext, request: NodeRedirectRequest): void {
  let answer: RedirectAnswer | undefined;
  try {
    answer = context.answerer.answerPeeked(request);
  } catch (error) {
    request.fail(error);
    return;
  }
  if (answer !== undefined) request.deliver(answer);
  else context.answerer.answerTo(request, request);
}

/**
 * Serves a fetch handler on node:http. With `fastPath`, redirects skip the fetch handler (see
 * createNodeListener); the answers are the same bytes either way.
 */
export async function serveNode(
  fetch: FetchHandler,
  options: {
    port: number;
    host: string;
    fastPath?: FastPathDeps;
    /** SO_REUSEPORT: several processes listen on the same port, the kernel spreads connections (ADR 0023). */
    reusePort?: boolean;
  },
): Promise<RunningServer> {
  const server = createServer(createNodeListener(fetch, options.fastPath));
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host: options.host, reusePort: options.reusePort === true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
