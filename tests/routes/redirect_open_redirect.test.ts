import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { createApp } from '../../routes/app.ts';
import { type RunningServer, serveNode } from '../../server/node_server.ts';
import { rewireWebDeps } from '../../server/web_deps.ts';

// Nothing in a request may change where a link leads: not its path, not its query, not its headers. Checked
// in-process and over real HTTP (raw bytes on a socket: no client-side URL normalisation), because Node's
// parser and Hono's URL handling differ from app.request().

const TARGET = 'https://news.example/2024/story?id=7#part-2';
let h: Harness;
let plain: RunningServer;
let forwarding: RunningServer;
let code: string;
let bare: string;
let fragmentOnly: string;

before(async () => {
  h = await createHarness();
  const created = await h.api('/api/v1/links', {
    method: 'POST',
    json: { url: TARGET, alias: 'paypal-news' },
  });
  assert.equal(created.status, 201, await created.clone().text());
  code = ((await created.json()) as { code: string }).code;
  bare = await createLink('https://news.example/plain');
  fragmentOnly = await createLink('https://news.example/frag#top');
  plain = await serveNode(h.app.fetch, { port: 0, host: '127.0.0.1' });
  const forwardingApp = createApp(
    rewireWebDeps({
      ...h.deps,
      config: {
        ...h.config,
        redirect: { ...h.config.redirect, forwardQueryParams: ['ref', 'utm_campaign', 'id'] },
      },
    }),
  );
  forwarding = await serveNode(forwardingApp.fetch, { port: 0, host: '127.0.0.1' });
});
after(async () => {
  await plain?.close(100);
  await forwarding?.close(100);
  await h?.close();
});

async function createLink(url: string): Promise<string> {
  const res = await h.api('/api/v1/links', { method: 'POST', json: { url } });
  assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
  return ((await res.json()) as { code: string }).code;
}

interface RawResponse {
  status: number;
  headers: Map<string, string[]>;
  head: string;
}

/** Sends one request with the request-target exactly as given (bytes, not a URL) and reads the answer. */
function raw(port: number, requestTarget: string | Buffer, method = 'GET'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(5_000, () => socket.destroy(new Error('timeout')));
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.split('\r\n\r\n')[0] ?? '';
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = new Map<string, string[]>();
      for (const line of lines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
      }
      resolve({ status: Number(statusLine?.split(' ')[1]), headers, head });
    });
    socket.write(
      Buffer.concat([
        Buffer.from(`${method} `),
        typeof requestTarget === 'string' ? Buffer.from(requestTarget, 'latin1') : requestTarget,
        Buffer.from(' HTTP/1.1\r\nHost: sho.rt.test\r\nUser-Agent: test\r\nConnection: close\r\n\r\n'),
      ]),
    );
  });
}

/** A Location the attacker could not have chosen: none, a same-site path, or exactly a link's own target. */
function assertNotOpenRedirect(what: string, status: number, location: string | null | undefined) {
  assert.ok(status < 500 || status === 505, `${what}: status ${status}`);
  if (location === null || location === undefined) return;
  if (location === '/ui') return;
  assert.ok(
    location === TARGET ||
      location === 'https://news.example/plain' ||
      location === 'https://news.example/frag#top',
    `${what}: Location ${location}`,
  );
}

const attackPaths = () => [
  '//evil.com',
  '//evil.com/',
  '///evil.com',
  '/%2F%2Fevil.com',
  '/%2f%2fevil.com',
  '/%5Cevil.com',
  '/%5C%5Cevil.com',
  '/\\evil.com',
  '/\\\\evil.com',
  '/@evil.com',
  '/%40evil.com',
  `/${code}@evil.com`,
  `/${code}%40evil.com`,
  `/${code}:@evil.com`,
  `/${code}%0d%0aLocation:%20https://evil.com`,
  `/${code}%0D%0ASet-Cookie:%20stolen=1`,
  `/${code}%0aX-Injected:%201`,
  `/${code}%00`,
  `/${code}/..`,
  `/${code}/../evil.com`,
  `/${code}/%2e%2e`,
  `/${code}%2F..%2F..%2Fevil.com`,
  `/${code}//evil.com`,
  `/${code}/https://evil.com`,
  `/${code}%23@evil.com`,
  `/${code}+@evil.com`,
  `/https://evil.com`,
  `/https:%2F%2Fevil.com`,
  `/http:/evil.com`,
  `/${'a'.repeat(65)}`,
  `/${'A'.repeat(5000)}`,
  // Unicode look-alikes of the alias "paypal-news": fullwidth letters and a Cyrillic "р".
  `/${encodeURIComponent('ｐａｙｐａｌ-news')}`,
  `/${encodeURIComponent('рaypal-news')}`,
  `/${encodeURIComponent('paypal‐news')}`, // U+2010 hyphen
  `/${encodeURIComponent(`${code}\u200b`)}`, // zero-width space
];

describe('attacks in the path', () => {
  test('in-process: every attempt is a 404 (or a same-site answer) and never points elsewhere', async () => {
    for (const path of attackPaths()) {
      let res: Response;
      try {
        res = await h.app.request(path);
      } catch {
        continue; // Request() itself refused the URL: nothing was answered.
      }
      assertNotOpenRedirect(path, res.status, res.headers.get('Location'));
      assert.equal(res.headers.get('Set-Cookie'), null, path);
      assert.equal(res.headers.get('X-Injected'), null, path);
    }
    // The look-alikes are not the alias.
    assert.equal((await h.app.request(`/${encodeURIComponent('ｐａｙｐａｌ-news')}`)).status, 404);
    assert.equal((await h.app.request(`/${encodeURIComponent('рaypal-news')}`)).status, 404);
    assert.equal((await h.app.request('/paypal-news')).headers.get('Location'), TARGET);
  });

  test('over real HTTP: the same attempts, raw, including raw non-ASCII and backslashes', async () => {
    const targets: (string | Buffer)[] = [
      ...attackPaths(),
      Buffer.from('/ｐａｙｐａｌ-news', 'utf8'),
      Buffer.from('/рaypal-news', 'utf8'),
      `/${code}\\evil.com`,
      `/${code}\\..\\evil.com`,
    ];
    for (const target of targets) {
      for (const method of ['GET', 'HEAD']) {
        const res = await raw(plain.port, target, method);
        const what = `${method} ${target.toString()}`;
        assertNotOpenRedirect(what, res.status, res.headers.get('location')?.[0]);
        assert.ok((res.headers.get('location')?.length ?? 0) <= 1, `${what}: one Location`);
        assert.equal(res.headers.get('set-cookie'), undefined, what);
        assert.equal(res.headers.get('x-injected'), undefined, what);
        if (res.status >= 300 && res.status < 400 && res.headers.get('location')?.[0] !== '/ui') {
          // Only the real code may redirect, and only to its target.
          assert.equal(res.headers.get('location')?.[0], TARGET, what);
        }
      }
    }
  });

  test('over real HTTP: the real code still redirects exactly, whatever query it carries', async () => {
    for (const query of [
      '',
      '?url=https://evil.com',
      '?next=//evil.com&redirect=https%3A%2F%2Fevil.com',
      '?%0d%0aLocation:%20https://evil.com',
      '?id=8',
      '?qr=1',
      '?a=%ZZ',
    ]) {
      const res = await raw(plain.port, `/${code}${query}`);
      assert.equal(res.status, 301, query);
      assert.deepEqual(res.headers.get('location'), [TARGET], query);
    }
  });
});

describe('FORWARD_QUERY_PARAMS', () => {
  /** The forwarded Location keeps the target's scheme, host, path, fragment and own query, in order. */
  function assertSameDestination(location: string, target: string, what: string) {
    const a = new URL(location);
    const b = new URL(target);
    assert.equal(a.protocol, b.protocol, what);
    assert.equal(a.host, b.host, what);
    assert.equal(a.pathname, b.pathname, what);
    assert.equal(a.hash, b.hash, what);
    assert.ok(a.search.startsWith(b.search), `${what}: ${a.search} keeps ${b.search}`);
    assert.ok(location.startsWith(target.split('#')[0]!), `${what}: ${location}`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find control characters
    assert.doesNotMatch(location, /[\u0000-\u0020\u007f-\uffff\\]/, what);
  }

  test('allowed parameters are appended re-encoded; others, qr and duplicates are not', async () => {
    const cases: [string, string, string][] = [
      [bare, '?ref=twitter&other=1', 'https://news.example/plain?ref=twitter'],
      [bare, '?qr=1&ref=a&ref=b', 'https://news.example/plain?ref=a'],
      [bare, '?ref=//evil.com', 'https://news.example/plain?ref=%2F%2Fevil.com'],
      [
        bare,
        '?ref=https://evil.com/x?y=1#z',
        'https://news.example/plain?ref=https%3A%2F%2Fevil.com%2Fx%3Fy%3D1%23z',
      ],
      [bare, '?ref=%0d%0aSet-Cookie:%20a=b', 'https://news.example/plain?ref=%0D%0ASet-Cookie%3A%20a%3Db'],
      [bare, '?ref=x%23@evil.com', 'https://news.example/plain?ref=x%23%40evil.com'],
      [bare, '?ref=\\evil.com', 'https://news.example/plain?ref=%5Cevil.com'],
      [
        bare,
        '?ref=a+b&utm_campaign=spring%20sale',
        'https://news.example/plain?ref=a%20b&utm_campaign=spring%20sale',
      ],
      [bare, `?ref=${'x'.repeat(257)}`, 'https://news.example/plain'],
      [bare, '?ref=%ZZ', 'https://news.example/plain'],
      [bare, '?ref=%E2%80%AE', 'https://news.example/plain?ref=%E2%80%AE'],
      // The target's own parameter wins over a forwarded one with the same name.
      [code, '?id=666&ref=r', 'https://news.example/2024/story?id=7&ref=r#part-2'],
      [fragmentOnly, '?ref=r', 'https://news.example/frag?ref=r#top'],
    ];
    for (const [c, query, location] of cases) {
      for (const via of ['in-process', 'http'] as const) {
        const got =
          via === 'http'
            ? (await raw(forwarding.port, `/${c}${query}`)).headers.get('location')?.[0]
            : (
                await createApp(
                  rewireWebDeps({
                    ...h.deps,
                    config: {
                      ...h.config,
                      redirect: { ...h.config.redirect, forwardQueryParams: ['ref', 'utm_campaign', 'id'] },
                    },
                  }),
                ).request(`/${c}${query}`)
              ).headers.get('Location');
        assert.equal(got, location, `${via} ${query}`);
        const target =
          c === code ? TARGET : c === bare ? 'https://news.example/plain' : 'https://news.example/frag#top';
        assertSameDestination(got!, target, `${via} ${query}`);
      }
    }
  });

  test('no request query, however crafted, changes scheme, host, path or fragment (fuzzed over HTTP)', async () => {
    const keys = ['ref', 'ref', 'utm_campaign', 'id', 'qr', 'x', '%72ef', 'r%65f', '', 'ref%00'];
    const junk = [
      '/',
      '//',
      '\\',
      '?',
      '#',
      '%23',
      '%2F',
      '%5C',
      '%0d%0a',
      '@',
      ':',
      '..',
      '%',
      '%ZZ',
      'é',
      '+',
      'evil.com',
      'https:',
      '%E2%80%AE',
      ';',
      '=',
      '&',
      '%20',
      'a',
    ];
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)]!;
    let answered = 0;
    let forwardedSome = 0;
    for (let i = 0; i < 300; i++) {
      const pairs: string[] = [];
      for (let p = 0, n = 1 + Math.floor(random() * 3); p < n; p++) {
        let value = '';
        for (let v = 0, m = Math.floor(random() * 6); v < m; v++) value += pick(junk);
        pairs.push(`${pick(keys)}=${value}`);
      }
      const query = `?${pairs.join('&')}`;
      const c = [code, bare, fragmentOnly][i % 3]!;
      const target =
        c === code ? TARGET : c === bare ? 'https://news.example/plain' : 'https://news.example/frag#top';
      // '#' ends the request-target in a URL but not on the wire: send what a browser would not, too.
      const res = await raw(forwarding.port, Buffer.from(`/${c}${query}`, 'utf8'));
      if (res.status === 400) continue; // Node's parser refused the bytes: no answer from us at all.
      answered++;
      assert.equal(res.status, 301, query);
      const location = res.headers.get('location');
      assert.equal(location?.length, 1, query);
      assertSameDestination(location![0]!, target, query);
      if (location![0] !== target) forwardedSome++;
    }
    assert.ok(forwardedSome > 30, `only ${forwardedSome} fuzzed requests forwarded anything`);
    assert.ok(answered > 200, `only ${answered} of 300 fuzzed requests reached the app`);
  });

  test('FORWARD_QUERY_PARAMS parses as a list of names and refuses qr and odd names', async () => {
    const { parseConfig } = await import('../../lib/shared/config.ts');
    assert.deepEqual(
      parseConfig({ FORWARD_QUERY_PARAMS: ' ref, utm_campaign ,' }).redirect.forwardQueryParams,
      ['ref', 'utm_campaign'],
    );
    assert.deepEqual(parseConfig({}).redirect.forwardQueryParams, []);
    assert.throws(() => parseConfig({ FORWARD_QUERY_PARAMS: 'qr' }), /FORWARD_QUERY_PARAMS/);
    assert.throws(() => parseConfig({ FORWARD_QUERY_PARAMS: 'a b' }), /FORWARD_QUERY_PARAMS/);
    assert.throws(() => parseConfig({ FORWARD_QUERY_PARAMS: 'x=1' }), /FORWARD_QUERY_PARAMS/);
  });
});
