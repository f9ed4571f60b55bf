// The destination checks' settings: defaults, `off`, excluded hosts as written, and each bad value named.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../../lib/shared/config.ts';

const base = { DATABASE_URL: 'postgres://lifeline@127.0.0.1:5432/lifeline' };

describe('destination check settings', () => {
  test('defaults: a week per link, the Schedule every 15 minutes, half a request per second per host', () => {
    assert.deepEqual(parseConfig(base).destinationChecks, {
      interval: '7d',
      every: '15m',
      hostRate: 0.5,
      ownHostRate: 4,
      timeoutMs: 10_000,
      excludedHosts: [],
      contactUrl: undefined,
    });
  });

  test('off removes the Schedule; excluded hosts are lower-cased, a leading *. dropped', () => {
    const c = parseConfig({
      ...base,
      DESTINATION_CHECK_EVERY: 'off',
      DESTINATION_CHECK_EXCLUDED_HOSTS: '*.Example.com, news.example.org',
      DESTINATION_CHECK_CONTACT_URL: 'https://newsroom.example/link-checker',
    }).destinationChecks;
    assert.equal(c.every, undefined);
    assert.deepEqual(c.excludedHosts, ['example.com', 'news.example.org']);
    assert.equal(c.contactUrl, 'https://newsroom.example/link-checker');
  });

  test('a bad value stops start-up naming the variable', () => {
    for (const [name, value] of [
      ['DESTINATION_CHECK_EVERY', '5s'],
      ['DESTINATION_CHECK_INTERVAL', 'weekly'],
      ['DESTINATION_CHECK_HOST_RATE', '0'],
      ['DESTINATION_CHECK_OWN_HOST_RATE', 'fast'],
      ['DESTINATION_CHECK_TIMEOUT_MS', '10'],
      ['DESTINATION_CHECK_CONTACT_URL', 'ftp://newsroom.example'],
    ] as const) {
      assert.throws(
        () => parseConfig({ ...base, [name]: value }),
        (error: unknown) => error instanceof ConfigError && error.problems.some((p) => p.variable === name),
        name,
      );
    }
  });
});
