import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { createRedirectAnswerer } from '../../lib/redirect/answer_redirect.ts';
import { createHostRouting } from '../../lib/redirect/host_routing.ts';
import { createPostgresResolver } from '../../lib/redirect/link_resolver.ts';
import { createSql } from '../../lib/stores/sql.ts';
import { createApp } from '../../routes/app.ts';
import { redirectPages } from '../../routes/redirect.tsx';
import {
  createNodeListener,
  fastPathCode,
  type RunningServer,
  rawHeader,
  serveNode,
} from '../../server/node_server.ts';

// The Node fast path must be invisible: for every short-host state it writes the same bytes the Hono route
// writes (Date aside), and every other request still reaches Hono.

let h: Harness;
let fast: RunningServer;
let plain: RunningServer;
let honoCalls = 0;

const HOUR = 3_600_000;

before(async () => {
  h = await createHarness({
    env: { UTM_PARAMS: 'utm_source=short&utm_medium=social', METRICS_TOKEN: 'node-server-test-metrics' },
  });
  const counted = (request: Request) => {
    honoCalls++;
    return h.app.fetch(request);
  };
  fast = await serveNode(counted, { port: 0, host: '127.0.0.1', fastPath: h.deps });
  plain = await serveNode(h.app.fetch, { port: 0, host: '127.0.0.1' });
  const future = new Date(Date.now() + 30 * 24 * HOUR);
  const past = new Date(Date.now() - HOUR);
  const rows: [string, string, string, string, number | null, Date | null, string | null][] = [
    ['ActiveOne', 'https://example.com/story?utm_source=newsletter', 'active', 'clean', null, null, null],
    ['Temp307', 'https://example.com/temp', 'active', 'clean', 307, null, null],
    ['Perm308', 'https://example.com/perm', 'active', 'unknown', 308, null, null],
    ['Soon', 'https://example.com/soon', 'active', 'clean', null, future, null],
    // Stored as every way in stores it: canonical (https://例え.jp/パス/ü?q=日本#frag).
    [
      'NonLatin',
      'https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9/%C3%BC?q=%E6%97%A5%E6%9C%AC#frag',
      'active',
      'clean',
      null,
      null,
      null,
    ],
    ['Encoded', 'https://example.com/a%20b/%E2%82%AC?x=%2F', 'active', 'clean', null, null, null],
    ['ExpiredTo', 'https://example.com/old', 'active', 'clean', null, past, 'https://example.com/archive'],
    ['ExpiredNo', 'https://example.com/old2', 'expired', 'clean', null, past, null],
    ['GoneOne', 'https://example.com/gone', 'gone', 'clean', null, null, null],
    ['BlockedOne', 'https://evil.example/', 'blocked', 'blocked', null, null, null],
    ['BlockedSafety', 'https://evil.example/2', 'active', 'blocked', null, null, null],
    ['WarnOne', 'https://sketchy.example/page?a=1&b=%3Cx%3E', 'active', 'warn', null, null, null],
    ['PendingOne', 'https://example.com/pending', 'pending', 'unknown', null, null, null],
  ];
  for (const [code, url, status, safety, redirectStatus, expiresAt, expiredUrl] of rows) {
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner, redirect_status, expires_at, expired_url)
      VALUES (${code}, ${url}, ${status}, ${safety}, 'api', 'test', ${redirectStatus}, ${expiresAt}, ${expiredUrl})`;
  }
});

after(async () => {
  await fast?.close(100);
  await plain?.close(100);
  await h?.close();
});

/** One raw HTTP/1.1 exchange; the whole response as text, with the Date header's value blanked. */
function raw(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const lines = [`${method} ${path} HTTP/1.1`, 'Host: sho.rt.test', 'Connection: close'];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () =>
      resolve(
        Buffer.concat(chunks)
          .toString('latin1')
          .replace(/\r\nDate: [^\r]*/i, '\r\nDate: -'),
      ),
    );
  });
}

const STATE_PATHS = [
  '/ActiveOne',
  '/ActiveOne?qr=1',
  '/ActiveOne?utm_medium=mail&x=%2F%2Fevil',
  '/Temp307',
  '/Perm308',
  '/Soon',
  '/NonLatin',
  '/Encoded',
  '/ExpiredTo',
  '/ExpiredNo',
  '/GoneOne',
  '/BlockedOne',
  '/BlockedSafety',
  '/WarnOne',
  '/PendingOne',
  '/Unknown9z',
  '/ActiveOne+',
  '/Unknown9z+',
];

describe('Node fast path', () => {
  test('answers every short-host state with the same bytes as the Hono route, without calling Hono', async () => {
    for (const method of ['GET', 'HEAD']) {
      for (const path of STATE_PATHS) {
        const before = honoCalls;
        const ours = await raw(fast.port, method, path, { 'X-Request-Id': 'req-1', 'User-Agent': 'test' });
        assert.equal(honoCalls, before, `${method} ${path} went through Hono`);
        const theirs = await raw(plain.port, method, path, { 'X-Request-Id': 'req-1', 'User-Agent': 'test' });
        assert.equal(ours, theirs, `${method} ${path}`);
      }
    }
    // Spot-check that the states really are different answers (not, say, all 404s).
    const statusOf = async (path: string) => Number((await raw(fast.port, 'GET', path)).slice(9, 12));
    assert.deepEqual(
      await Promise.all(
        [
          '/ActiveOne',
          '/Temp307',
          '/ExpiredTo',
          '/ExpiredNo',
          '/GoneOne',
          '/BlockedOne',
          '/WarnOne',
          '/Unknown9z',
        ].map(statusOf),
      ),
      [301, 307, 302, 410, 410, 451, 200, 404],
    );
    assert.match(await raw(fast.port, 'GET', '/NonLatin'), /\r\nLocation: https:\/\/xn--r8jz45g\.jp\/%E3%83/);
  });

  test('a lookup failure is the same problem answer on both paths', async () => {
    // The real resolver over a database nobody listens on: every lookup throws.
    const dead = createSql({ url: 'postgres://127.0.0.1:9/none', max: 1 });
    const resolver = createPostgresResolver({ sql: dead });
    const deps = {
      ...h.deps,
      resolver,
      redirects: createRedirectAnswerer({ ...h.deps, resolver, pages: redirectPages }),
    };
    const app = createApp(deps);
    const broken = await serveNode(app.fetch, { port: 0, host: '127.0.0.1', fastPath: deps });
    const brokenPlain = await serveNode(app.fetch, { port: 0, host: '127.0.0.1' });
    try {
      for (const method of ['GET', 'HEAD']) {
        const ours = await raw(broken.port, method, '/ActiveOne', { 'X-Request-Id': 'req-3' });
        assert.match(ours, /^HTTP\/1\.1 500 /);
        assert.equal(ours, await raw(brokenPlain.port, method, '/ActiveOne', { 'X-Request-Id': 'req-3' }));
      }
    } finally {
      await broken.close(100);
      await brokenPlain.close(100);
      await dead.end({ timeout: 1 });
    }
  });

  test('an answer that throws after the lookup is the same problem answer on both paths, written once', async () => {
    // The lookup succeeds (a miss, then a cached negative: both of the fast path's ways in); rendering the
    // answer throws. Exactly one response per request, as Hono's onError writes it.
    const throwing = {
      status(): string {
        throw new Error('the page renderer broke');
      },
      preview(): string {
        throw new Error('the page renderer broke');
      },
    };
    const deps = { ...h.deps, redirects: createRedirectAnswerer({ ...h.deps, pages: throwing }) };
    const app = createApp(deps);
    const broken = await serveNode(app.fetch, { port: 0, host: '127.0.0.1', fastPath: deps });
    const brokenPlain = await serveNode(app.fetch, { port: 0, host: '127.0.0.1' });
    try {
      for (const path of ['/NoSuchZz1', '/NoSuchZz1', '/NoSuchZz2+', '/GoneOne']) {
        for (const method of ['GET', 'HEAD']) {
          const ours = await raw(broken.port, method, path, { 'X-Request-Id': 'req-4' });
          assert.match(ours, /^HTTP\/1\.1 500 /, `${method} ${path}`);
          assert.equal(ours.match(/HTTP\/1\.1 /g)?.length, 1, `one response for ${method} ${path}`);
          assert.equal(ours, await raw(brokenPlain.port, method, path, { 'X-Request-Id': 'req-4' }));
        }
      }
    } finally {
      await broken.close(100);
      await brokenPlain.close(100);
    }
  });

  test('everything that is not a possible code still reaches Hono and answers as before', async () => {
    const paths: [string, string][] = [
      ['GET', '/'],
      ['GET', '/healthz'],
      ['GET', '/ui'],
      ['GET', '/api/v1/links'],
      ['GET', '/static/app.css'],
      ['GET', '/a.b'],
      ['GET', `/${'a'.repeat(65)}`],
      ['GET', '/_private'],
      ['GET', '/%2F%2Fevil.example'],
      ['GET', '/ActiveOne/'],
      ['GET', '/ActiveOne/more'],
      ['GET', '//evil.example'],
      ['GET', '/HEALTHZ'],
      ['POST', '/ActiveOne'],
      ['DELETE', '/ActiveOne'],
      ['OPTIONS', '/ActiveOne'],
    ];
    for (const [method, path] of paths) {
      const before = honoCalls;
      const ours = await raw(fast.port, method, path, { 'X-Request-Id': 'req-2' });
      assert.equal(honoCalls, before + 1, `${method} ${path} did not reach Hono`);
      const theirs = await raw(plain.port, method, path, { 'X-Request-Id': 'req-2' });
      assert.equal(ours.split('\r\n')[0], theirs.split('\r\n')[0], `${method} ${path}`);
    }
    const before = honoCalls;
    const metrics = await raw(fast.port, 'GET', '/metrics', {
      Authorization: 'Bearer node-server-test-metrics',
    });
    assert.equal(honoCalls, before + 1);
    assert.match(metrics, /lifeline_redirects_total\{outcome="redirect"\} \d+/);
  });

  test('with split hosts, codes are served on the short host only; the app host is Hono (404 for codes)', async () => {
    const config = { ...h.config, appBaseUrl: 'http://app.test', splitHosts: true };
    const deps = { ...h.deps, config, hostRouting: createHostRouting(config) };
    const app = createApp(deps);
    let calls = 0;
    const split = await serveNode(
      (request) => {
        calls++;
        return app.fetch(request);
      },
      { port: 0, host: '127.0.0.1', fastPath: deps },
    );
    try {
      const onShort = await raw(split.port, 'GET', '/ActiveOne');
      assert.match(onShort, /^HTTP\/1\.1 301 /);
      assert.equal(calls, 0);
      const onApp = await new Promise<string>((resolve, reject) => {
        const socket = connect(split.port, '127.0.0.1');
        socket.write('GET /ActiveOne HTTP/1.1\r\nHost: APP.test\r\nConnection: close\r\n\r\n');
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk.toString('latin1');
        });
        socket.on('error', reject);
        socket.on('close', () => resolve(text));
      });
      assert.match(onApp, /^HTTP\/1\.1 404 /);
      assert.equal(calls, 1);
    } finally {
      await split.close(100);
    }
  });

  test('fastPathCode takes a single possible-code segment (or its preview) and nothing else', () => {
    assert.deepEqual(fastPathCode('/abc'), { code: 'abc', query: '' });
    assert.deepEqual(fastPathCode('/abc?qr=1&x=/y'), { code: 'abc', query: 'qr=1&x=/y' });
    assert.deepEqual(fastPathCode('/abc+'), { code: 'abc+', query: '' });
    for (const url of [
      '/',
      '/+',
      '/ui',
      '/Metrics',
      '/api',
      '/abc/',
      '/a/b',
      '/%61bc',
      '/a.b',
      '/_x',
      'http://h/abc',
      '/abc++',
      '*',
    ]) {
      assert.equal(fastPathCode(url), null, url);
    }
    assert.equal(typeof createNodeListener(h.app.fetch), 'function');
  });

  test('rawHeader reads a header as incoming.headers would, duplicates included', async () => {
    const names = [
      'user-agent',
      'referer',
      'host',
      'cf-ipcountry',
      'x-forwarded-for',
      'cookie',
      'from',
      'accept',
      'x_country',
      'x-geo-2',
    ];
    const seen = await new Promise<{ raw: string[]; headers: Record<string, unknown> }>((resolve, reject) => {
      const server = createServer((req, res) => {
        // rawHeaders first: reading it does not build req.headers, which is compared after.
        const raw = [...req.rawHeaders];
        resolve({ raw, headers: { ...req.headers } });
        res.end();
        server.close();
      });
      server.listen(0, '127.0.0.1', () => {
        const socket = connect((server.address() as AddressInfo).port, '127.0.0.1', () => {
          socket.write(
            'GET /abc HTTP/1.1\r\nHost: a.example\r\nhost: b.example\r\nUser-Agent: UA-1\r\nuser-agent: UA-2\r\n' +
              'Referer: https://r1.example/\r\nREFERER: https://r2.example/\r\nCF-IPCountry: SE\r\ncf-ipcountry: DE\r\n' +
              'X-Forwarded-For: 1.1.1.1\r\nCookie: a=1\r\nCookie: b=2\r\nFrom: f1\r\nFrom: f2\r\n' +
              'X_Country: NO\r\nx_country: FI\r\nX-GEO-2: PT\r\nx-geo-3: ES\r\n\r\n',
          );
          socket.on('data', () => socket.end());
        });
        socket.on('error', reject);
      });
    });
    for (const name of names) assert.equal(rawHeader(seen.raw, name), seen.headers[name], name);
  });
});
