import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkLookalikeHost, getLabelScripts } from '../../../lib/safety/lookalike_host.ts';

const hostOf = (url: string) => new URL(url).hostname;

describe('checkLookalikeHost', () => {
  test('plain ASCII hosts and legitimate internationalised names pass', () => {
    for (const url of [
      'https://example.com/',
      'https://münchen.de/',
      'https://пример.рф/',
      'https://сос.рф/', // looks Latin, but the TLD is Cyrillic too
      'https://ελληνικά.gr/',
      'https://日本語.jp/',
      'https://例え.テスト/',
      'https://한국어.kr/',
      'https://bücher-2026.example/',
    ]) {
      assert.equal(checkLookalikeHost(hostOf(url)), null, url);
    }
  });

  test('mixed-script labels warn, whether typed in Unicode or punycode', () => {
    for (const url of ['https://pаypal.com/', 'https://gооgle.com/', 'https://xn--pypal-4ve.com/']) {
      const finding = checkLookalikeHost(hostOf(url));
      assert.equal(finding?.verdict, 'warn', url);
      assert.match(finding!.reason, /mixes Latin and Cyrillic|mixes Cyrillic and Latin/);
    }
  });

  test('whole-script look-alikes of Latin names warn and say what they imitate', () => {
    const apple = checkLookalikeHost(hostOf('https://аррӏе.com/'));
    assert.equal(apple?.verdict, 'warn');
    assert.match(apple!.reason, /Cyrillic letters that read as the Latin "apple"/);
    assert.match(checkLookalikeHost(hostOf('https://οχο.com/'))!.reason, /Greek/);
  });

  test('Latin look-alike letters and hidden dots warn', () => {
    assert.match(checkLookalikeHost(hostOf('https://gıthub.com/'))!.reason, /"ı", which passes for "i"/);
    assert.match(checkLookalikeHost(hostOf('https://gọogle.com/'))!.reason, /dot below/);
  });

  test('scripts are detected per character; digits and hyphens belong to none', () => {
    assert.deepEqual(getLabelScripts('abc-123'), ['Latin']);
    assert.deepEqual(getLabelScripts('pаypal'), ['Latin', 'Cyrillic']);
  });
});
