import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../lib/shared/config.ts';

describe('parseConfig', () => {
  test('needs nothing: embedded defaults from API.md', () => {
    const config = parseConfig({});
    assert.equal(config.port, 8000);
    assert.equal(config.shortBaseUrl, 'http://127.0.0.1:8000');
    assert.equal(config.appBaseUrl, 'http://127.0.0.1:8000');
    assert.equal(config.splitHosts, false);
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.redis, undefined);
    assert.equal(config.bitly, undefined);
    assert.equal(config.redirect.status, 301);
    assert.equal(config.redirect.cacheControl, 'private, max-age=90');
    assert.equal(config.codeLength, 6);
    assert.equal(config.temporal.namespace, 'default');
  });

  test('resolver ladder: defaults, overrides, 0 disables the LRU, nonsense rejected', () => {
    assert.deepEqual(parseConfig({}).resolver, {
      cacheMax: 100_000,
      cacheMaxBytes: 48 * 1024 * 1024,
      cacheTtlMs: 60_000,
      negativeTtlMs: 5_000,
      staleMaxMs: 30_000,
      servingStoreTimeoutMs: 50,
    });
    const tuned = parseConfig({
      RESOLVER_CACHE_MAX: '0',
      RESOLVER_CACHE_MAX_BYTES: '0',
      RESOLVER_CACHE_TTL_MS: '1500',
      RESOLVER_NEGATIVE_TTL_MS: '0',
      RESOLVER_STALE_MAX_MS: '0',
      SERVING_STORE_TIMEOUT_MS: '20',
    });
    assert.deepEqual(tuned.resolver, {
      cacheMax: 0,
      cacheMaxBytes: 0,
      cacheTtlMs: 1500,
      negativeTtlMs: 0,
      staleMaxMs: 0,
      servingStoreTimeoutMs: 20,
    });
    for (const [variable, value] of [
      ['RESOLVER_CACHE_MAX', '-1'],
      ['RESOLVER_CACHE_MAX_BYTES', 'lots'],
      ['RESOLVER_CACHE_TTL_MS', '0'],
      ['RESOLVER_NEGATIVE_TTL_MS', 'soon'],
      ['RESOLVER_STALE_MAX_MS', '-1'],
      ['RESOLVER_STALE_MAX_MS', '3600001'],
      ['SERVING_STORE_TIMEOUT_MS', '0'],
    ] as const) {
      assert.throws(
        () => parseConfig({ [variable]: value }),
        (e: unknown) => e instanceof ConfigError && e.problems.some((p) => p.variable === variable),
      );
    }
  });

  test('reads every documented name', () => {
    const config = parseConfig({
      PORT: '9000',
      SHORT_BASE_URL: 'https://sho.rt/',
      APP_BASE_URL: 'https://links.example.com',
      DATABASE_URL: 'postgres://u@db/x',
      REDIS_URL: 'redis://127.0.0.1:6379',
      BITLY_TOKEN: 't',
      BITLY_DOMAIN: 'sho.rt',
      BITLY_GROUP_GUID: 'Bg1',
      REDIRECT_STATUS: '302',
      UTM_PARAMS: 'utm_source=short',
      ALLOWED_TARGET_HOSTS: 'News.Example, blog.example',
      CODE_LENGTH: '8',
    });
    assert.equal(config.port, 9000);
    assert.equal(config.shortBaseUrl, 'https://sho.rt');
    assert.equal(config.splitHosts, true);
    assert.deepEqual(config.redis, { kind: 'tcp', url: 'redis://127.0.0.1:6379', keyPrefix: 'lifeline:' });
    assert.equal(config.bitly?.apiBaseUrl, 'https://api-ssl.bitly.com');
    assert.equal(config.redirect.status, 302);
    assert.deepEqual(config.allowedTargetHosts, ['news.example', 'blog.example']);
    assert.equal(config.codeLength, 8);
  });

  test('hot-path settings: forwarded query parameters, the click buffer, the report limit', () => {
    const defaults = parseConfig({});
    assert.deepEqual(defaults.redirect.forwardQueryParams, []);
    assert.deepEqual(defaults.clicks, {
      flushIntervalMs: 5000,
      maxFlushIntervalMs: 30_000,
      maxKeys: 250_000,
    });
    assert.equal(defaults.rateLimits.reportsPerHour, 20);
    const config = parseConfig({
      FORWARD_QUERY_PARAMS: 'ref, utm_Campaign',
      CLICK_FLUSH_INTERVAL_MS: '1000',
      CLICK_BUFFER_MAX_KEYS: '1000',
      RATE_LIMIT_REPORTS_PER_HOUR: '3',
    });
    assert.deepEqual(config.redirect.forwardQueryParams, ['ref', 'utm_Campaign'], 'names keep their case');
    assert.deepEqual(config.clicks, { flushIntervalMs: 1000, maxFlushIntervalMs: 30_000, maxKeys: 1000 });
    assert.equal(
      parseConfig({ CLICK_FLUSH_INTERVAL_MS: '60000' }).clicks.maxFlushIntervalMs,
      60_000,
      'the maximum is never below the interval',
    );
    assert.equal(config.rateLimits.reportsPerHour, 3);
    assert.equal(config.loginHashQueueMax, 8, 'eight sign-ins may wait for a password hash by default');
  });

  const bad: [Record<string, string>, string][] = [
    [{ FORWARD_QUERY_PARAMS: 'qr' }, 'FORWARD_QUERY_PARAMS'],
    [{ FORWARD_QUERY_PARAMS: 'a=b' }, 'FORWARD_QUERY_PARAMS'],
    [{ CLICK_FLUSH_INTERVAL_MS: '10' }, 'CLICK_FLUSH_INTERVAL_MS'],
    [{ CLICK_BUFFER_MAX_KEYS: 'many' }, 'CLICK_BUFFER_MAX_KEYS'],
    [{ RATE_LIMIT_REPORTS_PER_HOUR: '0' }, 'RATE_LIMIT_REPORTS_PER_HOUR'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ SHORT_BASE_URL: 'sho.rt' }, 'SHORT_BASE_URL'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ REDIRECT_STATUS: '303' }, 'REDIRECT_STATUS'],
    [{ CODE_LENGTH: '4' }, 'CODE_LENGTH'],
    [{ CODE_LENGTH: '13' }, 'CODE_LENGTH'],
    [{ BITLY_TOKEN: 'x' }, 'BITLY_DOMAIN'],
    [{ UPSTASH_REDIS_REST_URL: 'https://u.example' }, 'UPSTASH_REDIS_REST_TOKEN'],
    [{ BOOTSTRAP_API_KEY: 'short' }, 'BOOTSTRAP_API_KEY'],
    [{ ADMIN_EMAIL: 'not-an-email' }, 'ADMIN_EMAIL'],
    [{ REDIRECT_CACHE_CONTROL: 'x\r\nSet-Cookie: a=b' }, 'REDIRECT_CACHE_CONTROL'],
    [{ LOGIN_HASH_QUEUE_MAX: '0' }, 'LOGIN_HASH_QUEUE_MAX'],
    [{ LOGIN_HASH_QUEUE_MAX: 'lots' }, 'LOGIN_HASH_QUEUE_MAX'],
    // Longer than a sign-in accepts (1 KiB): the admin could never sign in.
    [{ ADMIN_EMAIL: 'a@example.test', ADMIN_PASSWORD: 'é'.repeat(513) }, 'ADMIN_PASSWORD'],
  ];
  for (const [env, variable] of bad) {
    test(`a bad ${variable} stops start-up naming it`, () => {
      assert.throws(
        () => parseConfig(env),
        (e: unknown) => e instanceof ConfigError && e.problems.some((p) => p.variable === variable),
      );
    });
  }
});

describe('parseConfig: deployment settings (Temporal connection, probes, shutdown)', () => {
  test('defaults: plain Temporal at no address, worker health port 9464 on every interface, 5 s drain', () => {
    const config = parseConfig({});
    assert.equal(config.temporal.address, undefined);
    assert.equal(config.temporal.settings.TEMPORAL_API_KEY, undefined);
    assert.deepEqual(config.workerHealth, { port: 9464, host: '0.0.0.0' });
    assert.equal(config.shutdownDelayMs, 5_000);
  });

  test('every TEMPORAL_* setting lands in config.temporal.settings, trimmed', () => {
    const config = parseConfig({
      TEMPORAL_ADDRESS: ' eu-west-1.aws.api.temporal.io:7233 ',
      TEMPORAL_NAMESPACE: 'newsroom.a1b2c',
      TEMPORAL_API_KEY: 'key',
      TEMPORAL_TLS: 'true',
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      WORKER_HEALTH_PORT: '0',
      WORKER_HEALTH_HOST: '127.0.0.1',
      SHUTDOWN_DELAY_MS: '0',
    });
    assert.equal(config.temporal.address, 'eu-west-1.aws.api.temporal.io:7233');
    assert.equal(config.temporal.namespace, 'newsroom.a1b2c');
    assert.equal(config.temporal.settings.TEMPORAL_TLS, true);
    assert.equal(config.temporal.settings.TEMPORAL_API_KEY, 'key');
    assert.equal(config.temporal.settings.TEMPORAL_TLS_SERVER_NAME, 'temporal.internal');
    assert.deepEqual(config.workerHealth, { port: 0, host: '127.0.0.1' });
    assert.equal(config.shutdownDelayMs, 0);
  });

  const bad: [Record<string, string>, string, RegExp][] = [
    [{ TEMPORAL_ADDRESS: 'https://x.tmprl.cloud:7233' }, 'TEMPORAL_ADDRESS', /without a scheme/],
    [{ TEMPORAL_TLS: 'on' }, 'TEMPORAL_TLS', /true or false/],
    [{ TEMPORAL_TLS_CLIENT_CERT_PATH: '/run/secrets/c.pem' }, 'TEMPORAL_TLS_CLIENT_CERT_PATH', /private key/],
    [{ TEMPORAL_TLS_CERT: '/x.pem' }, 'TEMPORAL_TLS_CERT', /use TEMPORAL_TLS_CLIENT_CERT_PATH/],
    [{ TEMPORAL_TLS: 'false', TEMPORAL_TLS_SERVER_NAME: 'x' }, 'TEMPORAL_TLS', /is false but/],
    [{ TEMPORAL_TASK_QUEUE: 'lifeline-drainers' }, 'TEMPORAL_TASK_QUEUE', /must not end in "-drainers"/],
    [{ WORKER_HEALTH_PORT: '70000' }, 'WORKER_HEALTH_PORT', /./],
    [{ SHUTDOWN_DELAY_MS: '-1' }, 'SHUTDOWN_DELAY_MS', /./],
  ];
  for (const [env, variable, message] of bad) {
    test(`${variable}=${Object.values(env).join(',')} stops start-up naming it`, () => {
      assert.throws(
        () => parseConfig(env),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.problems.some((p) => p.variable === variable && message.test(p.message)),
      );
    });
  }
});
