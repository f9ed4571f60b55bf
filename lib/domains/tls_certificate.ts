// The certificate a host serves, read the way a reader's browser meets it: a TLS handshake with the host's name
// as SNI, on the address its name resolves to — under the outgoing-request rule (ADR 0058), checked on every
// address before the socket opens. The handshake does not refuse a bad certificate: an expired, untrusted or
// misnamed one is exactly what the watch must report, so it is read, judged, and the connection closed.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { checkServerIdentity, connect, type DetailedPeerCertificate } from 'node:tls';
import { TransientFailure } from '../shared/errors.ts';
import {
  getAddressProblem,
  type OutgoingLookup,
  OutgoingRequestRefused,
  type OutgoingRule,
} from '../shared/outgoing_request.ts';

const HANDSHAKE_TIMEOUT_MS = 10_000;

/** What the host served. */
export interface TlsCertificateRead {
  host: string;
  port: number;
  validFrom: Date;
  validTo: Date;
  /** The issuer's organisation and common name, as a person reads them. */
  issuer: string;
  /** The DNS names the certificate is for (subjectAltName; the subject's CN when it has none). */
  names: string[];
  /** The certificate is for `host` (RFC 6125, as Node checks it). */
  nameMatches: boolean;
  /** Its chain leads to a trusted root and it is within its dates; otherwise why not (OpenSSL's code). */
  trusted: boolean;
  trustError: string | null;
  fingerprint256: string;
}

export interface TlsReadOptions {
  host: string;
  port: number;
  rule: OutgoingRule;
  /** A dns.lookup-shaped resolver (tests answer made-up names). */
  lookup?: OutgoingLookup;
  /** Roots to trust instead of Node's (tests: the CA they made). */
  ca?: string[];
  timeoutMs?: number;
}

function resolveAllowed(options: TlsReadOptions): Promise<LookupAddress> {
  const lookup: OutgoingLookup =
    options.lookup ?? ((hostname, o, callback) => dnsLookup(hostname, o, callback));
  return new Promise((resolve, reject) => {
    lookup(options.host, { all: true }, (error, addresses) => {
      if (error) {
        reject(
          new TransientFailure(
            `${options.host} did not resolve (${error.code ?? error.message})`,
            'TlsUnavailable',
          ),
        );
        return;
      }
      const kept = addresses.find((a) => getAddressProblem(a.address, options.host, options.rule) === null);
      if (kept) return resolve(kept);
      const reason = addresses[0]
        ? getAddressProblem(addresses[0].address, options.host, options.rule)
        : 'no address';
      reject(new OutgoingRequestRefused(`${options.host} was not connected to: ${reason}`));
    });
  });
}

const part = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value.join(', ') : value;

function namesOf(cert: DetailedPeerCertificate): string[] {
  const alt = (cert.subjectaltname ?? '')
    .split(/,\s*/)
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase());
  if (alt.length > 0) return alt;
  const cn = part(cert.subject?.CN);
  return cn ? [cn.toLowerCase()] : [];
}

/** Connects, reads the served certificate and judges it; a host that cannot be reached is a TransientFailure. */
export async function readServedCertificate(options: TlsReadOptions): Promise<TlsCertificateRead> {
  const address = await resolveAllowed(options);
  const timeoutMs = options.timeoutMs ?? HANDSHAKE_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: address.address,
      port: options.port,
      servername: options.host,
      rejectUnauthorized: false,
      ...(options.ca ? { ca: options.ca } : {}),
    });
    const fail = (reason: string) => {
      socket.destroy();
      reject(new TransientFailure(`${options.host}:${options.port}: ${reason}`, 'TlsUnavailable'));
    };
    socket.setTimeout(timeoutMs, () => fail(`no TLS handshake within ${timeoutMs} ms`));
    socket.once('error', (error: NodeJS.ErrnoException) => fail(error.code ?? error.message));
    socket.once('secureConnect', () => {
      const cert = socket.getPeerCertificate(false) as DetailedPeerCertificate;
      if (!cert?.valid_to) return fail('no certificate was served');
      // Node puts a name mismatch in authorizationError only when the chain is fine; both are told apart here.
      const nameError = checkServerIdentity(options.host, cert);
      const chainError =
        socket.authorized || socket.authorizationError?.toString() === 'ERR_TLS_CERT_ALTNAME_INVALID'
          ? null
          : String(socket.authorizationError ?? 'UNTRUSTED');
      const issuer = [part(cert.issuer?.O), part(cert.issuer?.CN)].filter(Boolean).join(' — ');
      socket.end();
      resolve({
        host: options.host,
        port: options.port,
        validFrom: new Date(cert.valid_from),
        validTo: new Date(cert.valid_to),
        issuer: issuer.slice(0, 200) || 'unknown',
        names: namesOf(cert).slice(0, 50),
        nameMatches: nameError === undefined,
        trusted: chainError === null,
        trustError: chainError,
        fingerprint256: cert.fingerprint256,
      });
    });
  });
}
