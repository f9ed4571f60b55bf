// An Upstash-Redis-REST-compatible HTTP server in front of a real Redis, for tests and benchmarks. It speaks
// what @upstash/redis sends: POST / with a JSON command array → {result} or {error}; POST /pipeline and
// POST /multi-exec with an array of commands → an array of {result}/{error}; `Authorization: Bearer <token>`
// (401 otherwise); with `Upstash-Encoding: base64`, string results (bar the simple "OK") are base64 encoded.
// Modes for outage tests: `hang` (accept and never answer) and `fail` (answer 500); setDelayMs slows answers.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createClient } from '@redis/client';

export type UpstashFakeMode = 'ok' | 'hang' | 'fail';

export interface UpstashFake {
  url: string;
  token: string;
  /** Commands received (a pipeline counts each of its commands). */
  readonly commands: string[][];
  setMode(mode: UpstashFakeMode): void;
  /** Answers every request this much later (a slow network or a busy server). */
  setDelayMs(ms: number): void;
  stop(): Promise<void>;
}

type Reply = { result: unknown } | { error: string };

function encode(value: unknown, base64: boolean): unknown {
  if (!base64) return value;
  if (typeof value === 'string')
    return value === 'OK' ? value : Buffer.from(value, 'utf8').toString('base64');
  if (Array.isArray(value)) return value.map((v) => encode(v, base64));
  return value;
}

function isCommand(value: unknown): value is (string | number)[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
  );
}

/** Starts the fake on a free port, forwarding to `redisUrl`. */
export async function startUpstashFake(options: { redisUrl: string; token: string }): Promise<UpstashFake> {
  const redis = createClient({ url: options.redisUrl, RESP: 2 });
  await redis.connect();
  const commands: string[][] = [];
  let mode: UpstashFakeMode = 'ok';
  let delayMs = 0;
  const sockets = new Set<Socket>();

  async function run(command: (string | number | boolean)[], base64: boolean): Promise<Reply> {
    const args = command.map(String);
    commands.push(args);
    try {
      return { result: encode(await redis.sendCommand(args), base64) };
    } catch (error) {
      return { error: (error as Error).message };
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (mode === 'hang') return;
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    if (mode === 'fail') return send(500, { error: 'ERR fake outage' });
    if (req.headers.authorization !== `Bearer ${options.token}`) return send(401, { error: 'Unauthorized' });
    if (req.method !== 'POST') return send(405, { error: 'ERR only POST is supported' });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(400, { error: 'ERR failed to parse command' });
    }
    const base64 = String(req.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64';
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/' || path === '') {
      if (!isCommand(body)) return send(400, { error: 'ERR failed to parse command' });
      const reply = await run(body, base64);
      return send('error' in reply ? 400 : 200, reply);
    }
    if (path === '/pipeline' || path === '/multi-exec') {
      if (!Array.isArray(body) || !body.every(isCommand))
        return send(400, { error: 'ERR failed to parse pipeline request' });
      if (path === '/pipeline') {
        const replies: Reply[] = [];
        for (const command of body) replies.push(await run(command, base64));
        return send(200, replies);
      }
      // A transaction: queued on one connection between MULTI and EXEC, answered per command.
      const multi = redis.multi();
      for (const command of body) {
        commands.push(command.map(String));
        multi.addCommand(command.map(String));
      }
      try {
        const results = (await multi.exec()) as unknown[];
        return send(
          200,
          results.map((r) => (r instanceof Error ? { error: r.message } : { result: encode(r, base64) })),
        );
      } catch (error) {
        return send(400, { error: (error as Error).message });
      }
    }
    return send(404, { error: 'ERR unknown endpoint' });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: String(error) }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token: options.token,
    commands,
    setMode(next) {
      mode = next;
    },
    setDelayMs(ms) {
      delayMs = ms;
    },
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await redis.close();
    },
  };
}
