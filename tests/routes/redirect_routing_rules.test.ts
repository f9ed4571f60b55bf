// Routing rules end to end (ADR 0080), through the real Node server (fast path and Hono route) on Postgres and
// Redis: set, shown, replaced and removed through the API (validated against the OpenAPI document); Arabic
// readers, iPhones and readers in Egypt sent to their rules' targets, everyone else to the link's own; Vary and a
// private Cache-Control only on links with rules; the serving store carries the rules; a rule target under the
// same target rule and safety scan as the url (refused, or warned); batches refuse rules.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { generateApiKey, getApiKeyDisplayPrefix, hashApiKey } from '../../lib/auth/api_keys.ts';
import type { Link } from '../../lib/links/link.ts';
import { insertApiKey } from '../../lib/stores/api_key_store.ts';
import { type RunningServer, serveNode } from '../../server/node_server.ts';
import { expectFieldProblem, expectProblem } from '../helpers/problem.ts';

const REDIS_URL = process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:140.0) Gecko/20100101 Firefox/140.0';
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
const EN = 'https://news.example/en/2026/12/budget';
const AR = 'https://news.example/ar/2026/12/budget';
const IOS = 'https://apps.news.example/ios/budget';
const EG = 'https://news.example/eg/2026/12/budget';

let h: Harness;
let server: RunningServer;
let base: string;
let validateLink: (body: unknown) => boolean;

before(async () => {
  h = await createHarness({
    env: {
      REDIS_URL,
      REDIS_KEY_PREFIX: `t-rules-${process.pid}-${Date.now()}:`,
      TRUSTED_COUNTRY_HEADER: 'CF-IPCountry',
      REDIRECT_CACHE_CONTROL: 'public, max-age=300',
    },
  });
  server = await serveNode(h.app.fetch, { port: 0, host: '127.0.0.1', fastPath: h.deps });
  base = `http://127.0.0.1:${server.port}`;
  const doc = await (await h.app.request('/api/v1/openapi.json')).json();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi.json');
  const validate = ajv.compile({ $ref: 'openapi.json#/components/schemas/Link' });
  validateLink = (body) => {
    const ok = validate(body);
    if (!ok) assert.fail(JSON.stringify(validate.errors));
    return ok;
  };
});
after(async () => {
  await server?.close();
  await h?.close();
});

async function create(json: Record<string, unknown>): Promise<Link> {
  const res = await h.api('/api/v1/links', { method: 'POST', json });
  assert.equal(res.status, 201, await res.clone().text());
  const link = (await res.json()) as Link;
  validateLink(link);
  return link;
}

async function patch(code: string, json: Record<string, unknown>): Promise<Link> {
  const res = await h.api(`/api/v1/links/${code}`, { method: 'PATCH', json });
  assert.equal(res.status, 200, await res.clone().text());
  const link = (await res.json()) as Link;
  validateLink(link);
  return link;
}

/** GET /{code} through the real server as a reader with these headers; never follows the redirect. */
async function follow(code: string, headers: Record<string, string> = {}, query = '') {
  const res = await fetch(`${base}/${code}${query}`, {
    redirect: 'manual',
    headers: { 'User-Agent': FIREFOX, ...headers },
  });
  await res.body?.cancel();
  return {
    status: res.status,
    location: res.headers.get('Location'),
    vary: res.headers.get('Vary'),
    cacheControl: res.headers.get('Cache-Control'),
  };
}

const RULES = [
  { kind: 'language', values: ['ar'], target: AR },
  { kind: 'device', values: ['ios'], target: IOS },
  { kind: 'country', values: ['eg'], target: EG },
];

describe('routing rules through the real server', () => {
  test('Arabic readers, iPhones and Egypt go to their targets; everyone else to the url; repeat answers alike', async () => {
    const link = await create({ url: EN, title: 'Budget', rules: RULES });
    assert.deepEqual(link.rules, [
      { kind: 'language', values: ['ar'], target: AR },
      { kind: 'device', values: ['ios'], target: IOS },
      { kind: 'country', values: ['EG'], target: EG },
    ]);
    const got = await h.api(`/api/v1/links/${link.code}`);
    assert.deepEqual(((await got.json()) as Link).rules, link.rules);

    const vary = 'Accept-Language, User-Agent, cf-ipcountry';
    // Twice each, interleaved: the second answer of a variant is the memoised one (an LRU hit, a Map hit).
    for (let pass = 0; pass < 2; pass++) {
      const ar = await follow(link.code, { 'Accept-Language': 'ar-EG,ar;q=0.9,en;q=0.8' });
      assert.deepEqual(ar, { status: 301, location: AR, vary, cacheControl: 'private, max-age=300' });
      const en = await follow(link.code, { 'Accept-Language': 'en-GB,en;q=0.9,ar;q=0.5' });
      assert.deepEqual(en, { status: 301, location: EN, vary, cacheControl: 'private, max-age=300' });
      assert.equal((await follow(link.code, { 'User-Agent': IPHONE })).location, IOS);
      assert.equal((await follow(link.code, { 'CF-IPCountry': 'EG' })).location, EG);
      assert.equal((await follow(link.code, { 'CF-IPCountry': 'SA' })).location, EN);
      // First match wins: an Arabic reader on an iPhone in Egypt gets the language rule.
      const all = await follow(link.code, {
        'Accept-Language': 'ar',
        'User-Agent': IPHONE,
        'CF-IPCountry': 'EG',
      });
      assert.equal(all.location, AR);
      // The QR variant answers the same, never shared-cacheable either.
      const qr = await follow(link.code, { 'Accept-Language': 'ar' }, '?qr=1');
      assert.deepEqual(qr, { status: 301, location: AR, vary, cacheControl: 'private, max-age=300' });
    }
    // The Hono route (Deno, and everything off the fast path) answers the same.
    const viaHono = await h.app.request(`/${link.code}`, {
      headers: { 'Accept-Language': 'ar', 'User-Agent': FIREFOX },
    });
    assert.equal(viaHono.headers.get('Location'), AR);
    assert.equal(viaHono.headers.get('Vary'), vary);

    // The serving store holds the rules: a fresh lookup past the LRU reads them from Redis.
    const stored = await h.deps.servingStore?.get(link.code);
    assert.deepEqual(stored?.rules, link.rules);
  });

  test('a link without rules: no Vary, its shared Cache-Control unchanged', async () => {
    const plain = await create({ url: 'https://news.example/en/plain' });
    assert.equal(plain.rules, undefined);
    for (let pass = 0; pass < 2; pass++) {
      const answer = await follow(plain.code, { 'Accept-Language': 'ar' });
      assert.deepEqual(answer, {
        status: 301,
        location: 'https://news.example/en/plain',
        vary: null,
        cacheControl: 'public, max-age=300',
      });
    }
  });

  test('PATCH replaces the whole list (order is the rule), null removes it; audited; the redirect follows', async () => {
    const link = await create({ url: 'https://news.example/en/patched', rules: RULES.slice(0, 2) });
    const reordered = await patch(link.code, {
      rules: [
        { kind: 'device', values: ['ios', 'android'], target: IOS },
        { kind: 'language', values: ['ar'], target: AR },
      ],
      reason: 'apps first',
    });
    assert.deepEqual(
      reordered.rules?.map((r) => r.kind),
      ['device', 'language'],
    );
    assert.equal((await follow(link.code, { 'Accept-Language': 'ar', 'User-Agent': IPHONE })).location, IOS);
    const [entry] = await h.db.sql<{ action: string; before: unknown; after: unknown }[]>`
      SELECT action, before, after FROM audit_log WHERE code = ${link.code} AND reason = 'apps first'`;
    assert.equal(entry?.action, 'link.retargeted');
    assert.equal((entry!.after as { rules: unknown[] }).rules.length, 2);
    // Sending the same list again changes nothing (no new version).
    const version = async () =>
      (await h.db.sql<{ v: number }[]>`SELECT version AS v FROM links WHERE code = ${link.code}`)[0]!.v;
    const v = await version();
    await patch(link.code, { rules: reordered.rules });
    assert.equal(await version(), v);
    // Other fields leave the rules alone.
    assert.deepEqual((await patch(link.code, { title: 'Renamed' })).rules, reordered.rules);
    const cleared = await patch(link.code, { rules: null });
    assert.equal(cleared.rules, undefined);
    const [row] = await h.db.sql`SELECT routing_rules FROM links WHERE code = ${link.code}`;
    assert.equal(row?.routing_rules, null);
    const answer = await follow(link.code, { 'Accept-Language': 'ar', 'User-Agent': IPHONE });
    assert.deepEqual(answer, {
      status: 301,
      location: 'https://news.example/en/patched',
      vary: null,
      cacheControl: 'public, max-age=300',
    });
    await patch(link.code, { rules: [RULES[0]] });
    assert.equal((await follow(link.code, { 'Accept-Language': 'ar' })).location, AR);
    await patch(link.code, { rules: [] });
    assert.equal((await follow(link.code, { 'Accept-Language': 'ar' })).vary, null);
  });

  test('bad rules are 422s naming the rule field; nothing is written', async () => {
    const cases: [unknown, string][] = [
      [[{ kind: 'language', values: ['arabic'], target: AR }], 'rules.0.values.0'],
      [[RULES[0], { kind: 'device', values: ['ios'], target: 'ftp://apps.example/' }], 'rules.1.target'],
      [[{ kind: 'planet', values: ['mars'], target: AR }], 'rules.0.kind'],
      [[{ kind: 'country', values: [], target: EG }], 'rules.0.values'],
      [[{ kind: 'country', values: ['EG'], target: EG, extra: 1 }], 'rules.0.extra'],
      [Array.from({ length: 9 }, () => RULES[0]), 'rules'],
      // The short domain itself: the url's target rule, for each rule target too.
      [[RULES[0], { kind: 'device', values: ['ios'], target: 'http://sho.rt.test/other' }], 'rules.1.target'],
    ];
    for (const [rules, path] of cases) {
      await expectFieldProblem(
        await h.api('/api/v1/links', {
          method: 'POST',
          json: { url: 'https://news.example/bad-rules', rules },
        }),
        422,
        path,
      );
    }
    const [count] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM links WHERE target_url = 'https://news.example/bad-rules'`;
    assert.equal(count?.n, 0);
    // A batch item cannot carry rules (they are set one link at a time).
    const batch = await h.api('/api/v1/links/batch', {
      method: 'POST',
      json: { links: [{ url: 'https://news.example/batch-rules', rules: [RULES[0]] }] },
    });
    assert.equal(batch.status, 200);
    const result = (
      (await batch.json()) as { results: { status: number; error?: { errors?: { path: string }[] } }[] }
    ).results[0]!;
    assert.equal(result.status, 422);
    assert.ok(
      result.error?.errors?.some((e) => e.path.endsWith('rules')),
      JSON.stringify(result),
    );
  });

  test('an unsafe rule target blocks like an unsafe url: refused on create and edit; a warned one warns the link', async () => {
    const blocked = await expectProblem(
      await h.api('/api/v1/links', {
        method: 'POST',
        json: {
          url: 'https://news.example/en/safe',
          rules: [RULES[0], { kind: 'device', values: ['android'], target: 'http://localhost/admin' }],
        },
      }),
      422,
    );
    assert.equal(blocked.type, 'urn:lifeline:problem:target-blocked');
    assert.equal(blocked.errors?.[0]?.path, 'rules.1.target');
    assert.match(blocked.errors![0]!.message, /^is blocked: /);
    const [count] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM links WHERE target_url = 'https://news.example/en/safe'`;
    assert.equal(count?.n, 0);

    const link = await create({ url: 'https://news.example/en/edited-safe' });
    assert.equal(link.safety, 'clean');
    await expectFieldProblem(
      await h.api(`/api/v1/links/${link.code}`, {
        method: 'PATCH',
        json: { rules: [{ kind: 'language', values: ['ar'], target: 'http://127.0.0.1/x' }] },
      }),
      422,
      'rules.0.target',
    );
    // A raw IP address is a warning: the link gets the interstitial, whichever target the reader matches.
    const warned = await patch(link.code, {
      rules: [{ kind: 'language', values: ['ar'], target: 'http://8.8.4.4/ar' }],
    });
    assert.equal(warned.safety, 'warn');
    assert.equal((await follow(link.code, { 'Accept-Language': 'ar' })).status, 200);
    // Removing the rule rescans the url alone: clean again.
    assert.equal((await patch(link.code, { rules: null })).safety, 'clean');
  });

  test("a WordPress article's rules are an administrator's, like its url", async () => {
    const writer = generateApiKey();
    await insertApiKey(h.db.sql, {
      name: 'writer',
      prefix: getApiKeyDisplayPrefix(writer),
      keyHash: await hashApiKey(writer),
      scopes: ['links:write', 'links:read'],
      createdBy: 'test',
    });
    const article = await create({
      url: 'https://news.example/en/article',
      site: 'rules-site',
      postId: 80801,
    });
    const refused = await expectFieldProblem(
      await h.api(`/api/v1/links/${article.code}`, {
        method: 'PATCH',
        json: { rules: [RULES[0]] },
        headers: { Authorization: `Bearer ${writer}` },
      }),
      403,
      'rules',
    );
    assert.match(refused.detail, /rules/);
    // Its administrator may (the harness's key is an admin's).
    assert.equal((await patch(article.code, { rules: [RULES[0]] })).rules?.length, 1);
  });
});
