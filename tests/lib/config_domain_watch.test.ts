import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { getDomainWatchSchedule, getWatchedNames } from '../../lib/domains/domain_facts.ts';
import { ConfigError, parseConfig } from '../../lib/shared/config.ts';

// The domain watch's settings, and the names it watches: a bad value names the variable and stops start-up.
function refused(env: Record<string, string>, variable: string, message?: RegExp): void {
  assert.throws(
    () => parseConfig(env),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.problems.some((p) => p.variable === variable && (!message || message.test(p.message))),
    `${variable} should be refused for ${JSON.stringify(env)}`,
  );
}

describe('configuration: the domain watch', () => {
  test('defaults: every 6 h, IANA’s bootstrap file, port 443, names from the hosts', () => {
    const config = parseConfig({});
    assert.deepEqual(config.domainWatch, {
      interval: '6h',
      domains: [],
      rdapUrl: undefined,
      rdapBootstrapUrl: 'https://data.iana.org/rdap/dns.json',
      tlsPort: 443,
    });
    // The development default (http://127.0.0.1:8000) has nothing to watch: no Schedule.
    assert.deepEqual(getWatchedNames(config), { hosts: [], domains: [] });
    assert.equal(getDomainWatchSchedule(config), undefined);
  });

  test('the short and app hosts, their registered domains, or the ones DOMAIN_WATCH_DOMAINS names', () => {
    const split = parseConfig({
      SHORT_BASE_URL: 'https://sho.rt',
      APP_BASE_URL: 'https://links.newsroom.example',
    });
    assert.deepEqual(getDomainWatchSchedule(split), {
      interval: '6h',
      hosts: ['sho.rt', 'links.newsroom.example'],
      domains: ['sho.rt', 'newsroom.example'],
    });
    const one = parseConfig({
      SHORT_BASE_URL: 'https://go.newsroom.example',
      APP_BASE_URL: 'https://newsroom.example',
    });
    assert.deepEqual(getWatchedNames(one).domains, ['newsroom.example']);
    const named = parseConfig({
      SHORT_BASE_URL: 'https://links.newsroom.co.uk',
      DOMAIN_WATCH_DOMAINS: ' Newsroom.co.uk., newsroom.co.uk ',
      DOMAIN_WATCH_INTERVAL: '1d',
      DOMAIN_WATCH_RDAP_URL: 'https://rdap.nominet.uk/uk/',
      DOMAIN_WATCH_TLS_PORT: '8443',
    });
    assert.deepEqual(getDomainWatchSchedule(named), {
      interval: '1d',
      hosts: ['links.newsroom.co.uk'],
      domains: ['newsroom.co.uk'],
    });
    assert.equal(named.domainWatch.rdapUrl, 'https://rdap.nominet.uk/uk');
    assert.equal(named.domainWatch.tlsPort, 8443);
    assert.equal(
      getDomainWatchSchedule(parseConfig({ SHORT_BASE_URL: 'https://sho.rt', DOMAIN_WATCH_INTERVAL: 'off' })),
      undefined,
    );
  });

  test('bad values name their variable', () => {
    refused({ DOMAIN_WATCH_INTERVAL: '6 hours' }, 'DOMAIN_WATCH_INTERVAL', /duration like/);
    refused(
      { DOMAIN_WATCH_DOMAINS: 'sho.rt,http://x.example' },
      'DOMAIN_WATCH_DOMAINS',
      /"http:\/\/x\.example" is none/,
    );
    refused({ DOMAIN_WATCH_DOMAINS: 'localhost' }, 'DOMAIN_WATCH_DOMAINS');
    refused({ DOMAIN_WATCH_RDAP_URL: 'ftp://rdap.example/' }, 'DOMAIN_WATCH_RDAP_URL', /http\(s\) URL/);
    refused({ DOMAIN_WATCH_RDAP_BOOTSTRAP_URL: 'not a url' }, 'DOMAIN_WATCH_RDAP_BOOTSTRAP_URL');
    refused({ DOMAIN_WATCH_TLS_PORT: '0' }, 'DOMAIN_WATCH_TLS_PORT', /1 to 65535/);
    refused({ DOMAIN_WATCH_TLS_PORT: '70000' }, 'DOMAIN_WATCH_TLS_PORT');
  });
});
