// Web sites on loopback for the destination checks' tests and benchmark: one HTTP server (and optionally an
// https one with a self-signed certificate) that answers for many made-up host names, each with its own
// behaviour — a page, a 404, a 410, a redirect chain, a soft-404 site, a parking page, a hang. The server counts
// requests in flight per host and when each started, so politeness (one at a time, the rate) can be checked.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OutgoingLookup } from '../../lib/shared/outgoing_request.ts';

/** What a host does with a request for `path`. */
export type SiteBehaviour =
  /** A page at each of `paths` (every path when absent); anything else is a plain 404. */
  | {
      kind: 'page';
      paths?: string[];
      /** Or: a page at every path matching this. */
      pattern?: RegExp;
      title?: string;
      body?: string;
      refuseHead?: boolean;
      status?: number;
    }
  | { kind: 'status'; status: number }
  /** `/hop0` → `/hop1` → … → `/hop{hops}` (200, or a redirect to `to`); any other path is a 404. */
  | { kind: 'redirects'; hops: number; status?: number; to?: string }
  | { kind: 'soft-404'; realPaths: string[] }
  | { kind: 'redirect-unknown-home'; realPaths: string[] }
  | { kind: 'hang' }
  | { kind: 'parking' };

export interface SiteRequest {
  host: string;
  method: string;
  path: string;
  userAgent: string;
  startedAtMs: number;
}

export interface DestinationSites {
  port: number;
  /** The https server's port (self-signed certificate), when started with `tls`. */
  tlsPort: number | undefined;
  /** `http://{host}:{port}{path}` */
  url(host: string, path?: string): string;
  set(host: string, behaviour: SiteBehaviour): void;
  requests: SiteRequest[];
  /** The most requests one host had in flight at once, per host. */
  maxInFlight: Map<string, number>;
  /** Requests that arrived while another to the same host was in flight. */
  overlaps: number;
  /** Requests that arrived sooner than `minGapMs` (less a millisecond) after the host's previous answer ended. */
  gapViolations: number;
  /** A resolver answering every name with 127.0.0.1 except those given (ENOTFOUND). */
  lookup(unknown?: readonly string[]): OutgoingLookup;
  close(): Promise<void>;
}

const notFoundPage = (path: string) =>
  `<html><head><title>Page not found – Example News</title></head><body><h1>Sorry, we could not find ${path}</h1>
  <p>The page you asked for is not here. Try our search or go back to the home page of Example News.</p></body></html>`;

const page = (title: string, body = '') =>
  `<html><head><title>${title}</title></head><body><article><h1>${title}</h1><p>${body || `A story about ${title}, with its own words, quotes and pictures.`}</p></article></body></html>`;

/** A self-signed certificate for `name` (openssl), as PEM strings. */
export function makeSelfSignedCertificate(name: string): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lifeline-dest-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        `/CN=${name}`,
        '-addext',
        `subjectAltName=DNS:${name}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return {
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startDestinationSites(
  options: {
    tls?: boolean;
    defaultBehaviour?: SiteBehaviour;
    /** The pause a polite client leaves between one answer and its next request to the same host (1/rate). */
    minGapMs?: number;
    /** Keep no request log (benchmarks: hundreds of thousands of requests). */
    noLog?: boolean;
  } = {},
): Promise<DestinationSites> {
  const behaviours = new Map<string, SiteBehaviour>();
  const inFlight = new Map<string, number>();
  const maxInFlight = new Map<string, number>();
  const requests: SiteRequest[] = [];
  let overlaps = 0;
  let gapViolations = 0;
  const lastEnd = new Map<string, number>();
  const hanging = new Set<http.ServerResponse>();

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const path = req.url ?? '/';
    const arrivedMs = performance.now();
    if (!options.noLog)
      requests.push({
        host,
        method: req.method ?? '',
        path,
        userAgent: String(req.headers['user-agent'] ?? ''),
        startedAtMs: arrivedMs,
      });
    const previousEnd = lastEnd.get(host);
    if (options.minGapMs && previousEnd !== undefined && arrivedMs - previousEnd < options.minGapMs - 1)
      gapViolations++;
    const now = (inFlight.get(host) ?? 0) + 1;
    if (now > 1) overlaps++;
    inFlight.set(host, now);
    maxInFlight.set(host, Math.max(maxInFlight.get(host) ?? 0, now));
    let ended = false;
    const done = () => {
      if (ended) return;
      ended = true;
      inFlight.set(host, (inFlight.get(host) ?? 1) - 1);
      lastEnd.set(host, performance.now());
    };
    // An answer counts as ended when it is handed over (before the client can have it), so a request that
    // arrives within the client's pause after it is a real violation, not a late event of this process.
    res.on('close', done);
    const send = (status: number, body = '', headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
      done();
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const b = behaviours.get(host) ?? options.defaultBehaviour ?? { kind: 'status', status: 404 };
    switch (b.kind) {
      case 'page':
        if ((b.paths && !b.paths.includes(path)) || (b.pattern && !b.pattern.test(path)))
          return send(404, notFoundPage(path));
        if (b.refuseHead && req.method === 'HEAD') return send(405);
        return send(b.status ?? 200, page(b.title ?? `Story at ${path}`, b.body));
      case 'status':
        return send(b.status, b.status === 404 ? notFoundPage(path) : '');
      case 'redirects': {
        const hopAt = /^\/hop(\d+)$/.exec(path);
        if (!hopAt) return send(404, notFoundPage(path));
        const n = Number(hopAt[1]);
        if (n < b.hops) return send(b.status ?? 301, '', { location: `/hop${n + 1}` });
        if (b.to) return send(b.status ?? 301, '', { location: b.to });
        return send(200, page('Where it went'));
      }
      case 'soft-404':
        return send(200, b.realPaths.includes(path) ? page(`Story ${path}`) : notFoundPage(path));
      case 'redirect-unknown-home':
        if (path === '/') return send(200, page('Example News home', 'Latest stories, today and every day.'));
        return b.realPaths.includes(path)
          ? send(200, page(`Story ${path}`))
          : send(302, '', { location: '/' });
      case 'hang':
        hanging.add(res);
        return;
      case 'parking':
        return send(
          200,
          '<html><head><title>example.com</title></head><body>This domain is for sale! Buy this domain today.</body></html>',
        );
    }
  };

  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let tlsServer: https.Server | undefined;
  if (options.tls) {
    tlsServer = https.createServer(makeSelfSignedCertificate('self-signed.test'), handler);
    await new Promise<void>((resolve) => tlsServer!.listen(0, '127.0.0.1', resolve));
  }
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    tlsPort: tlsServer ? (tlsServer.address() as AddressInfo).port : undefined,
    url: (host, path = '/') => `http://${host}:${port}${path}`,
    set: (host, behaviour) => behaviours.set(host.toLowerCase(), behaviour),
    requests,
    maxInFlight,
    get overlaps() {
      return overlaps;
    },
    get gapViolations() {
      return gapViolations;
    },
    lookup(unknown = []) {
      return (hostname, _options, callback) => {
        if (unknown.includes(hostname)) {
          const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
          return callback(error, []);
        }
        callback(null, [{ address: '127.0.0.1', family: 4 }]);
      };
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      tlsServer?.closeAllConnections();
      await Promise.all([
        new Promise((resolve) => server.close(resolve)),
        tlsServer ? new Promise((resolve) => tlsServer!.close(resolve)) : undefined,
      ]);
    },
  };
}
