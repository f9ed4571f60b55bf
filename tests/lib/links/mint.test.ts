import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CODE_ALPHABET } from '../../../lib/config.ts';
import { isPossibleCode } from '../../../lib/links/link.ts';
import { mintCode } from '../../../lib/links/mint.ts';

describe('mintCode', () => {
  test('draws codes of the configured length from the 64-letter alphabet, never reserved or _-prefixed', () => {
    for (const length of [5, 6, 12]) {
      for (let i = 0; i < 2000; i++) {
        const code = mintCode(length);
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
    for (let i = 0; i < n; i++) for (const ch of mintCode(6)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
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
    ]) {
      assert.equal(isPossibleCode(code), false, code);
    }
    for (const code of ['a', 'Abc-_9', 'x'.repeat(64)]) assert.equal(isPossibleCode(code), true, code);
  });
});
