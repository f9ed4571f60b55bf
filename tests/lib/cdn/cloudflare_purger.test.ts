import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type CloudflareFake, startCloudflareFake } from '../../../devkit/fakes/cloudflare_fake.ts';
import { type CloudflarePurgerOptions, createCloudflarePurger } from '../../../lib/cdn/cloudflare_purger.ts';

let fake: CloudflareFake;
before(async () => {
  fake = await startCloudflareFake();
});
after(() => fake.stop());
beforeEach(() => {
  fake.plan = 'enterprise';
  fake.reset();
});

function purger(overrides: Partial<CloudflarePurgerOptions> = {}) {
  return createCloudflarePurger({
    zoneId: fake.zoneId,
    apiToken: fake.token,
    shortBaseUrl: 'https://sho.rt',
    apiBaseUrl: fake.apiBaseUrl,
    // Long enough that a busy machine never turns a slow answer into a retry (no test here waits on it).
    timeoutMs: 5_000,
    retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 2000 },
    ...overrides,
  });
}

const paths = (n: number, prefix = 'c') => Array.from({ length: n }, (_, i) => `/${prefix}${i}`);

describe('Cloudflare purger against the fake', () => {
  test('purges exactly the changed URLs, 30 per call by default', async () => {
    fake.plan = 'free';
    fake.reset();
    const result = await purger().purgePaths(paths(65));
    assert.equal(result.purged.length, 65);
    assert.deepEqual(result.failed, []);
    assert.deepEqual(
      fake.purges.map((p) => [p.kind, p.items.length]),
      [
        ['files', 30],
        ['files', 30],
        ['files', 5],
      ],
    );
    assert.deepEqual(
      fake.purgedFiles(),
      paths(65).map((p) => `https://sho.rt${p}`),
    );
    assert.deepEqual(result.references, [fake.zoneId, fake.zoneId, fake.zoneId]);
    assert.equal(fake.requests[0]!.headers.authorization, `Bearer ${fake.token}`);
  });

  test('an Enterprise zone takes 500 per call when told so', async () => {
    const result = await purger({ filesPerRequest: 500 }).purgePaths(paths(65));
    assert.equal(result.purged.length, 65);
    assert.equal(fake.requests.length, 1);
  });

  test('more URLs per call than the plan allows: each batch refused (400), nothing purged, all reported', async () => {
    fake.plan = 'pro';
    fake.reset();
    const result = await purger({ filesPerRequest: 40 }).purgePaths(paths(80));
    assert.deepEqual(result.purged, []);
    assert.deepEqual(fake.purges, []);
    assert.deepEqual(
      result.failed.map((f) => [f.items.length, f.retryable, f.status]),
      [
        [40, false, 400],
        [40, false, 400],
      ],
    );
    assert.match(result.failed[0]!.reason, /You may only purge up to 30 files per API call/);
  });

  test('the Free plan bucket (25 calls) runs dry: 429 code 971 with a long Retry-After is reported, not waited', async () => {
    fake.plan = 'free';
    fake.reset();
    const result = await purger({ filesPerRequest: 1 }).purgePaths(paths(27));
    assert.equal(result.purged.length, 25);
    assert.equal(fake.requests.length, 26);
    assert.deepEqual(
      result.failed.map((f) => [f.items, f.retryable, f.status, f.code, f.retryAfterMs]),
      [
        [['/c25'], true, 429, '971', 12_000],
        [['/c26'], true, 429, '971', 12_000],
      ],
    );
  });

  test('a 429 with a short Retry-After and a 5xx are retried', async () => {
    fake.rateLimitNext(0);
    fake.serverErrorNext(502);
    const result = await purger().purgePaths(['/r1']);
    assert.deepEqual(result.purged, ['/r1']);
    assert.deepEqual(
      fake.requests.map((r) => r.status),
      [429, 502, 200],
    );
  });

  test('a wrong token is fatal (403, code 10000) and the token never appears', async () => {
    const token = 'wrong-token-123';
    const result = await purger({ apiToken: token, filesPerRequest: 1 }).purgePaths(['/a', '/b']);
    assert.equal(fake.requests.length, 1);
    assert.deepEqual(
      result.failed.map((f) => [f.items, f.retryable, f.status, f.code]),
      [
        [['/a'], false, 403, '10000'],
        [['/b'], false, 403, '10000'],
      ],
    );
    assert.match(result.failed[0]!.reason, /10000 Authentication error/);
    assert.ok(!JSON.stringify(result).includes(token));
  });

  test('an unknown zone is fatal (code 7003)', async () => {
    const result = await purger({ zoneId: 'nozone' }).purgePaths(['/a']);
    assert.equal(result.failed[0]!.code, '7003');
    assert.equal(result.failed[0]!.retryable, false);
  });

  test('a 2xx without success: true is not counted as purged', async () => {
    fake.failNext({
      answer: {
        status: 200,
        body: JSON.stringify({
          success: false,
          errors: [{ code: 1107, message: 'Only enterprise zones can purge by tag.' }],
          messages: [],
          result: null,
        }),
        headers: { 'Content-Type': 'application/json' },
      },
    });
    const result = await purger().purgeTags!(['link:9Kx2a']);
    assert.deepEqual(result.purged, []);
    assert.deepEqual([result.failed[0]!.code, result.failed[0]!.retryable], ['1107', false]);
  });

  test('prefixes go as host + path without a scheme; tags as given', async () => {
    const p = purger();
    assert.deepEqual((await p.purgePrefixes!(['/9K', '/ab'])).purged, ['/9K', '/ab']);
    assert.deepEqual((await p.purgeTags!(['link:9Kx2a'])).purged, ['link:9Kx2a']);
    assert.deepEqual(fake.purges, [
      { kind: 'prefixes', items: ['sho.rt/9K', 'sho.rt/ab'], zone: fake.zoneId },
      { kind: 'tags', items: ['link:9Kx2a'], zone: fake.zoneId },
    ]);
  });

  test('configuration mistakes are refused with a clear error at creation', () => {
    assert.throws(() => purger({ zoneId: '' }), /zone id/);
    assert.throws(() => purger({ apiToken: '' }), /API token/);
    assert.throws(() => purger({ shortBaseUrl: '/relative' }), /short base URL/);
  });
});
