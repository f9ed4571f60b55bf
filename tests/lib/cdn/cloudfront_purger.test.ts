import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  type CloudFrontFake,
  startCloudFrontFake,
  verifySigV4,
} from '../../../devkit/fakes/cloudfront_fake.ts';
import { type CloudFrontPurgerOptions, createCloudFrontPurger } from '../../../lib/cdn/cloudfront_purger.ts';

let fake: CloudFrontFake;
before(async () => {
  fake = await startCloudFrontFake();
});
after(() => fake.stop());
beforeEach(() => fake.reset());

function purger(overrides: Partial<CloudFrontPurgerOptions> = {}) {
  return createCloudFrontPurger({
    distributionId: fake.distributionId,
    credentials: { accessKeyId: fake.accessKeyId, secretAccessKey: fake.secretAccessKey },
    apiBaseUrl: fake.apiBaseUrl,
    // Long enough that a busy machine never turns a slow answer into a retry (no test here waits on it).
    timeoutMs: 5_000,
    retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 2000 },
    ...overrides,
  });
}

const paths = (n: number, prefix = 'c') => Array.from({ length: n }, (_, i) => `/${prefix}${i}`);
const callerReferenceOf = (body: string) => /<CallerReference>([^<]+)</.exec(body)?.[1];

describe('CloudFront purger against the fake (SigV4 verified for real)', () => {
  test('one signed invalidation for the changed paths; the Id comes back as the reference', async () => {
    const result = await purger().purgePaths(['/9Kx2a', '/9Kx2a+', '/A&B']);
    assert.deepEqual(result.purged, ['/9Kx2a', '/9Kx2a+', '/A&B']);
    assert.deepEqual(result.failed, []);
    assert.equal(fake.invalidations.length, 1);
    assert.deepEqual(fake.invalidatedPaths(), ['/9Kx2a', '/9Kx2a+', '/A&B']);
    assert.deepEqual(result.references, [fake.invalidations[0]!.id]);
    assert.equal(fake.requests[0]!.status, 201);
    assert.match(
      String(fake.requests[0]!.headers.authorization),
      /^AWS4-HMAC-SHA256 Credential=AKIAFAKECLOUDFRONT01\/\d{8}\/us-east-1\/cloudfront\/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
  });

  test('batches: 2,500 paths are three invalidations of at most 1,000, each with its own CallerReference', async () => {
    const result = await purger().purgePaths(paths(2500));
    assert.equal(result.purged.length, 2500);
    assert.deepEqual(
      fake.invalidations.map((i) => i.paths.length),
      [1000, 1000, 500],
    );
    assert.equal(new Set(fake.invalidations.map((i) => i.callerReference)).size, 3);
    assert.deepEqual(fake.invalidatedPaths(), paths(2500));
  });

  test('over 3,000 paths in progress: TooManyInvalidationsInProgress is reported at once, retryable later', async () => {
    assert.equal((await purger().purgePaths(paths(2500))).failed.length, 0);
    const result = await purger({ inProgressRetryMs: 90_000 }).purgePaths(paths(600, 'more'));
    assert.equal(result.requests, 1);
    assert.deepEqual(result.purged, []);
    assert.deepEqual(
      result.failed.map((f) => [f.items.length, f.retryable, f.status, f.code, f.retryAfterMs]),
      [[600, true, 400, 'TooManyInvalidationsInProgress', 90_000]],
    );
    fake.completeAll();
    assert.equal((await purger().purgePaths(paths(600, 'more'))).purged.length, 600);
  });

  test('prefixes become wildcards, at most 15 per batch; the 16th meets the in-progress limit', async () => {
    const prefixes = paths(16, 'p');
    const result = await purger().purgePrefixes!(prefixes);
    assert.deepEqual(
      fake.invalidations[0]!.paths,
      prefixes.slice(0, 15).map((p) => `${p}*`),
    );
    assert.deepEqual(result.purged, prefixes.slice(0, 15));
    assert.deepEqual(
      result.failed.map((f) => [f.items, f.code]),
      [[['/p15'], 'TooManyInvalidationsInProgress']],
    );
  });

  test('Throttling and 5xx are retried under the same CallerReference', async () => {
    fake.throttleNext();
    fake.unavailableNext();
    const result = await purger().purgePaths(['/t1']);
    assert.deepEqual(result.purged, ['/t1']);
    assert.deepEqual(
      fake.requests.map((r) => r.status),
      [400, 503, 201],
    );
    assert.equal(new Set(fake.requests.map((r) => callerReferenceOf(r.rawBody))).size, 1);
  });

  test('an answer lost after CloudFront acted: the retry gets the same invalidation, not a second one', async () => {
    fake.failNext({ lose: true });
    const result = await purger().purgePaths(['/lost']);
    assert.deepEqual(result.purged, ['/lost']);
    assert.equal(fake.requests.length, 2);
    assert.equal(fake.invalidations.length, 1);
    assert.deepEqual(result.references, [fake.invalidations[0]!.id]);
  });

  test('a wrong secret, an unknown key, a stale clock and an unknown distribution are fatal', async () => {
    const cases: [Partial<CloudFrontPurgerOptions>, number, string][] = [
      [
        { credentials: { accessKeyId: fake.accessKeyId, secretAccessKey: 'wrong-secret' } },
        403,
        'SignatureDoesNotMatch',
      ],
      [
        { credentials: { accessKeyId: 'AKIAUNKNOWNKEY000001', secretAccessKey: fake.secretAccessKey } },
        403,
        'InvalidClientTokenId',
      ],
      [{ now: () => new Date(Date.now() - 20 * 60_000) }, 403, 'SignatureDoesNotMatch'],
      [{ distributionId: 'ENOSUCH' }, 404, 'NoSuchDistribution'],
    ];
    for (const [overrides, status, code] of cases) {
      fake.reset();
      const result = await purger({ ...overrides, pathsPerInvalidation: 1 }).purgePaths(['/a', '/b']);
      assert.equal(fake.requests.length, 1, code);
      assert.deepEqual(
        result.failed.map((f) => [f.items, f.retryable, f.status, f.code]),
        [
          [['/a'], false, status, code],
          [['/b'], false, status, code],
        ],
      );
      assert.ok(!JSON.stringify(result).includes(fake.secretAccessKey));
    }
  });

  test('tags go as #tag items', async () => {
    assert.deepEqual((await purger().purgeTags!(['link:9Kx2a'])).purged, ['link:9Kx2a']);
    assert.deepEqual(fake.invalidatedPaths(), ['#link:9Kx2a']);
  });

  test('configuration mistakes are refused with a clear error at creation', () => {
    assert.throws(() => purger({ distributionId: 'bad id' }), /distribution id/);
    assert.throws(
      () => purger({ credentials: { accessKeyId: fake.accessKeyId, secretAccessKey: '' } }),
      /secret access key/,
    );
  });
});

describe("the fake's own SigV4 verifier", () => {
  // AWS's published post-x-www-form-urlencoded vector, as it would arrive on the wire.
  const vector = {
    method: 'POST',
    path: '/',
    query: '',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      host: 'example.amazonaws.com',
      'x-amz-date': '20150830T123600Z',
      authorization:
        'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a',
    },
    body: 'Param1=value1',
  };
  const secrets = new Map([['AKIDEXAMPLE', 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY']]);
  const scope = { region: 'us-east-1', service: 'service' };
  const at = Date.parse('2015-08-30T12:36:00Z');

  test('accepts the published vector and rejects it when the body, a signed header or the clock changes', () => {
    assert.equal(verifySigV4(vector, secrets, scope, at), null);
    assert.equal(
      verifySigV4({ ...vector, body: 'Param1=value2' }, secrets, scope, at)?.code,
      'SignatureDoesNotMatch',
    );
    assert.equal(
      verifySigV4(
        { ...vector, headers: { ...vector.headers, host: 'other.amazonaws.com' } },
        secrets,
        scope,
        at,
      )?.code,
      'SignatureDoesNotMatch',
    );
    assert.match(verifySigV4(vector, secrets, scope, at + 16 * 60_000)?.message ?? '', /^Signature expired/);
    assert.equal(
      verifySigV4(vector, secrets, { ...scope, service: 'cloudfront' }, at)?.code,
      'SignatureDoesNotMatch',
    );
  });
});
