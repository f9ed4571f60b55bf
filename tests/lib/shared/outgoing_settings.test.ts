import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../../lib/shared/config.ts';
import {
  loadTemporalConnectionOptions,
  parseTemporalSettings,
  TemporalSettingsError,
} from '../../../lib/temporal/connection_options.ts';

// Settings that would send a secret or an analytics payload in clear text, or ask DNS for a TTL resolvers
// ignore, are refused at start-up with the variable named.

function refused(env: Record<string, string>, variable: string, message: RegExp): void {
  assert.throws(
    () => parseConfig(env),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.problems.some((p) => p.variable === variable && message.test(p.message)),
    `${variable} should be refused for ${JSON.stringify(env)}`,
  );
}

function temporalProblems(env: Record<string, string>): string[] {
  const full = { HOME: '/nonexistent-home', ...env };
  try {
    loadTemporalConnectionOptions({ settings: parseTemporalSettings(full), env: full });
  } catch (error) {
    assert.ok(error instanceof TemporalSettingsError, String(error));
    return error.problems.map((p) => `${p.variable}: ${p.message}`);
  }
  return [];
}

const GA4 = { GA4_MEASUREMENT_ID: 'G-ABCDEF1234', GA4_API_SECRET: 'secret' };

describe('settings that leave the machine in clear text', () => {
  test('GA4_ENDPOINT over http is refused unless it is a loopback address', () => {
    refused({ ...GA4, GA4_ENDPOINT: 'http://collector.example' }, 'GA4_ENDPOINT', /https/);
    refused({ ...GA4, GA4_ENDPOINT: 'http://10.0.0.7:8080' }, 'GA4_ENDPOINT', /https/);
    assert.equal(
      parseConfig({ ...GA4, GA4_ENDPOINT: 'http://127.0.0.1:9999' }).ga4?.endpoint,
      'http://127.0.0.1:9999',
    );
    assert.equal(
      parseConfig({ ...GA4, GA4_ENDPOINT: 'https://region1.google-analytics.com' }).ga4?.endpoint,
      'https://region1.google-analytics.com',
    );
  });

  test('a Temporal API key without TLS is refused unless Temporal is on a loopback address', () => {
    const [problem] = temporalProblems({
      TEMPORAL_ADDRESS: 'temporal.internal.example:7233',
      TEMPORAL_TLS: 'false',
      TEMPORAL_API_KEY: 'k-remote-plain',
    });
    assert.match(problem ?? '', /^TEMPORAL_API_KEY: .*without TLS/);
    assert.equal((problem ?? '').includes('k-remote-plain'), false);
    assert.deepEqual(
      temporalProblems({ TEMPORAL_ADDRESS: '127.0.0.1:7233', TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k' }),
      [],
    );
    assert.deepEqual(
      temporalProblems({ TEMPORAL_ADDRESS: 'localhost:7233', TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k' }),
      [],
    );
    assert.deepEqual(
      temporalProblems({
        TEMPORAL_ADDRESS: 'temporal.example:7233',
        TEMPORAL_TLS: 'true',
        TEMPORAL_API_KEY: 'k',
      }),
      [],
    );
  });

  test('FAILOVER_DNS_LOWERED_TTL_SECONDS below 60 is refused', () => {
    refused({ FAILOVER_DNS_LOWERED_TTL_SECONDS: '59' }, 'FAILOVER_DNS_LOWERED_TTL_SECONDS', /at least 60/);
    refused({ FAILOVER_DNS_LOWERED_TTL_SECONDS: '1' }, 'FAILOVER_DNS_LOWERED_TTL_SECONDS', /at least 60/);
    assert.equal(
      parseConfig({ FAILOVER_DNS_TTL_SECONDS: '300', FAILOVER_DNS_LOWERED_TTL_SECONDS: '60' }).lifecycle
        .dnsLoweredTtlSeconds,
      60,
    );
  });

  test('OUTGOING_ALLOWED_PRIVATE takes host names, addresses and ranges, and names a bad entry', () => {
    assert.deepEqual(
      parseConfig({ OUTGOING_ALLOWED_PRIVATE: 'hooks.internal, 10.20.0.0/16,127.0.0.1,::1' }).outgoing
        .allowPrivate,
      ['hooks.internal', '10.20.0.0/16', '127.0.0.1', '::1'],
    );
    assert.deepEqual(parseConfig({}).outgoing.allowPrivate, []);
    refused(
      { OUTGOING_ALLOWED_PRIVATE: 'hooks.internal,10.0.0.0/99' },
      'OUTGOING_ALLOWED_PRIVATE',
      /"10\.0\.0\.0\/99"/,
    );
    refused(
      { OUTGOING_ALLOWED_PRIVATE: 'http://x' },
      'OUTGOING_ALLOWED_PRIVATE',
      /host names, IP addresses and CIDR/,
    );
  });
});
