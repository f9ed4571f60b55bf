// The Bitly fake's HTTP server: token check, concurrency and per-minute limits, scripted failures, recording.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { bitlyError, forbidden, HttpAnswer, notFound } from './answers.ts';
import type { BitlyStats, FakeArrival, FakeFailure, FakeRequest, TransportLimits } from './types.ts';

/** What the transport needs of the fake: its token, records, limits, failures and the API behind it. */
export interface TransportHost {
  readonly token: string;
  readonly requests: FakeRequest[];
  readonly arrivals: FakeArrival[];
  readonly stats: BitlyStats;
  readonly limits: TransportLimits;
  nextFailure(method: string, path: string): FakeFailure | null;
  /** Answers a /v4 request; `path` is the part after /v4. */
  route(method: string, path: string, query: URLSearchParams, body: Record<string, unknown>): HttpAnswer;
  /** Answers a one-segment path: the short link itself. */
  redirect(res: ServerResponse, method: string, path: string): void;
}

export class BitlyTransport {
  /** '' until started. */
  baseUrl = '';
  private server: Server | null = null;
  private inFlight = 0;
  private minuteWindow = { startedAt: 0, count: 0 };
  private readonly sockets = new Set<Socket>();
  private readonly hung: ServerResponse[] = [];

  constructor(private readonly host: TransportHost) {}

  get started(): boolean {
    return this.server !== null;
  }

  async start(port: number): Promise<void> {
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const res of this.hung.splice(0)) res.destroy();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  private send(res: ServerResponse, method: string, path: string, answer: HttpAnswer, requestBody: unknown) {
    this.host.requests.push({ method, path, status: answer.status, body: requestBody, at: Date.now() });
    const payload = JSON.stringify(answer.body);
    res.writeHead(answer.status, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(payload),
      ...answer.headers,
    });
    res.end(payload);
  }

  /** Records a request that gets no answer (hung or dropped). */
  private unanswered(method: string, path: string, body: unknown): void {
    this.host.requests.push({ method, path, status: 0, body, at: Date.now() });
  }

  /** The answer when a limit refuses the request, or null when it may go on. */
  private refusedByLimits(): HttpAnswer | null {
    const { limits, stats } = this.host;
    if (limits.maxConcurrent > 0 && this.inFlight > limits.maxConcurrent) {
      stats.concurrencyRejections++;
      return new HttpAnswer(429, {
        message: 'RATE_LIMIT_EXCEEDED',
        resource: 'bitlinks',
        description: 'Too many concurrent connections.',
      });
    }
    if (limits.perMinuteLimit > 0) {
      const now = Date.now();
      if (now - this.minuteWindow.startedAt >= 60_000) this.minuteWindow = { startedAt: now, count: 0 };
      if (++this.minuteWindow.count > limits.perMinuteLimit) {
        stats.rateLimited++;
        if (limits.rateLimitStyle === '429') {
          return new HttpAnswer(429, {
            message: 'RATE_LIMIT_EXCEEDED',
            resource: 'bitlinks',
            description: 'You have exceeded your rate limit.',
          });
        }
        return new HttpAnswer(
          403,
          {
            message: 'RATE_LIMIT_EXCEEDED',
            resource: 'bitlinks',
            description: 'You have exceeded your rate limit.',
          },
          { 'X-Ratelimit-Reason': 'minute' },
        );
      }
    }
    return null;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.inFlight++;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const url = new URL(req.url ?? '/', 'http://fake');
      const method = req.method ?? 'GET';
      const path = url.pathname.replace(/^\/v4(?=\/)/, '');
      this.host.arrivals.push({ method, path, at: Date.now(), query: url.search });
      let body: Record<string, unknown> = {};
      const raw = Buffer.concat(chunks).toString('utf8');
      if (raw) {
        try {
          body = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          this.send(res, method, path, bitlyError(400, 'INVALID_BODY', 'The request body is not JSON.'), raw);
          return;
        }
      }
      if (/^\/[^/]+$/.test(url.pathname)) {
        this.host.redirect(res, method, url.pathname);
        return;
      }
      if (!url.pathname.startsWith('/v4/')) {
        this.send(res, method, path, notFound(), body);
        return;
      }
      if (req.headers.authorization !== `Bearer ${this.host.token}`) {
        this.send(res, method, path, forbidden(), body);
        return;
      }
      const refused = this.refusedByLimits();
      if (refused) {
        this.send(res, method, path, refused, body);
        return;
      }
      const failure = this.host.nextFailure(method, path);
      const delay = (failure?.delayMs ?? 0) + this.host.limits.latencyMs;
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      if (failure?.hang) {
        this.unanswered(method, path, body);
        this.hung.push(res);
        return;
      }
      if (failure?.drop) {
        this.unanswered(method, path, body);
        req.socket.destroy();
        return;
      }
      if (failure?.status) {
        const answer = new HttpAnswer(
          failure.status,
          failure.body ?? {
            message: failure.message ?? 'INTERNAL_ERROR',
            resource: 'bitlinks',
            description: 'Injected failure.',
          },
          failure.headers ?? {},
        );
        this.send(res, method, path, answer, body);
        return;
      }
      const answer = this.host.route(method, path, url.searchParams, body);
      if (failure?.lose) {
        this.unanswered(method, path, body);
        req.socket.destroy();
        return;
      }
      this.send(res, method, path, answer, body);
    } catch (error) {
      if (!res.headersSent) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({ message: 'INTERNAL_ERROR', resource: 'bitlinks', description: String(error) }),
        );
      }
    } finally {
      this.inFlight--;
    }
  }
}
