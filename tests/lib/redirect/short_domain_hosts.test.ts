import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isPossibleLinkKey } from '../../../lib/codes/code_rules.ts';
import { createShortDomainHosts, hostNameOf } from '../../../lib/redirect/short_domain_hosts.ts';
import { ConfigError, parseConfig } from '../../../lib/shared/config.ts';
import {
  keyCode,
  keyDomain,
  linkKey,
  shortUrlOfKey,
  storedDomainFromInput,
} from '../../../lib/shared/link_key.ts';
import { createCanonicalTargetPolicy, targetRuleProblem } from '../../../lib/targets/target_rule.ts';

// Several short domains (ADR 0078) below the server: the settings and their refusals, a link's key, and which
// domain a Host header names.

const base = { SHORT_BASE_URL: 'https://go.example' };

function refused(env: Record<string, string>, variable: string, message: RegExp): void {
  assert.throws(
    () => parseConfig(env),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.problems.some((p) => p.variable === variable && message.test(p.message)),
    `${variable} should be refused for ${JSON.stringify(env)}`,
  );
}

describe('SHORT_DOMAINS and its neighbours', () => {
  test('unset: SHORT_BASE_URL’s host alone, and an unknown Host answers as the default', () => {
    const config = parseConfig(base);
    assert.deepEqual(config.shortDomains, ['go.example']);
    assert.equal(config.unknownHost, 'default');
    assert.equal(config.bitlyDomains.size, 0);
  });

  test('set: lower-cased, the default first; mistakes are refused with the variable named', () => {
    const config = parseConfig({
      ...base,
      SHORT_DOMAINS: 'Go.Example, Two.Example',
      SHORT_DOMAIN_UNKNOWN_HOST: 'not_found',
    });
    assert.deepEqual(config.shortDomains, ['go.example', 'two.example']);
    assert.equal(config.unknownHost, 'not_found');
    refused(
      { ...base, SHORT_DOMAINS: 'two.example,go.example' },
      'SHORT_DOMAINS',
      /must start with SHORT_BASE_URL's host/,
    );
    refused({ ...base, SHORT_DOMAINS: 'go.example,go.example' }, 'SHORT_DOMAINS', /twice/);
    refused({ ...base, SHORT_DOMAINS: 'go.example,https://two.example/' }, 'SHORT_DOMAINS', /host names/);
    refused({ ...base, SHORT_DOMAIN_UNKNOWN_HOST: 'redirect' }, 'SHORT_DOMAIN_UNKNOWN_HOST', /./);
  });

  test('BITLY_DOMAINS maps each other short domain to a Bitly domain of its own', () => {
    const bitly = { BITLY_TOKEN: 't', BITLY_DOMAIN: 'bit.go', BITLY_GROUP_GUID: 'G1' };
    const config = parseConfig({
      ...base,
      ...bitly,
      SHORT_DOMAINS: 'go.example,two.example,three.example',
      BITLY_DOMAINS: 'two.example=bit.two, three.example=bit.three@G3',
    });
    assert.deepEqual(
      [...config.bitlyDomains],
      [
        ['two.example', { domain: 'bit.two', groupGuid: 'G1' }],
        ['three.example', { domain: 'bit.three', groupGuid: 'G3' }],
      ],
    );
    const two = { ...base, ...bitly, SHORT_DOMAINS: 'go.example,two.example' };
    refused({ ...two, BITLY_DOMAINS: 'go.example=bit.other' }, 'BITLY_DOMAINS', /after the first/);
    refused({ ...two, BITLY_DOMAINS: 'two.example=bit.go' }, 'BITLY_DOMAINS', /its own Bitly domain/);
    refused({ ...two, BITLY_DOMAINS: 'two.example' }, 'BITLY_DOMAINS', /short\.domain=bitly\.domain/);
  });

  test('a target on any of the short domains is refused: it would loop', () => {
    const policy = createCanonicalTargetPolicy(
      parseConfig({ ...base, SHORT_DOMAINS: 'go.example,two.example' }),
    );
    assert.notEqual(targetRuleProblem('https://two.example/abc', policy), null);
    assert.notEqual(targetRuleProblem('https://go.example/abc', policy), null);
    assert.equal(targetRuleProblem('https://news.example/two.example', policy), null);
  });
});

describe('a link’s key', () => {
  const domains = { shortBaseUrl: 'https://go.example', shortDomains: ['go.example', 'two.example'] };

  test('is the code on the default domain and `{domain}/{code}` on another, and splits back', () => {
    assert.equal(linkKey('', 'Ab3_x'), 'Ab3_x');
    assert.equal(linkKey('two.example', 'Ab3_x'), 'two.example/Ab3_x');
    for (const [key, domain, code] of [
      ['Ab3_x', '', 'Ab3_x'],
      ['two.example/Ab3_x', 'two.example', 'Ab3_x'],
    ] as const) {
      assert.equal(keyDomain(key), domain);
      assert.equal(keyCode(key), code);
    }
    assert.equal(shortUrlOfKey(domains, 'Ab3_x'), 'https://go.example/Ab3_x');
    assert.equal(shortUrlOfKey(domains, 'two.example/Ab3_x'), 'https://two.example/Ab3_x');
    assert.equal(
      shortUrlOfKey({ shortBaseUrl: 'http://127.0.0.1:8080' }, 'two.example/x1'),
      'http://two.example:8080/x1',
    );
  });

  test('names a configured domain only; the default by its name or by nothing', () => {
    assert.equal(storedDomainFromInput(domains, undefined), '');
    assert.equal(storedDomainFromInput(domains, 'GO.example'), '');
    assert.equal(storedDomainFromInput(domains, 'two.example'), 'two.example');
    assert.equal(storedDomainFromInput(domains, 'three.example'), undefined);
  });

  test('passes the code rule only as a host name and a possible code', () => {
    assert.ok(isPossibleLinkKey('Ab3_x'));
    assert.ok(isPossibleLinkKey('two.example/Ab3_x'));
    for (const bad of [
      'two.example/',
      '/Ab3_x',
      'Two.Example/x1',
      '../x/y1',
      'two.example/api',
      'a b/x1',
      'x/y/z1',
    ])
      assert.equal(isPossibleLinkKey(bad), false, bad);
  });
});

describe('which short domain a Host header names', () => {
  const peeks: string[] = [];
  const peekerFor = (domain: string) => (code: string) => {
    peeks.push(`${domain}|${code}`);
    return undefined;
  };
  const config = { shortBaseUrl: 'https://go.example', shortDomains: ['go.example', 'two.example'] };

  test('any spelling of a configured name; an unknown one as configured', () => {
    const strict = createShortDomainHosts({ ...config, unknownHost: 'not_found' }, peekerFor);
    assert.equal(strict.single, false);
    for (const host of [
      'two.example',
      'TWO.example',
      'two.example.',
      'two.example:8443',
      'Two.Example.:443',
    ]) {
      assert.equal(strict.select(host)?.stored, 'two.example', host);
      assert.equal(strict.select(host)?.keyPrefix, 'two.example/', host);
      assert.equal(strict.select(host)?.baseUrl, 'https://two.example', host);
    }
    assert.equal(strict.select('go.example:80')?.stored, '');
    assert.equal(strict.select('evil.example'), null);
    assert.equal(strict.select('two.example.evil.example'), null);
    assert.equal(strict.select(undefined), null);
    strict.select('two.example')?.peek?.('Ab3_x');
    assert.deepEqual(peeks, ['two.example|Ab3_x']);

    const lenient = createShortDomainHosts({ ...config, unknownHost: 'default' }, peekerFor);
    assert.equal(lenient.select('evil.example'), lenient.home);
    assert.equal(lenient.home.baseUrl, 'https://go.example');
  });

  test('one domain answering every Host needs no Host at all', () => {
    const one = createShortDomainHosts(
      { shortBaseUrl: 'https://go.example', shortDomains: ['go.example'], unknownHost: 'default' },
      peekerFor,
    );
    assert.equal(one.single, true);
    const strict = createShortDomainHosts(
      { shortBaseUrl: 'https://go.example', shortDomains: ['go.example'], unknownHost: 'not_found' },
      peekerFor,
    );
    assert.equal(strict.single, false);
  });

  test('hostNameOf lower-cases and drops the port and a trailing dot', () => {
    assert.equal(hostNameOf('Two.Example.:8443'), 'two.example');
    assert.equal(hostNameOf('[::1]:8000'), '[::1]');
    assert.equal(hostNameOf('go.example'), 'go.example');
  });
});
