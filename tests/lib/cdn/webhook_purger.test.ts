import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type CdnWebhookFake, startCdnWebhookFake } from '../../../devkit/fakes/cdn_webhook_fake.ts';
import type { CdnPurgeMetrics } from '../../../lib/cdn/cdn_purger.ts';
import { toLinkPurgePaths } from '../../../lib/cdn/cdn_purger.ts';
import { createCdnPurger } from '../../../lib/cdn/create_cdn_purger.ts';
import { createWebhookPurger, type WebhookPurgerOptions } from '../../../lib/cdn/webhook_purger.ts';
import { loadOutgoingRequests } from '../../../lib/shared/outgoing_request.ts';

let fake: CdnWebhookFake;
/** The fake receiver listens on loopback: allowed as an operator would allow an internal webhook. */
const LOOPBACK_ALLOWED = { allowPrivate: ['127.0.0.1'] };

before(async () => {
  // undici loads before the first purge's deadline starts.
  await loadOutgoingRequests(LOOPBACK_ALLOWED);
  fake = await startCdnWebhookFake({ shortBaseUrl: 'https://sho.rt' });
});
after(() => fake.stop());
beforeEach(() => fake.reset());

function recordingMetrics() {
  const counts: Record<string, number> = {};
  const metrics: CdnPurgeMetrics = {
    countRequest: (p, o) => {
      counts[`${p}:request:${o}`] = (counts[`${p}:request:${o}`] ?? 0) + 1;
    },
    countItems: (p, o, n) => {
      counts[`${p}:items:${o}`] = (counts[`${p}:items:${o}`] ?? 0) + n;
    },
  };
  return { counts, metrics };
}

function purger(overrides: Partial<WebhookPurgerOptions> = {}) {
  return createWebhookPurger({
    url: fake.url,
    secret: fake.secret,
    shortBaseUrl: 'https://sho.rt/',
    // Long enough that a busy machine never turns a slow answer into a retry; the hang test sets its own.
    timeoutMs: 5_000,
    retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 2000 },
    outgoing: LOOPBACK_ALLOWED,
    ...overrides,
  });
}

describe('generic purge webhook against its fake receiver', () => {
  test('purges exactly the changed paths, signed, with absolute URLs, duplicates removed', async () => {
    const paths = [...toLinkPurgePaths('9Kx2a'), ...toLinkPurgePaths('AbC'), '/9Kx2a'];
    const result = await purger().purgePaths(paths);
    assert.deepEqual(result.purged, ['/9Kx2a', '/9Kx2a+', '/AbC', '/AbC+']);
    assert.deepEqual(result.failed, []);
    assert.equal(result.requests, 1);
    assert.deepEqual(fake.purges, [
      {
        kind: 'paths',
        items: ['/9Kx2a', '/9Kx2a+', '/AbC', '/AbC+'],
        urls: ['https://sho.rt/9Kx2a', 'https://sho.rt/9Kx2a+', 'https://sho.rt/AbC', 'https://sho.rt/AbC+'],
        delivery: fake.purges[0]!.delivery,
      },
    ]);
    assert.match(String(fake.requests[0]!.headers['x-lifeline-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
  });

  test('batches: 250 paths with batchSize 100 are three signed requests', async () => {
    const paths = Array.from({ length: 250 }, (_, i) => `/c${i}`);
    const result = await purger({ batchSize: 100 }).purgePaths(paths);
    assert.equal(result.purged.length, 250);
    assert.deepEqual(
      fake.purges.map((p) => p.items.length),
      [100, 100, 50],
    );
    assert.deepEqual(fake.purgedPaths(), paths);
  });

  test('429 with Retry-After is waited out and retried; counters see it', async () => {
    fake.rateLimitNext(1);
    const { counts, metrics } = recordingMetrics();
    const started = Date.now();
    const result = await purger({ metrics }).purgePaths(['/wait1']);
    assert.ok(Date.now() - started >= 950, `waited ${Date.now() - started} ms`);
    assert.deepEqual(result.purged, ['/wait1']);
    assert.equal(result.requests, 2);
    assert.deepEqual(
      fake.requests.map((r) => r.status),
      [429, 200],
    );
    assert.deepEqual(counts, {
      'webhook:request:retried': 1,
      'webhook:request:ok': 1,
      'webhook:items:purged': 1,
    });
    // Both attempts carry the same delivery id, so a receiver that saw the first can drop the second.
    assert.equal(
      fake.requests[0]!.headers['x-lifeline-delivery'],
      fake.requests[1]!.headers['x-lifeline-delivery'],
    );
  });

  test('a Retry-After beyond maxDelayMs is not waited: reported retryable with the wait', async () => {
    fake.rateLimitNext(120);
    const result = await purger().purgePaths(['/later']);
    assert.deepEqual(result.purged, []);
    assert.equal(result.failed.length, 1);
    assert.deepEqual(
      { ...result.failed[0], reason: undefined },
      { items: ['/later'], reason: undefined, retryable: true, status: 429, retryAfterMs: 120_000 },
    );
  });

  test('5xx and a dropped connection are retried; a receiver down for good leaves every item reported', async () => {
    fake.failNext({ answer: { status: 503, body: 'down' } });
    fake.failNext({ drop: true });
    let result = await purger().purgePaths(['/flaky']);
    assert.deepEqual(result.purged, ['/flaky']);
    assert.equal(result.requests, 3);

    fake.reset();
    fake.failNext({ times: 10, answer: { status: 502, body: 'bad gateway' } });
    const paths = Array.from({ length: 5 }, (_, i) => `/down${i}`);
    result = await purger({ batchSize: 2 }).purgePaths(paths);
    assert.deepEqual(result.purged, []);
    // The first batch was tried three times; the two others were not sent into the same wall.
    assert.equal(fake.requests.length, 3);
    assert.deepEqual(
      result.failed.map((f) => [f.items, f.retryable]),
      [
        [['/down0', '/down1'], true],
        [['/down2', '/down3', '/down4'], true],
      ],
    );
    assert.match(
      result.failed[1]!.reason,
      /^not sent after an earlier batch failed: purge webhook answered 502/,
    );
  });

  test('a hung receiver times out and is retried, then reported', async () => {
    fake.failNext({ times: 2, hang: true });
    const result = await purger({ timeoutMs: 150, retry: { maxAttempts: 2, baseDelayMs: 5 } }).purgePaths([
      '/hang',
    ]);
    assert.equal(result.requests, 2);
    assert.equal(result.failed[0]!.retryable, true);
    assert.match(result.failed[0]!.reason, /timed out after 150 ms/);
  });

  test('a wrong secret is fatal: no retry, every batch reported, the secret never appears', async () => {
    const logged: string[] = [];
    const logger = { warn: (o: object, m: string) => logged.push(JSON.stringify(o) + m), error: () => {} };
    const secret = 'not-the-shared-secret';
    const result = await purger({ secret, batchSize: 1, logger }).purgePaths(['/a', '/b']);
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.status, 401);
    assert.deepEqual(
      result.failed.map((f) => [f.items, f.retryable, f.status]),
      [
        [['/a'], false, 401],
        [['/b'], false, 401],
      ],
    );
    assert.ok(!JSON.stringify(result).includes(secret));
    assert.ok(!logged.join('\n').includes(secret));
    assert.ok(logged.length > 0);
  });

  test('bad input gets a clear, non-retryable failure and the good items still go out', async () => {
    const result = await purger().purgePaths(['no-slash', '/ok', '/has space', '/q?x=1', '/star*']);
    assert.deepEqual(result.purged, ['/ok']);
    assert.deepEqual(
      result.failed.map((f) => f.items[0]),
      ['no-slash', '/has space', '/q?x=1', '/star*'],
    );
    assert.ok(result.failed.every((f) => !f.retryable && f.reason.length > 0));
    assert.deepEqual(fake.purgedPaths(), ['/ok']);
  });

  test('prefixes and tags use their own body keys', async () => {
    const p = purger();
    assert.deepEqual((await p.purgePrefixes!(['/9K'])).purged, ['/9K']);
    assert.deepEqual((await p.purgeTags!(['link:9Kx2a'])).purged, ['link:9Kx2a']);
    assert.deepEqual(
      fake.purges.map(({ kind, items, urls }) => ({ kind, items, urls })),
      [
        { kind: 'prefixes', items: ['/9K'], urls: ['https://sho.rt/9K'] },
        { kind: 'tags', items: ['link:9Kx2a'], urls: [] },
      ],
    );
    assert.equal((await p.purgeTags!(['has,comma'])).failed[0]!.retryable, false);
  });

  test('configuration mistakes are refused with a clear error at creation', () => {
    assert.throws(() => purger({ url: 'ftp://x' }), /purge webhook URL/);
    assert.throws(() => purger({ secret: 'short' }), /at least 16 characters/);
    assert.throws(() => purger({ shortBaseUrl: 'sho.rt' }), /short base URL/);
  });
});

describe('createCdnPurger', () => {
  test('picks the purger named by provider', () => {
    const common = { shortBaseUrl: 'https://sho.rt' };
    assert.equal(
      createCdnPurger({ provider: 'webhook', url: 'https://h.example/p', secret: 'x'.repeat(16), ...common })
        .name,
      'webhook',
    );
    assert.equal(
      createCdnPurger({ provider: 'cloudflare', zoneId: 'z1', apiToken: 't', ...common }).name,
      'cloudflare',
    );
    const credentials = { accessKeyId: 'AKIAFAKECLOUDFRONT01', secretAccessKey: 's' };
    assert.equal(
      createCdnPurger({ provider: 'cloudfront', distributionId: 'E1', credentials }).name,
      'cloudfront',
    );
  });
});
