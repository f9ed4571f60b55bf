import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkUrlRules } from '../../../lib/safety/url_rules.ts';

function verdictOf(url: string): string {
  const findings = checkUrlRules(url);
  return findings.some((f) => f.verdict === 'blocked')
    ? 'blocked'
    : findings.some((f) => f.verdict === 'warn')
      ? 'warn'
      : 'clean';
}

describe('checkUrlRules', () => {
  test('only http and https schemes pass', () => {
    for (const url of [
      'javascript:alert(1)',
      'data:text/html,hi',
      'file:///etc/passwd',
      'ftp://example.com/x',
    ]) {
      assert.equal(verdictOf(url), 'blocked', url);
      assert.equal(checkUrlRules(url)[0]!.rule, 'scheme');
    }
    assert.equal(verdictOf('https://example.com/a?b#c'), 'clean');
    assert.equal(verdictOf('http://news.example.org/2026/story'), 'clean');
  });

  test('private, loopback, link-local and other non-public IPv4 literals are blocked, however they are spelled', () => {
    const cases = {
      'http://127.0.0.1/': 'loopback',
      'http://127.1/': 'loopback',
      'http://2130706433/': 'loopback', // decimal
      'http://0x7f.0.0.1/': 'loopback', // hex
      'http://0x7f000001/': 'loopback',
      'http://0177.0.0.1/': 'loopback', // octal
      'http://127.0.0.1./': 'loopback', // trailing dot
      'http://10.1.2.3:8080/admin': 'private',
      'http://172.16.0.1/': 'private',
      'http://192.168.1.1/': 'private',
      'http://0xc0.0xa8.1.1/': 'private',
      'http://169.254.169.254/latest/meta-data/': 'linkLocal',
      'http://100.64.0.1/': 'carrierGradeNat',
      'http://0.0.0.0/': 'unspecified',
      'http://0/': 'unspecified',
      'http://255.255.255.255/': 'broadcast',
      'http://224.0.0.1/': 'multicast',
    };
    for (const [url, range] of Object.entries(cases)) {
      const [finding] = checkUrlRules(url);
      assert.equal(finding?.verdict, 'blocked', url);
      assert.equal(finding?.rule, 'private_address', url);
      assert.match(finding!.reason, new RegExp(`\\(${range}\\)`), url);
    }
  });

  test('non-public IPv6 literals are blocked, including IPv4 hidden in mapped, NAT64, 6to4 and Teredo forms', () => {
    for (const url of [
      'http://[::1]/',
      'http://[::]/',
      'http://[fe80::1]/',
      'http://[fd12:3456::1]/', // unique local
      'http://[fc00::1]/',
      'http://[::ffff:127.0.0.1]/', // mapped
      'http://[::ffff:7f00:1]/',
      'http://[::ffff:10.0.0.1]/',
      'http://[::127.0.0.1]/', // deprecated compatible form
      'http://[64:ff9b::192.168.0.1]/', // NAT64
      'http://[2002:c0a8:0101::1]/', // 6to4 of 192.168.1.1
      'http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/', // Teredo, client 10.0.0.1
      'http://[ff02::1]/',
    ]) {
      assert.equal(verdictOf(url), 'blocked', url);
    }
  });

  test('public IP literals get a warning, not a block', () => {
    for (const url of ['http://8.8.8.8/', 'http://[2606:4700:4700::1111]/', 'http://[::ffff:8.8.8.8]/']) {
      const [finding] = checkUrlRules(url);
      assert.deepEqual([finding?.verdict, finding?.rule], ['warn', 'ip_literal'], url);
    }
  });

  test('names that only resolve privately are blocked', () => {
    for (const url of [
      'http://localhost/',
      'http://LOCALHOST./',
      'http://api.localhost/',
      'http://printer.local/',
      'http://db.internal/',
      'http://router.home.arpa/',
      'http://intranet/',
    ]) {
      const [finding] = checkUrlRules(url);
      assert.deepEqual([finding?.verdict, finding?.rule], ['blocked', 'special_host'], url);
    }
  });

  test('user-info before the host is blocked (it disguises the real host)', () => {
    const [finding] = checkUrlRules('https://bank.example@evil.example/login');
    assert.deepEqual([finding?.verdict, finding?.rule], ['blocked', 'credentials']);
  });
});
