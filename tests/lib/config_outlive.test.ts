import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../lib/shared/config.ts';

// The settings of links that outlive us: escrow exports, static snapshots, CDN purge and the DNS TTL of a planned switch. A bad
// value names the variable and stops start-up.
function refused(env: Record<string, string>, variable: string, message?: RegExp): void {
  assert.throws(
    () => parseConfig(env),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.problems.some((p) => p.variable === variable && (!message || message.test(p.message))),
    `${variable} should be refused for ${JSON.stringify(env)}`,
  );
}

describe('configuration: links that outlive us', () => {
  test('off by default', () => {
    const config = parseConfig({});
    assert.deepEqual(config.escrow, { interval: undefined, dir: undefined, keep: 7, signingKey: undefined });
    assert.deepEqual(config.snapshot, {
      interval: undefined,
      dir: undefined,
      formats: ['nginx', 'redirects', 'json'],
      keep: 3,
    });
    assert.equal(config.cdn, undefined);
    assert.equal(config.lifecycle.dnsTtlSeconds, 300);
    assert.equal(config.lifecycle.dnsLoweredTtlSeconds, 60);
  });

  test('escrow and snapshot Schedules need an absolute directory', () => {
    const config = parseConfig({
      ESCROW_INTERVAL: '1d',
      ESCROW_DIR: '/var/lib/lifeline/escrow',
      ESCROW_KEEP: '14',
      SNAPSHOT_INTERVAL: '15m',
      SNAPSHOT_DIR: '/srv/lifeline-static',
      SNAPSHOT_FORMATS: 'nginx, json',
    });
    assert.deepEqual(config.escrow, {
      interval: '1d',
      dir: '/var/lib/lifeline/escrow',
      keep: 14,
      signingKey: undefined,
    });
    assert.deepEqual(config.snapshot.formats, ['nginx', 'json']);
    refused({ ESCROW_INTERVAL: '1d' }, 'ESCROW_DIR', /required when ESCROW_INTERVAL is set/);
    refused({ ESCROW_INTERVAL: 'daily', ESCROW_DIR: '/x' }, 'ESCROW_INTERVAL');
    refused({ ESCROW_DIR: 'escrow' }, 'ESCROW_DIR', /absolute path/);
    refused({ ESCROW_KEEP: '0' }, 'ESCROW_KEEP');
    refused({ SNAPSHOT_INTERVAL: '1h' }, 'SNAPSHOT_DIR');
    refused({ SNAPSHOT_FORMATS: 'nginx,apache' }, 'SNAPSHOT_FORMATS', /nginx, redirects, json/);
  });

  test('CDN purge: each provider needs its settings, in their formats', () => {
    const webhook = parseConfig({
      CDN_PURGE_PROVIDER: 'webhook',
      CDN_PURGE_WEBHOOK_URL: 'https://purge.newsroom.example/hook',
      CDN_PURGE_WEBHOOK_SECRET: 'a-long-enough-secret',
    });
    assert.deepEqual(webhook.cdn, {
      provider: 'webhook',
      url: 'https://purge.newsroom.example/hook',
      secret: 'a-long-enough-secret',
    });
    const cloudfront = parseConfig({
      CDN_PURGE_PROVIDER: 'cloudfront',
      CDN_PURGE_CLOUDFRONT_DISTRIBUTION_ID: 'EDFDVBD6EXAMPLE',
      CDN_PURGE_AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      CDN_PURGE_AWS_SECRET_ACCESS_KEY: 'secret',
    });
    assert.equal(cloudfront.cdn?.provider, 'cloudfront');
    refused({ CDN_PURGE_PROVIDER: 'akamai' }, 'CDN_PURGE_PROVIDER');
    refused(
      { CDN_PURGE_PROVIDER: 'webhook' },
      'CDN_PURGE_WEBHOOK_URL',
      /required when CDN_PURGE_PROVIDER is webhook/,
    );
    refused(
      {
        CDN_PURGE_PROVIDER: 'webhook',
        CDN_PURGE_WEBHOOK_URL: 'https://x',
        CDN_PURGE_WEBHOOK_SECRET: 'short',
      },
      'CDN_PURGE_WEBHOOK_SECRET',
    );
    refused(
      { CDN_PURGE_PROVIDER: 'cloudflare', CDN_PURGE_CLOUDFLARE_ZONE_ID: 'zone id!' },
      'CDN_PURGE_CLOUDFLARE_ZONE_ID',
    );
    refused(
      { CDN_PURGE_PROVIDER: 'cloudflare', CDN_PURGE_CLOUDFLARE_ZONE_ID: 'abc' },
      'CDN_PURGE_CLOUDFLARE_API_TOKEN',
    );
    refused(
      { CDN_PURGE_PROVIDER: 'cloudfront', CDN_PURGE_CLOUDFRONT_DISTRIBUTION_ID: 'lower' },
      'CDN_PURGE_CLOUDFRONT_DISTRIBUTION_ID',
    );
  });

  test('FAILOVER_DNS_TTL_SECONDS below 60 is refused; the lowered TTL must be below it', () => {
    refused({ FAILOVER_DNS_TTL_SECONDS: '59' }, 'FAILOVER_DNS_TTL_SECONDS', /at least 60/);
    refused({ FAILOVER_DNS_TTL_SECONDS: '0' }, 'FAILOVER_DNS_TTL_SECONDS');
    assert.equal(
      parseConfig({ FAILOVER_DNS_TTL_SECONDS: '61', FAILOVER_DNS_LOWERED_TTL_SECONDS: '60' }).lifecycle
        .dnsTtlSeconds,
      61,
    );
    refused(
      { FAILOVER_DNS_TTL_SECONDS: '60' },
      'FAILOVER_DNS_LOWERED_TTL_SECONDS',
      /below FAILOVER_DNS_TTL_SECONDS \(60\)/,
    );
    refused({ FAILOVER_DNS_LOWERED_TTL_SECONDS: '0' }, 'FAILOVER_DNS_LOWERED_TTL_SECONDS');
  });
});
