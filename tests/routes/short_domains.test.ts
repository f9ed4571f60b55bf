// Several short domains (ADR 0078) through the real server: the same code on two domains answers by Host, on the
// Node fast path (LRU hit and miss) and on the Hono route; an unknown Host answers 404 when so configured; the
// API names links by code and domain; the serving store keeps the default domain's keys as they were; a change
// on one domain reaches that domain's LRU only; Bitly gets each domain's link on the Bitly domain mapped to it;
// a WordPress site mapped to the second domain mints there.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import type { Link } from '../../lib/links/link.ts';
import { type RunningServer, serveNode } from '../../server/node_server.ts';

const REDIS_URL = process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `lltest:${randomUUID()}:`;
const HOME = 'sho.rt.test';
const TWO = 'two.short.test';

let h: Harness;
let server: RunningServer;
let fake: BitlyFake;
let worker: { stop(): Promise<void> };
let redis: ReturnType<typeof createClient>;
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

before(async () => {
  fake = await startBitlyFake({ domains: ['bit.home.test', 'bit.two.test'] });
  h = await createHarness({
    env: {
      ...fake.env(),
      SHORT_BASE_URL: `https://${HOME}`,
      SHORT_DOMAINS: `${HOME},${TWO}`,
      SHORT_DOMAIN_UNKNOWN_HOST: 'not_found',
      BITLY_DOMAINS: `${TWO}=bit.two.test`,
      REDIS_URL,
      REDIS_KEY_PREFIX: PREFIX,
    },
  });
  worker = await h.startWorker({ vendors: { retryBaseMs: 50, retryMaxMs: 500 } });
  server = await serveNode(h.app.fetch, { port: 0, host: '127.0.0.1', fastPath: h.deps });
  redis = createClient({ url: REDIS_URL });
  await redis.connect();
});

after(async () => {
  agent.destroy();
  await redis?.close();
  await server?.close(100);
  await worker?.stop();
  await h?.close();
  await fake?.stop();
});

/** One GET through the real server with this Host header: status and Location. */
function get(path: string, host: string): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: server.port, path, method: 'GET', agent, headers: { Host: host } },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, location: res.headers.location as string | undefined }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function create(json: Record<string, unknown>): Promise<Link> {
  const res = await h.api('/api/v1/links', { method: 'POST', json });
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()) as Link;
}

/** Waits for the link's sync workflow (serving store, Bitly) to finish. */
async function synced(link: Link, domain = link.domain): Promise<void> {
  const key = domain === HOME ? link.code : `${domain}/${link.code}`;
  await eventually(
    async () => {
      const [row] = await h.db.sql<{ state: string }[]>`
        SELECT state FROM vendor_links WHERE code = ${key} AND vendor = 'bitly'`;
      return row?.state === 'synced' ? true : undefined;
    },
    { timeoutMs: 60_000, what: `Bitly sync of ${key}` },
  );
}

describe('several short domains', () => {
  let home: Link;
  let two: Link;

  test('the same alias on two domains is two links; on one domain it is taken', async () => {
    home = await create({ url: 'https://news.example/home-story', alias: 'same-alias' });
    two = await create({ url: 'https://news.example/two-story', alias: 'same-alias', domain: TWO });
    assert.deepEqual(
      [home.code, home.domain, home.shortUrl],
      ['same-alias', HOME, `https://${HOME}/same-alias`],
    );
    assert.deepEqual([two.code, two.domain, two.shortUrl], ['same-alias', TWO, `https://${TWO}/same-alias`]);
    const again = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://news.example/third', alias: 'same-alias', domain: TWO.toUpperCase() },
    });
    assert.equal(again.status, 409);
    const unknown = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://news.example/x', domain: 'elsewhere.test' },
    });
    assert.equal(unknown.status, 422);
    const problem = (await unknown.json()) as { errors: { path: string }[] };
    assert.deepEqual(
      problem.errors.map((e) => e.path),
      ['domain'],
    );
    // A random code minted on the second domain is a code (no domain in it), shown under that domain.
    const minted = await create({ url: 'https://news.example/minted', domain: TWO });
    assert.match(minted.code, /^[A-Za-z0-9_-]+$/);
    assert.equal(minted.shortUrl, `https://${TWO}/${minted.code}`);
  });

  test('the Host header picks the link: fast path miss and LRU hit, any spelling of the host, and Hono', async () => {
    for (let round = 0; round < 2; round++) {
      assert.deepEqual(await get('/same-alias', HOME), {
        status: 301,
        location: 'https://news.example/home-story',
      });
      assert.deepEqual(await get('/same-alias', TWO), {
        status: 301,
        location: 'https://news.example/two-story',
      });
      assert.deepEqual(await get('/same-alias', `${TWO.toUpperCase()}.:8443`), {
        status: 301,
        location: 'https://news.example/two-story',
      });
    }
    const hono = await h.app.request('/same-alias', { headers: { Host: TWO } });
    assert.equal(hono.status, 301);
    assert.equal(hono.headers.get('Location'), 'https://news.example/two-story');
    // The preview names the link's own short URL, built from configuration.
    const preview = await h.app.request('/same-alias+', { headers: { Host: TWO } });
    assert.equal(preview.status, 200);
    assert.match(await preview.text(), new RegExp(`${TWO.replace(/\./g, '\\.')}/same-alias`));
  });

  test('an unknown Host answers 404 for every code (SHORT_DOMAIN_UNKNOWN_HOST=not_found), never a redirect', async () => {
    for (let round = 0; round < 2; round++) {
      const answer = await get('/same-alias', 'evil.example');
      assert.equal(answer.status, 404);
      assert.equal(answer.location, undefined);
    }
    const hono = await h.app.request('/same-alias', { headers: { Host: 'evil.example' } });
    assert.equal(hono.status, 404);
    const preview = await h.app.request('/same-alias+', { headers: { Host: 'evil.example' } });
    assert.equal(preview.status, 404);
  });

  test('the API reads, lists and filters by domain', async () => {
    const one = await h.api(`/api/v1/links/same-alias?domain=${TWO}`);
    assert.equal(one.status, 200);
    assert.equal(((await one.json()) as Link).url, 'https://news.example/two-story');
    const plain = await h.api('/api/v1/links/same-alias');
    assert.equal(((await plain.json()) as Link).url, 'https://news.example/home-story');
    const listed = await h.api(`/api/v1/links?domain=${TWO}`);
    const items = ((await listed.json()) as { items: Link[] }).items;
    assert.ok(items.length >= 2);
    assert.ok(items.every((l) => l.domain === TWO));
    const homeOnly = ((await (await h.api(`/api/v1/links?domain=${HOME}`)).json()) as { items: Link[] })
      .items;
    assert.ok(homeOnly.every((l) => l.domain === HOME));
    assert.ok(homeOnly.some((l) => l.code === 'same-alias'));
    const bad = await h.api('/api/v1/links?domain=elsewhere.test');
    assert.equal(bad.status, 422);
  });

  test('the serving store keys the default domain as before and the other by domain; Bitly gets each on its domain', async () => {
    await synced(home);
    await synced(two);
    assert.ok(await redis.get(`${PREFIX}link:same-alias`), 'the default domain’s key is the code');
    assert.ok(await redis.get(`${PREFIX}link:${TWO}/same-alias`), 'the other domain’s key carries it');
    assert.equal(
      fake.linkByKeyword('same-alias', 'bit.home.test')?.longUrl,
      'https://news.example/home-story',
    );
    assert.equal(fake.linkByKeyword('same-alias', 'bit.two.test')?.longUrl, 'https://news.example/two-story');
  });

  test('a change on one domain reaches that domain’s answer, and leaves the other’s', async () => {
    // Both answers are in the LRU now.
    assert.equal((await get('/same-alias', TWO)).location, 'https://news.example/two-story');
    assert.equal((await get('/same-alias', HOME)).location, 'https://news.example/home-story');
    const res = await h.api(`/api/v1/links/same-alias?domain=${TWO}`, {
      method: 'PATCH',
      json: { url: 'https://news.example/two-story-moved' },
    });
    assert.equal(res.status, 200);
    await eventually(
      async () =>
        (await get('/same-alias', TWO)).location === 'https://news.example/two-story-moved'
          ? true
          : undefined,
      { what: 'the second domain’s answer to change' },
    );
    assert.equal((await get('/same-alias', HOME)).location, 'https://news.example/home-story');
  });

  test('a WordPress site mapped to the second domain mints its posts there', async () => {
    const mapped = await h.api('/api/v1/wordpress/sites/two-desk/domain', {
      method: 'POST',
      json: { domain: TWO },
    });
    assert.equal(mapped.status, 200);
    assert.deepEqual(await mapped.json(), { site: 'two-desk', domain: TWO });
    const refused = await h.api('/api/v1/wordpress/sites/two-desk/domain', {
      method: 'POST',
      json: { domain: 'elsewhere.test' },
    });
    assert.equal(refused.status, 422);
    const accepted = await h.webhook({
      id: `short-domains-${randomUUID()}`,
      event: 'post.published',
      site: 'two-desk',
      postId: 78_001,
      permalink: 'https://news.example/2026/two-desk-story',
      occurredAt: new Date().toISOString(),
    });
    assert.equal(accepted.status, 202, await accepted.clone().text());
    const link = await eventually(
      async () => {
        const res = await h.api('/api/v1/links/by-post/two-desk/78001');
        return res.status === 200 ? ((await res.json()) as Link) : undefined;
      },
      { timeoutMs: 60_000, what: 'the post’s link' },
    );
    assert.equal(link.domain, TWO);
    assert.equal(link.shortUrl, `https://${TWO}/${link.code}`);
    assert.equal((await get(`/${link.code}`, TWO)).location, 'https://news.example/2026/two-desk-story');
    assert.equal((await get(`/${link.code}`, HOME)).status, 404);
    await synced(link);
    assert.equal(
      fake.linkByKeyword(link.code, 'bit.two.test')?.longUrl,
      'https://news.example/2026/two-desk-story',
    );
  });
});
