// A TLS-terminating proxy that demands a client certificate, in front of a plain-text gRPC server (the Temporal
// dev server has no TLS options of its own): Debian's nginx with its `stream` module. Not stunnel: stunnel 5.68
// cannot negotiate ALPN, and the worker's Rust client refuses a TLS connection without `h2` agreed by ALPN
// (tonic: `H2NotNegotiated`), while nginx's `ssl_alpn h2` agrees it. Certificates are made with openssl.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getFreePort } from '../../scripts/dev_server.ts';

const NGINX = '/usr/sbin/nginx';
const STREAM_MODULE = '/usr/lib/nginx/modules/ngx_stream_module.so';

/** Why a TLS proxy cannot run here (for a test's skip reason), or undefined when it can. */
export function getTlsProxyUnavailableReason(): string | undefined {
  if (!existsSync(NGINX) || !existsSync(STREAM_MODULE))
    return `nginx with its stream module is not installed (${NGINX}, ${STREAM_MODULE}): apt-get install nginx-light libnginx-mod-stream (.ci/run does)`;
  const openssl = spawnOk('openssl', ['version']);
  return openssl ? undefined : 'openssl is not installed';
}

function spawnOk(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A private CA, a server certificate for `serverName` only, a client certificate, and one from another CA. */
export interface TestCertificates {
  dir: string;
  serverName: string;
  caPath: string;
  serverCertPath: string;
  serverKeyPath: string;
  clientCertPath: string;
  clientKeyPath: string;
  /** A client certificate signed by a CA the proxy does not trust. */
  strangerCertPath: string;
  strangerKeyPath: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

// P-256 keys in PKCS#8 (what `openssl req -newkey` writes): both rustls (worker) and OpenSSL (client) read them.
function issue(dir: string, name: string, subject: string, ca: string, extensions: string): void {
  openssl(
    dir,
    ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'].concat([
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      subject,
    ]),
  );
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(
    dir,
    ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`].concat([
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    ]),
  );
}

function createCa(dir: string, name: string, subject: string): void {
  openssl(
    dir,
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'].concat([
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-subj',
      subject,
    ]),
  );
}

/** Writes a fresh set of certificates into `dir` (a test's temp dir). */
export function createTestCertificates(dir: string, serverName = 'temporal.test'): TestCertificates {
  createCa(dir, 'ca', '/CN=Lifeline test CA');
  createCa(dir, 'stranger_ca', '/CN=Someone else');
  // The server certificate names only `serverName` (no IP): a client must be told the name to accept it.
  issue(
    dir,
    'server',
    `/CN=${serverName}`,
    'ca',
    `subjectAltName=DNS:${serverName}\nextendedKeyUsage=serverAuth\n`,
  );
  issue(dir, 'client', '/CN=lifeline-worker', 'ca', 'extendedKeyUsage=clientAuth\n');
  issue(dir, 'stranger', '/CN=lifeline-worker', 'stranger_ca', 'extendedKeyUsage=clientAuth\n');
  return {
    dir,
    serverName,
    caPath: join(dir, 'ca.pem'),
    serverCertPath: join(dir, 'server.pem'),
    serverKeyPath: join(dir, 'server.key'),
    clientCertPath: join(dir, 'client.pem'),
    clientKeyPath: join(dir, 'client.key'),
    strangerCertPath: join(dir, 'stranger.pem'),
    strangerKeyPath: join(dir, 'stranger.key'),
  };
}

export interface TlsProxy {
  port: number;
  /** host:port to give a client. */
  address: string;
  certificates: TestCertificates;
  /** nginx's error log so far: why it refused a handshake ("client sent no required SSL certificate"…). */
  readErrorLog(): string;
  close(): Promise<void>;
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts nginx on 127.0.0.1:<free port>: TLS with the server certificate, ALPN h2, a client certificate
 * required and checked against the test CA, then plain TCP to `target`. `close()` stops it and removes its files.
 */
export async function startTlsProxy(options: { target: { host: string; port: number } }): Promise<TlsProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'lifeline-tls-proxy-'));
  const certificates = createTestCertificates(dir);
  const port = await getFreePort();
  const config = join(dir, 'nginx.conf');
  writeFileSync(
    config,
    [
      `load_module ${STREAM_MODULE};`,
      'daemon off;',
      'master_process off;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} info;`,
      'events { worker_connections 256; }',
      'stream {',
      '  server {',
      `    listen 127.0.0.1:${port} ssl;`,
      `    ssl_certificate ${certificates.serverCertPath};`,
      `    ssl_certificate_key ${certificates.serverKeyPath};`,
      `    ssl_client_certificate ${certificates.caPath};`,
      '    ssl_verify_client on;',
      '    ssl_alpn h2;',
      `    proxy_pass ${options.target.host}:${options.target.port};`,
      '  }',
      '}',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', config, '-e', join(dir, 'error.log')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  while (!(await answers(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      const log = existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '';
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`nginx did not start on port ${port}: ${stderr}${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    address: `127.0.0.1:${port}`,
    certificates,
    readErrorLog: () => readFileSync(join(dir, 'error.log'), 'utf8'),
    async close() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
