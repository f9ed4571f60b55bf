import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../lib/shared/config.ts';

const refuses = (env: Record<string, string>, variable: string) =>
  assert.throws(
    () => parseConfig(env),
    (e: unknown) => e instanceof ConfigError && e.problems.some((p) => p.variable === variable),
    `${JSON.stringify(env)} should name ${variable}`,
  );

describe('analytics configuration', () => {
  test('GA4 is off by default and on with both id and secret; defaults for the rest', () => {
    assert.equal(parseConfig({}).ga4, undefined);
    assert.deepEqual(parseConfig({ GA4_MEASUREMENT_ID: 'G-ABC123XYZ', GA4_API_SECRET: 's3cr3t' }).ga4, {
      measurementId: 'G-ABC123XYZ',
      apiSecret: 's3cr3t',
      endpoint: 'https://www.google-analytics.com',
      includeQr: true,
      maxQueue: 10_000,
    });
    const eu = parseConfig({
      GA4_MEASUREMENT_ID: 'G-ABC123XYZ',
      GA4_API_SECRET: 's3cr3t',
      GA4_ENDPOINT: 'https://region1.google-analytics.com/',
      GA4_INCLUDE_QR: 'false',
      GA4_QUEUE_MAX: '500',
    }).ga4;
    assert.equal(eu?.endpoint, 'https://region1.google-analytics.com');
    assert.equal(eu?.includeQr, false);
    assert.equal(eu?.maxQueue, 500);
  });

  test('a half or wrong GA4 configuration names the variable', () => {
    refuses({ GA4_MEASUREMENT_ID: 'G-ABC123XYZ' }, 'GA4_API_SECRET');
    refuses({ GA4_API_SECRET: 's3cr3t' }, 'GA4_MEASUREMENT_ID');
    refuses({ GA4_MEASUREMENT_ID: 'UA-1234-5', GA4_API_SECRET: 's' }, 'GA4_MEASUREMENT_ID');
    refuses({ GA4_MEASUREMENT_ID: 'G-ABC123XYZ', GA4_API_SECRET: 'has space' }, 'GA4_API_SECRET');
    refuses({ GA4_INCLUDE_QR: 'maybe' }, 'GA4_INCLUDE_QR');
    refuses({ GA4_ENDPOINT: 'ftp://x' }, 'GA4_ENDPOINT');
    refuses({ GA4_QUEUE_MAX: '10' }, 'GA4_QUEUE_MAX');
  });

  test("Bitly's click pull: on with Bitly (6h, 30 days), off without it or when asked", () => {
    const bitly = { BITLY_TOKEN: 't', BITLY_DOMAIN: 'sho.rt', BITLY_GROUP_GUID: 'Bg' };
    assert.equal(parseConfig({}).bitlyClicks, undefined);
    assert.deepEqual(parseConfig(bitly).bitlyClicks, { interval: '6h', days: 30 });
    assert.deepEqual(
      parseConfig({ ...bitly, BITLY_CLICKS_INTERVAL: '1d', BITLY_CLICKS_DAYS: '90' }).bitlyClicks,
      {
        interval: '1d',
        days: 90,
      },
    );
    assert.equal(parseConfig({ ...bitly, BITLY_CLICKS_INTERVAL: 'off' }).bitlyClicks, undefined);
    refuses({ BITLY_CLICKS_INTERVAL: 'hourly' }, 'BITLY_CLICKS_INTERVAL');
    refuses({ BITLY_CLICKS_DAYS: '0' }, 'BITLY_CLICKS_DAYS');
    refuses({ BITLY_CLICKS_DAYS: '366' }, 'BITLY_CLICKS_DAYS');
  });
});
