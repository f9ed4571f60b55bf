// The worker's own small HTTP port (WORKER_HEALTH_PORT): /livez, /readyz and /metrics. The worker serves no
// traffic, so this is all an orchestrator and Prometheus see of it. /metrics joins the process's Node metrics
// (prom-client's defaults) and the Temporal SDK's worker and workflow metrics, which the SDK's Rust core exports
// on a loopback-only port of its own (installTemporalRuntime) and which are fetched from there at each scrape.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WorkerReadiness } from '../lib/health/worker_readiness.ts';
import type { Logger } from '../lib/shared/logger.ts';
import type { Registry } from '../lib/shared/metrics.ts';

/** Constant-time comparison of equal-length digests, so the token's length and contents never leak by timing. */
function tokenMatches(given: string, expected: string): boolean {
  const a = createHash('sha256').update(`metrics:${given}`).digest();
  const b = createHash('sha256').update(`metrics:${expected}`).digest();
  return timingSafeEqual(a, b);
}

/** How long a scrape waits for the SDK's exporter before answering with the Node metrics alone. */
const SDK_METRICS_TIMEOUT_MS = 2_000;

export interface WorkerHealthServer {
  port: number;
  close(): Promise<void>;
}

/** The Temporal SDK's Prometheus text from its loopback exporter (http://<address>/metrics). */
async function fetchSdkMetrics(address: string): Promise<string> {
  const response = await fetch(`http://${address}/metrics`, {
    signal: AbortSignal.timeout(SDK_METRICS_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return response.text();
}

/**
 * Starts the worker's probe and metrics server. `readiness` decides /readyz (lib/health/worker_readiness.ts);
 * `registry` holds the process metrics; `sdkMetricsAddress` is where the SDK's exporter listens (host:port).
 */
export async function startWorkerHealthServer(options: {
  host: string;
  port: number;
  readiness(): Promise<WorkerReadiness>;
  registry: Registry;
  sdkMetricsAddress?: string;
  /** METRICS_TOKEN: /metrics answers only to `Authorization: Bearer <token>`, as the web tier's does; unset: 404. */
  metricsToken: string | undefined;
  logger: Logger;
}): Promise<WorkerHealthServer> {
  const { logger } = options;
  let sdkFailureLogged = 0;
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      response.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    const json = (status: number, body: unknown) =>
      send(status, 'application/json; charset=utf-8', JSON.stringify(body));
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      json(405, { status: 'method not allowed' });
      return;
    }
    if (path === '/livez') {
      json(200, { status: 'ok' });
      return;
    }
    if (path === '/readyz') {
      options.readiness().then(
        (readiness) => json(readiness.status === 'ready' ? 200 : 503, readiness),
        (error: unknown) => {
          logger.error({ err: error }, 'worker readiness check failed');
          json(503, { status: 'unavailable' });
        },
      );
      return;
    }
    if (path === '/metrics') {
      if (options.metricsToken === undefined) {
        json(404, { status: 'not found', detail: 'set METRICS_TOKEN to serve /metrics' });
        return;
      }
      const given = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
      if (!tokenMatches(given, options.metricsToken)) {
        json(401, { status: 'unauthorized', detail: 'send "Authorization: Bearer <METRICS_TOKEN>"' });
        return;
      }
      const sdk = options.sdkMetricsAddress
        ? fetchSdkMetrics(options.sdkMetricsAddress).catch((error: unknown) => {
            // Logged at most once a minute: a scrape every 15 s must not flood the log.
            if (Date.now() - sdkFailureLogged > 60_000) {
              sdkFailureLogged = Date.now();
              logger.warn({ err: error }, 'Temporal SDK metrics unavailable; serving the Node metrics alone');
            }
            return '';
          })
        : Promise.resolve('');
      Promise.all([options.registry.metrics(), sdk]).then(
        ([own, fromSdk]) => send(200, options.registry.contentType, `${own}\n${fromSdk}`),
        (error: unknown) => {
          logger.error({ err: error }, 'worker metrics failed');
          json(500, { status: 'error' });
        },
      );
      return;
    }
    json(404, { status: 'not found', paths: ['/livez', '/readyz', '/metrics'] });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: NodeJS.ErrnoException) => {
    throw new Error(
      `The worker's health port ${options.host}:${options.port} cannot be opened (${error.code ?? error.message}): ` +
        'set WORKER_HEALTH_PORT to a free port (0: any).',
    );
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A free TCP port on loopback, for the SDK's exporter (it binds the address it is given). */
export function findFreeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
