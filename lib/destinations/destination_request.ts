// One request of a destination check: node:http(s) rather than fetch, because the check needs what fetch hides —
// the TLS session (protocol, issuer, expiry), the exact failure (DNS, TLS, timeout) and a body cut off at a few
// KiB. The outgoing-request rule (ADR 0058, with plain http allowed: ADR 0071) holds at the socket: the URL is
// checked first (scheme, user-info, IP literals) and every address a name resolves to goes through the rule's
// lookup, so a redirect to a private address is refused as the first hop would be.
import http from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import {
  getOutgoingUrlProblem,
  OutgoingRequestRefused,
  type OutgoingRule,
} from '../shared/outgoing_request.ts';
import type { TlsState } from '../stores/destination_state_store.ts';

/** What one request answered. */
export interface HopAnswer {
  status: number;
  /** The Location header of a redirect, as sent. */
  location: string | null;
  /** At most `maxBytes` of the body (GET only), decoded as UTF-8; null for HEAD. */
  body: string | null;
  /** The TLS session of an https request; null for http. */
  tls: TlsState | null;
}

export type HopFailureKind = 'dns' | 'tls' | 'timeout' | 'connection' | 'refused' | 'protocol';

/** A request that got no answer: why, as a kind and a short message (never a body). */
export class HopFailure extends Error {
  constructor(
    readonly kind: HopFailureKind,
    message: string,
    /** The TLS error code when the handshake failed (e.g. DEPTH_ZERO_SELF_SIGNED_CERT). */
    readonly tlsError: string | null = null,
  ) {
    super(message);
    this.name = 'HopFailure';
  }
}

export interface HopOptions {
  method: 'HEAD' | 'GET';
  timeoutMs: number;
  maxBytes: number;
  userAgent: string;
  rule: OutgoingRule;
  /** The rule's lookup (createRuleLookup): only allowed addresses come out of it. */
  lookup: NonNullable<http.RequestOptions['lookup']>;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ENODATA', 'ESERVFAIL', 'EAI_FAIL', 'EAI_NONAME']);
const TLS_CODE = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO|HOSTNAME|ERR_OSSL|SIGNATURE|ALTNAME/;

function classify(error: unknown): HopFailure {
  if (error instanceof HopFailure) return error;
  if (error instanceof OutgoingRequestRefused) return new HopFailure('refused', error.message);
  const code = String((error as NodeJS.ErrnoException).code ?? '');
  const message = (error instanceof Error ? error.message : String(error)).slice(0, 200);
  if (DNS_CODES.has(code)) return new HopFailure('dns', `${code}: the name does not resolve`);
  if (TLS_CODE.test(code)) return new HopFailure('tls', `${code}: ${message}`, code);
  if (code.startsWith('HPE_')) return new HopFailure('protocol', `${code}: not a valid HTTP answer`);
  return new HopFailure('connection', code ? `${code}: ${message}` : message);
}

function readTls(socket: unknown): TlsState | null {
  const tls = socket as Partial<TLSSocket> | null;
  if (!tls || typeof tls.getPeerCertificate !== 'function') return null;
  const cert = tls.getPeerCertificate(false);
  const issuer = cert?.issuer ? (cert.issuer.O ?? cert.issuer.CN ?? null) : null;
  return {
    protocol: tls.getProtocol?.() ?? null,
    issuer: Array.isArray(issuer) ? issuer.join(', ') : issuer,
    validTo: cert?.valid_to ? new Date(cert.valid_to).toISOString() : null,
    error: null,
  };
}

/** One request to `url`; rejects with HopFailure when there is no HTTP answer. Never follows a redirect. */
export function requestHop(url: URL, options: HopOptions): Promise<HopAnswer> {
  const problem = getOutgoingUrlProblem(url, options.rule);
  if (problem) return Promise.reject(new HopFailure('refused', problem));
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<HopAnswer>((resolve, reject) => {
    let settled = false;
    const finish = (error: unknown, answer?: HopAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      if (answer) resolve(answer);
      else reject(classify(error));
    };
    const request = client.request(
      url,
      {
        method: options.method,
        agent: false,
        lookup: options.lookup,
        headers: {
          'user-agent': options.userAgent,
          accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8',
          'accept-encoding': 'identity',
        },
      },
      (response) => {
        const base = {
          status: response.statusCode ?? 0,
          location: typeof response.headers.location === 'string' ? response.headers.location : null,
          tls: readTls(response.socket),
        };
        if (options.method === 'HEAD' || (base.status >= 300 && base.status < 400)) {
          finish(null, { ...base, body: null });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => finish(null, { ...base, body: Buffer.concat(chunks).toString('utf8') });
        response.on('data', (chunk: Buffer) => {
          const room = options.maxBytes - size;
          chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
          size += Math.min(chunk.length, room);
          // Enough read: the rest of a large page is never downloaded.
          if (size >= options.maxBytes) done();
        });
        response.on('end', done);
        response.on('error', (error) => (chunks.length > 0 ? done() : finish(error)));
      },
    );
    const timer = setTimeout(
      () => finish(new HopFailure('timeout', `no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    request.on('error', (error) => finish(error));
    request.end();
  });
}
