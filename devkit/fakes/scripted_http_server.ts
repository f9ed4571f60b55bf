// The transport shared by the CDN and GA4 fakes: a real HTTP server on 127.0.0.1 that records every request
// (raw body included, so signatures can be checked over the exact bytes), checks authentication first, then
// plays scripted failures (status with the vendor's own body, delay, dropped connection, hang), then lets the
// vendor model answer. Nothing here knows a vendor; each fake passes its own checks and answers.
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** When it arrived (epoch ms). */
  at: number;
  /** The status answered; 0 when the request was dropped or left hanging. */
  status: number;
}

export interface FakeAnswer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

/** One scripted behaviour for the next matching request(s). */
export interface ScriptedFailure {
  /** Only requests whose path starts with this (default: any). */
  path?: string;
  /** How many requests it applies to (default 1). */
  times?: number;
  /** Answer this instead of the model (the vendor fake fills in its own error body). */
  answer?: FakeAnswer;
  /** Wait first, then answer normally (or with `answer`). */
  delayMs?: number;
  /** Destroy the connection without answering. */
  drop?: boolean;
  /** Never answer (the client times out); closed at stop(). */
  hang?: boolean;
  /** Let the model handle the request (its effects happen) but lose the answer: the connection drops. */
  lose?: boolean;
}

export interface ScriptedHttpServerOptions {
  /** Authentication and transport checks, before any scripted failure: an answer here ends the request. */
  authorize?: (request: FakeRequest) => FakeAnswer | null | Promise<FakeAnswer | null>;
  /** The vendor model: validates, records and answers. */
  answer: (request: FakeRequest) => FakeAnswer | Promise<FakeAnswer>;
}

export class ScriptedHttpServer {
  /** Every request, in arrival order, with the status it got. */
  readonly requests: FakeRequest[] = [];
  /** Added to every answer (a slow vendor). */
  latencyMs = 0;
  private server: Server | null = null;
  private baseUrl = '';
  private failures: ScriptedFailure[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly hung: ServerResponse[] = [];

  constructor(private readonly options: ScriptedHttpServerOptions) {}

  get url(): string {
    if (!this.server) throw new Error('fake server is not started');
    return this.baseUrl;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.hung.splice(0)) res.destroy();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  /** Scripts the next matching request(s). */
  failNext(failure: ScriptedFailure): void {
    this.failures.push({ times: 1, ...failure });
  }

  /** Forgets requests and scripted failures. */
  reset(): void {
    this.requests.length = 0;
    this.failures = [];
    this.latencyMs = 0;
  }

  private takeFailure(path: string): ScriptedFailure | null {
    const index = this.failures.findIndex((f) => f.path === undefined || path.startsWith(f.path));
    if (index < 0) return null;
    const failure = this.failures[index]!;
    failure.times = (failure.times ?? 1) - 1;
    if (failure.times <= 0) this.failures.splice(index, 1);
    return failure;
  }

  private send(res: ServerResponse, request: FakeRequest, answer: FakeAnswer): void {
    request.status = answer.status;
    const body = answer.body ?? '';
    res.writeHead(answer.status, { 'Content-Length': Buffer.byteLength(body), ...answer.headers });
    res.end(body);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const request: FakeRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      rawBody: Buffer.concat(chunks).toString('utf8'),
      at: Date.now(),
      status: 0,
    };
    this.requests.push(request);
    try {
      const refused = await this.options.authorize?.(request);
      if (refused) return this.send(res, request, refused);
      const failure = this.takeFailure(request.path);
      const delay = (failure?.delayMs ?? 0) + this.latencyMs;
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      if (failure?.hang) {
        this.hung.push(res);
        return;
      }
      if (failure?.drop) {
        req.socket.destroy();
        return;
      }
      const answer = failure?.answer ?? (await this.options.answer(request));
      if (failure?.lose) {
        req.socket.destroy();
        return;
      }
      this.send(res, request, answer);
    } catch (error) {
      if (!res.headersSent) this.send(res, request, { status: 500, body: `fake failed: ${String(error)}` });
    }
  }
}

/**
 * A vendor fake on one ScriptedHttpServer: the request log, start, stop and reset every such fake shares. A fake
 * implements `answer` (its vendor model), may implement `authorize`, and clears its own records in `clearRecords`.
 */
export abstract class ScriptedFake {
  readonly server = new ScriptedHttpServer({
    authorize: (r) => this.authorize(r),
    answer: (r) => this.answer(r),
  });

  get requests(): FakeRequest[] {
    return this.server.requests;
  }

  async start(): Promise<this> {
    await this.server.start();
    return this;
  }

  stop(): Promise<void> {
    return this.server.stop();
  }

  reset(): void {
    this.server.reset();
    this.clearRecords();
  }

  /** Authentication and transport checks before the model (none by default). */
  protected authorize(_request: FakeRequest): FakeAnswer | null | Promise<FakeAnswer | null> {
    return null;
  }

  protected abstract answer(request: FakeRequest): FakeAnswer | Promise<FakeAnswer>;

  protected abstract clearRecords(): void;
}
