// A loopback receiver of outgoing webhooks for tests: records every request (headers and the raw body, as a
// Standard Webhooks verifier needs them) and answers each path by a script: a list of statuses taken in turn
// (the last one repeats), optionally with a Retry-After, optionally after a delay (a slow receiver).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
  status: number;
}

export interface WebhookReceiver {
  base: string;
  received: ReceivedHook[];
  /** Requests to one path, in arrival order. */
  at(path: string): ReceivedHook[];
  /** Statuses `path` answers in turn (the last repeats); default 200. */
  script(
    path: string,
    statuses: number[],
    options?: { retryAfter?: string; body?: string; delayMs?: number },
  ): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const scripts = new Map<
    string,
    { statuses: number[]; retryAfter?: string; body?: string; delayMs?: number; served: number }
  >();
  const received: ReceivedHook[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      const script = scripts.get(path);
      const index = script ? Math.min(script.served++, script.statuses.length - 1) : 0;
      const status = script ? script.statuses[index]! : 200;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      received.push({ path, headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now(), status });
      if (status === 429 && script?.retryAfter) res.setHeader('Retry-After', script.retryAfter);
      res.statusCode = status;
      const answer = () => res.end(script?.body ?? `answered ${status}`);
      if (script?.delayMs) setTimeout(answer, script.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    received,
    at: (path) => received.filter((r) => r.path === path),
    script(path, statuses, options = {}) {
      scripts.set(path, { statuses, ...options, served: 0 });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
