import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { type Front, setActiveFront } from '../../lib/failover/active_front.ts';
import { getFreePort } from '../../scripts/dev_server.ts';

export type SimulatedFront = Front;

/**
 * The short domain as readers reach it, for failover tests: an HTTP server on `port` that answers as
 * whichever front "DNS" points at. `bitly`: Bitly's redirector (301 to the bitlink's long URL for a custom
 * back-half on the fake, 404 otherwise, no /healthz of ours). `inhouse`: our web tier (the app itself).
 * `POST /_dns {front}` with the bearer token is the DNS automation a DNS adapter calls; `POST /_dns {action:
 * "setTtl", ttlSeconds}` sets the records' TTL and answers `{previousTtlSeconds}` (501 with `supportsTtl: false`).
 * Every call is recorded in `log` with its time, so a test can check the order: TTL lowered, old TTL waited
 * out, front switched, TTL raised.
 */
export async function startDnsSwitch(options: {
  port: number;
  app: () => { fetch(request: Request): Response | Promise<Response> };
  bitly: BitlyFake;
  token: string;
  front: SimulatedFront;
  /** The records' TTL at start (seconds, default 2, below the lowered TTL: no wait): what a planned switch waits out. */
  ttlSeconds?: number;
  /** false: TTL changes are answered 501 (automation that cannot set TTLs). */
  supportsTtl?: boolean;
}): Promise<{
  front: SimulatedFront;
  ttlSeconds: number;
  calls: SimulatedFront[];
  log: { at: number; call: string }[];
  url: string;
  close(): Promise<void>;
}> {
  const state = {
    front: options.front,
    ttlSeconds: options.ttlSeconds ?? 2,
    calls: [] as SimulatedFront[],
    log: [] as { at: number; call: string }[],
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${options.port}`);
    if (url.pathname === '/_dns' && req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      if (req.headers.authorization !== `Bearer ${options.token}`) {
        res.writeHead(401).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        front?: SimulatedFront;
        action?: string;
        ttlSeconds?: number;
      };
      if (body.action === 'setTtl') {
        if (options.supportsTtl === false) {
          res.writeHead(501).end();
          return;
        }
        const previousTtlSeconds = state.ttlSeconds;
        state.ttlSeconds = body.ttlSeconds!;
        state.log.push({ at: Date.now(), call: `ttl ${body.ttlSeconds}` });
        res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ previousTtlSeconds }));
        return;
      }
      state.front = body.front!;
      state.calls.push(body.front!);
      state.log.push({ at: Date.now(), call: `front ${body.front}` });
      res.writeHead(204).end();
      return;
    }
    if (state.front === 'bitly') {
      const link = options.bitly.linkByKeyword(url.pathname.slice(1));
      if (!link || link.archived) res.writeHead(404).end('Not Found');
      else res.writeHead(301, { Location: link.longUrl }).end();
      return;
    }
    const answer = await options
      .app()
      .fetch(
        new Request(url, { method: req.method ?? 'GET', headers: { host: `127.0.0.1:${options.port}` } }),
      );
    const headers: Record<string, string> = {};
    answer.headers.forEach((value, key) => {
      headers[key] = value;
    });
    res.writeHead(answer.status, headers).end(Buffer.from(await answer.arrayBuffer()));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error) => res.writeHead(500).end(String(error)));
  });
  await new Promise<void>((resolve) => server.listen(options.port, '127.0.0.1', resolve));
  return {
    get front() {
      return state.front;
    },
    get ttlSeconds() {
      return state.ttlSeconds;
    },
    calls: state.calls,
    log: state.log,
    url: `http://127.0.0.1:${options.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A harness whose short domain Bitly answers (the active front), with the Bitly fake, a DNS switch that has no
 * adapter (the operator flips it and says so) and a running worker: the setting of operator-driven failovers.
 */
export async function startOperatorFailoverSetup(): Promise<{
  fake: BitlyFake;
  h: Harness;
  dns: Awaited<ReturnType<typeof startDnsSwitch>>;
  close(): Promise<void>;
}> {
  const fake = await startBitlyFake({ domains: ['sho.rt'] });
  const port = await getFreePort();
  const h = await createHarness({ env: { ...fake.env(), SHORT_BASE_URL: `http://127.0.0.1:${port}` } });
  const dns = await startDnsSwitch({ port, app: () => h.app, bitly: fake, token: 'unused', front: 'bitly' });
  await setActiveFront(h.db.sql, { active: 'bitly', since: new Date().toISOString() });
  await h.startWorker();
  return {
    fake,
    h,
    dns,
    async close() {
      await h.close();
      await dns.close();
      await fake.stop();
    },
  };
}
