import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isPossibleCode } from '../../../lib/codes/code_rules.ts';
import { randomCode } from '../../../lib/links/mint.ts';
import { CODE_ALPHABET } from '../../../lib/shared/config.ts';

describe('randomCode', () => {
  test('draws codes of the configured length from the 64-letter alphabet, never reserved or _-prefixed', () => {
    for (const length of [5, 6, 12]) {
      for (let i = 0; i < 2000; i++) {
        const code = randomCode(length);
        assert.equal(code.length, length);
        assert.ok(isPossibleCode(code), code);
        assert.ok(!code.startsWith('_'));
        for (const ch of code) assert.ok(CODE_ALPHABET.includes(ch));
      }
    }
  });

  test('is uniform enough: every letter appears, none dominates', () => {
    const counts = new Map<string, number>();
    const n = 20_000;
    for (let i = 0; i < n; i++) for (const ch of randomCode(6)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    assert.equal(counts.size, 64);
    const expected = (n * 6) / 64;
    for (const [ch, c] of counts) {
      if (ch === '_') continue; // slightly rarer: never first
      assert.ok(Math.abs(c - expected) < expected * 0.15, `${ch}: ${c} vs ${expected}`);
    }
  });
});

describe('isPossibleCode', () => {
  test('rejects what can never be a code', () => {
    for (const code of [
      '',
      'a'.repeat(65),
      'a/b',
      'a.b',
      'ab+',
      '%2F',
      '_x',
      'api',
      'API',
      'healthz',
      'ui',
      'ﾑa',
      'Well-Known',
      'ADMIN',
    ]) {
      assert.equal(isPossibleCode(code), false, code);
    }
    for (const code of ['a', 'Abc-_9', 'x'.repeat(64), 'api1', 'ap_i', 'livez2', 'well-known-x'])
      assert.equal(isPossibleCode(code), true, code);
  });

  test('agrees with its definition (charset regex, length, reserved words, `_` prefix) on random strings', () => {
    const definition = (code: string) =>
      /^[A-Za-z0-9_-]{1,64}$/.test(code) &&
      !code.startsWith('_') &&
      !['api', 'ui', 'healthz', 'metrics', 'static', 'assets', 'admin', 'login', 'logout', 'docs', 'openapi']
        .concat(['robots', 'favicon', 'well-known'])
        .includes(code.toLowerCase());
    // Every character next to a range boundary of the charset, plus reserved words in mixed case.
    const pool = [...'/09:@AZ[`az{-_.+%~ \u0000\u00e9\uff11'];
    const words = ['Well-Known', 'METRICS', 'robots', 'Favicon', 'docs'];
    for (let i = 0; i < 5000; i++) {
      let code = i % 10 === 0 ? words[i % words.length]! : '';
      const length = Math.floor(Math.random() * (i % 50 === 0 ? 70 : 8));
      for (let j = 0; j < length; j++) code += pool[Math.floor(Math.random() * pool.length)];
      assert.equal(isPossibleCode(code), definition(code), JSON.stringify(code));
    }
    for (const word of words) assert.equal(isPossibleCode(word), false, word);
  });
});
