// Certificates with chosen names and dates (near expiry, expired, for another name) from a private CA made with
// openssl (`openssl ca` takes any start and end date; `x509 -days` cannot make an expired one), and a real TLS
// server on loopback that serves them by SNI.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext, createServer, type SecureContext, type Server } from 'node:tls';

export interface IssuedCertificate {
  cert: string;
  key: string;
}

export interface TestCa {
  /** The CA certificate (PEM), to trust. */
  caPem: string;
  /** A P-256 certificate for `names` (subjectAltName DNS entries), valid from `notBefore` to `notAfter`. */
  issue(names: string[], notBefore: Date, notAfter: Date): IssuedCertificate;
  close(): void;
}

const CA_CONFIG = `[ ca ]
default_ca = test_ca
[ test_ca ]
dir = .
database = index.txt
serial = serial
new_certs_dir = .
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
[ any ]
commonName = supplied
`;

const asn1Time = (d: Date) =>
  `${d
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d+Z$/, '')}Z`;

export function createTestCa(name = 'Lifeline Test CA'): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'lifeline-test-ca-'));
  const openssl = (args: string[]) =>
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  writeFileSync(join(dir, 'ca.cnf'), CA_CONFIG);
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  openssl(
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'].concat([
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-subj',
      `/O=Lifeline Tests/CN=${name}`,
      '-days',
      '30',
    ]),
  );
  let n = 0;
  return {
    caPem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    issue(names, notBefore, notAfter) {
      const id = `leaf${n++}`;
      openssl(
        ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'].concat([
          '-keyout',
          `${id}.key`,
          '-out',
          `${id}.csr`,
          '-subj',
          `/CN=${names[0]}`,
        ]),
      );
      writeFileSync(join(dir, `${id}.ext`), `subjectAltName=${names.map((x) => `DNS:${x}`).join(',')}\n`);
      openssl(
        ['ca', '-batch', '-config', 'ca.cnf', '-cert', 'ca.pem', '-keyfile', 'ca.key', '-notext'].concat([
          '-in',
          `${id}.csr`,
          '-out',
          `${id}.pem`,
          '-startdate',
          asn1Time(notBefore),
          '-enddate',
          asn1Time(notAfter),
          '-extfile',
          `${id}.ext`,
        ]),
      );
      return {
        cert: readFileSync(join(dir, `${id}.pem`), 'utf8'),
        key: readFileSync(join(dir, `${id}.key`), 'utf8'),
      };
    },
    close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TestTlsServer {
  port: number;
  /** Serves `certificate` to clients asking for `servername` (SNI) from now on. */
  serve(servername: string, certificate: IssuedCertificate): void;
  close(): Promise<void>;
}

/** A TLS server on 127.0.0.1 that completes handshakes with the certificate chosen by SNI, then hangs up. */
export async function startTestTlsServer(fallback: IssuedCertificate): Promise<TestTlsServer> {
  const contexts = new Map<string, SecureContext>();
  const server: Server = createServer(
    {
      ...fallback,
      SNICallback: (servername, callback) => callback(null, contexts.get(servername.toLowerCase())),
    },
    (socket) => socket.end(),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    serve(servername, certificate) {
      contexts.set(servername.toLowerCase(), createSecureContext(certificate));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
