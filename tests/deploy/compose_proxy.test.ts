// compose.yaml's proxy (deploy/compose/nginx.conf) in front of two real web processes (main.ts), as compose runs
// it in front of the two web replicas: redirects pass through and reach both replicas, /metrics is answered 404
// by the proxy (the replicas serve it with the token), and a replica that stops is passed over. Debian's nginx
// runs the file with only what compose's network provides replaced: the replicas' addresses and the listen port.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { type EntryProcess, standaloneWebEnv, startEntry } from '../../devkit/harness/entry_process.ts';
import { eventually } from '../../devkit/harness/harness.ts';
import { insertLink } from '../../lib/stores/link_store.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';

const NGINX = '/usr/sbin/nginx';
const METRICS_TOKEN = 'compose-proxy-metrics-token';
const HUMAN = { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/124.0 Safari/537.36' };
const scratch = mkdtempSync(join(tmpdir(), 'lifeline-compose-proxy-'));
let db: TestDatabase;
const webs: EntryProcess[] = [];
const webPorts: number[] = [];
let proxy: ReturnType<typeof spawn> | undefined;
let proxyBase = '';

/** compose's nginx.conf with the replicas at `ports` on loopback and the proxy on `listen`; each swap checked. */
function proxyConfig(ports: number[], listen: number): string {
  let text = readFileSync(join(ROOT, 'deploy', 'compose', 'nginx.conf'), 'utf8');
  const swap = (from: string | RegExp, to: string) => {
    const before = text;
    text = text.replace(from, to);
    assert.notEqual(text, before, `nginx.conf still has ${from}`);
  };
  swap(/^ {4}server web:8000 (.*);$/m, ports.map((port) => `    server 127.0.0.1:${port} $1;`).join('\n'));
  swap(/^ {4}listen 8080;$/m, `    listen 127.0.0.1:${listen};`);
  swap(/\/tmp\//g, `${scratch}/`);
  return text;
}

async function redirectsServed(port: number): Promise<number> {
  const text = await (
    await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })
  ).text();
  return [...text.matchAll(/^lifeline_redirects_total\{[^}]*\} (\d+)/gm)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
}

before(async () => {
  db = await createTestDatabase();
  await insertLink(db.sql, {
    code: 'proxy1',
    targetUrl: 'https://news.example/through-the-proxy',
    status: 'active',
    origin: 'api',
    owner: 'test',
  });
  const listen = await getFreePort();
  proxyBase = `http://127.0.0.1:${listen}`;
  for (let i = 0; i < 2; i++) {
    const port = await getFreePort();
    webPorts.push(port);
    const dataDir = join(scratch, `data-${i}`);
    mkdirSync(dataDir);
    webs.push(
      startEntry('main.ts', {
        env: {
          ...(await standaloneWebEnv(port, db.url)),
          SHORT_BASE_URL: proxyBase,
          METRICS_TOKEN,
          TRUSTED_CLIENT_IP_HEADER: 'x-real-ip',
          LIFELINE_DATA_DIR: dataDir,
        },
      }),
    );
  }
  for (const [i, port] of webPorts.entries()) {
    await eventually(
      async () => ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200 ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 200, what: `web ${i} ready (${webs[i]!.output().slice(-1000)})` },
    );
  }
  const conf = join(scratch, 'nginx.conf');
  writeFileSync(conf, proxyConfig(webPorts, listen));
  proxy = spawn(NGINX, ['-c', conf, '-p', scratch, '-e', join(scratch, 'error.log'), '-g', 'daemon off;'], {
    stdio: 'ignore',
  });
  await eventually(
    async () => ((await fetch(`${proxyBase}/livez`).catch(() => undefined))?.ok ? true : undefined),
    {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: `nginx up (${existsSync(join(scratch, 'error.log')) ? readFileSync(join(scratch, 'error.log'), 'utf8') : ''})`,
    },
  );
});

after(async () => {
  proxy?.kill('SIGTERM');
  for (const web of webs) web.kill();
  await db?.drop();
  rmSync(scratch, { recursive: true, force: true });
});

test('redirects pass through the proxy and reach both replicas', async () => {
  for (let i = 0; i < 20; i++) {
    const response = await fetch(`${proxyBase}/proxy1`, { redirect: 'manual', headers: HUMAN });
    assert.equal(response.status, 301);
    assert.equal(response.headers.get('location'), 'https://news.example/through-the-proxy');
  }
  const served = await Promise.all(webPorts.map(redirectsServed));
  assert.ok(
    served.every((n) => n > 0),
    `each replica answered some of the 20 (${served.join(', ')})`,
  );
  assert.equal(
    served.reduce((a, b) => a + b, 0),
    20,
  );
});

test('/metrics: 404 through the proxy, served by the replicas themselves with the token', async () => {
  const through = await fetch(`${proxyBase}/metrics`, {
    headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
  });
  assert.equal(through.status, 404);
  const direct = await fetch(`http://127.0.0.1:${webPorts[0]}/metrics`, {
    headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
  });
  assert.equal(direct.status, 200);
});

test('a replica that stops is passed over: every request still answered', async () => {
  await webs[1]!.stop();
  for (let i = 0; i < 10; i++) {
    const response = await fetch(`${proxyBase}/proxy1`, { redirect: 'manual', headers: HUMAN });
    assert.equal(response.status, 301, `request ${i} answered by the remaining replica`);
  }
});
