import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { toDisplayUrl } from '../../../lib/links/display_url.ts';

/** Percent-encodes every byte of a UTF-8 string the way WordPress writes slugs (lower case). */
const wp = (s: string) =>
  [...new TextEncoder().encode(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

describe('toDisplayUrl', () => {
  test('Arabic: a WordPress permalink (lower-case escapes) reads as Arabic, the rest untouched', () => {
    const slug = 'الحرب-في-غزة';
    assert.equal(
      toDisplayUrl(`https://news.example/2026/11/${wp('الحرب')}-${wp('في')}-${wp('غزة')}/`),
      `https://news.example/2026/11/${slug}/`,
    );
    // Upper-case escapes, harakat and tatweel decode the same way.
    assert.equal(
      toDisplayUrl(`https://news.example/${wp('مُحَمَّد').toUpperCase()}`),
      'https://news.example/مُحَمَّد',
    );
    assert.equal(toDisplayUrl(`https://news.example/${wp('عـــاجل')}`), 'https://news.example/عـــاجل');
  });

  test('Hebrew, mixed Arabic and Latin, the query and the fragment', () => {
    assert.equal(toDisplayUrl(`https://news.example/${wp('שלום')}`), 'https://news.example/שלום');
    assert.equal(
      toDisplayUrl(
        `https://news.example/2026/${wp('غزة')}-gaza-${wp('تقرير')}?ref=${wp('عربي')}&x=1#${wp('فقرة')}`,
      ),
      'https://news.example/2026/غزة-gaza-تقرير?ref=عربي&x=1#فقرة',
    );
    assert.equal(
      toDisplayUrl(`https://news.example/caf%C3%A9-${wp('日本')}`),
      'https://news.example/café-日本',
    );
  });

  test('escaped ASCII stays escaped: no new path separator, query, fragment, percent or space', () => {
    for (const url of [
      'https://news.example/a%2Fb',
      'https://news.example/a%2fb',
      'https://news.example/a%3Fq=1',
      'https://news.example/a%23top',
      'https://news.example/100%25_off',
      'https://news.example/two%20words',
      'https://news.example/?a=1%26b%3D2',
      'https://news.example/%41%42',
    ]) {
      assert.equal(toDisplayUrl(url), url);
    }
    // Even in the middle of an Arabic run.
    assert.equal(
      toDisplayUrl(`https://news.example/${wp('غزة')}%2F${wp('رفح')}`),
      'https://news.example/غزة%2Fرفح',
    );
  });

  test('invalid escapes are kept exactly as written', () => {
    for (const url of [
      'https://news.example/%zz',
      'https://news.example/50%',
      'https://news.example/%d8', // truncated sequence
      'https://news.example/%d8%41', // a lead byte followed by ASCII
      'https://news.example/%C0%AF', // overlong "/"
      'https://news.example/%E0%80%AF', // overlong "/"
      'https://news.example/%ED%A0%80', // a UTF-16 surrogate
      'https://news.example/%F4%90%80%80', // above U+10FFFF
      'https://news.example/%FF%FE',
      'https://news.example/%80',
    ]) {
      assert.equal(toDisplayUrl(url), url);
    }
    // A valid sequence beside an invalid one: the valid one decodes, the other stays.
    assert.equal(toDisplayUrl('https://news.example/%d8%a7%d8'), 'https://news.example/ا%d8');
    assert.equal(toDisplayUrl('https://news.example/%ff%d8%a7'), 'https://news.example/%ffا');
  });

  test('characters that reorder, hide or fake text stay escaped (and are escaped when stored raw)', () => {
    for (const [name, ch] of [
      ['RIGHT-TO-LEFT OVERRIDE', '\u202e'],
      ['RIGHT-TO-LEFT ISOLATE', '\u2067'],
      ['RIGHT-TO-LEFT MARK', '\u200f'],
      ['ARABIC LETTER MARK', '\u061c'],
      ['ZERO WIDTH JOINER', '\u200d'],
      ['ZERO WIDTH SPACE', '\u200b'],
      ['NO-BREAK SPACE', '\u00a0'],
      ['IDEOGRAPHIC SPACE', '\u3000'],
      ['SOFT HYPHEN', '\u00ad'],
      ['BYTE ORDER MARK', '\ufeff'],
      ['HANGUL FILLER', '\u3164'],
      ['VARIATION SELECTOR-16', '\ufe0f'],
      ['C1 control', '\u0085'],
      ['FULLWIDTH SOLIDUS', '\uff0f'],
      ['DIVISION SLASH', '\u2215'],
      ['FRACTION SLASH', '\u2044'],
      ['IDEOGRAPHIC FULL STOP', '\u3002'],
      ['REPLACEMENT CHARACTER', '\ufffd'],
      ['private use', '\ue000'],
      ['LOCK', '\u{1f512}'],
    ] as const) {
      const escaped = wp(ch).toUpperCase();
      assert.equal(
        toDisplayUrl(`https://news.example/a${wp(ch)}b`),
        `https://news.example/a${wp(ch)}b`,
        name,
      );
      assert.equal(toDisplayUrl(`https://news.example/a${ch}b`), `https://news.example/a${escaped}b`, name);
    }
    // A combining mark on ASCII (it would disguise a delimiter) stays escaped; on an Arabic letter it shows.
    assert.equal(toDisplayUrl('https://news.example/%CC%81x'), 'https://news.example/%CC%81x');
    assert.equal(toDisplayUrl('https://news.example/a/%CC%B8'), 'https://news.example/a/%CC%B8');
    assert.equal(toDisplayUrl(`https://news.example/${wp('بَ')}`), 'https://news.example/بَ');
  });

  test('punycode hosts show in Unicode unless they imitate another host', () => {
    assert.equal(toDisplayUrl('https://xn--mnchen-3ya.de/'), 'https://münchen.de/');
    assert.equal(toDisplayUrl('https://xn--mgbh0fb.xn--kgbechtv/x'), 'https://مثال.إختبار/x');
    assert.equal(toDisplayUrl('https://XN--MNCHEN-3YA.de:8443/a'), 'https://münchen.de:8443/a');
    // Cyrillic letters that read as "apple", Latin mixed with Cyrillic, a dotless i: kept in punycode.
    assert.equal(toDisplayUrl('https://xn--80ak6aa92e.com/'), 'https://xn--80ak6aa92e.com/');
    assert.equal(toDisplayUrl('https://xn--pypal-4ve.com/'), 'https://xn--pypal-4ve.com/');
    assert.equal(toDisplayUrl('https://xn--ggle-55da.com/'), 'https://xn--ggle-55da.com/');
    assert.equal(toDisplayUrl('https://xn--gthub-n4a.com/'), 'https://xn--gthub-n4a.com/');
    // Stored in Unicode but a look-alike: shown in punycode, which is what the URL says.
    assert.equal(toDisplayUrl('https://аррӏе.com/'), 'https://xn--80ak6aa92e.com/');
    // Broken punycode stays as written.
    assert.equal(toDisplayUrl('https://xn--a-ecp.xn--zz!!/'), 'https://xn--a-ecp.xn--zz!!/');
    // IPv6 literals and ports are left alone.
    assert.equal(toDisplayUrl(`http://[::1]:8080/${wp('ا')}`), 'http://[::1]:8080/ا');
  });

  test('never changes an ASCII-only URL without escapes, and never throws', () => {
    assert.equal(
      toDisplayUrl('https://news.example/2026/11/story?utm_source=x#top'),
      'https://news.example/2026/11/story?utm_source=x#top',
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const shown = toDisplayUrl(s);
        assert.equal(typeof shown, 'string');
      }),
      { numRuns: 2000 },
    );
    // Decoding then re-encoding what was decoded gives back the stored URL's meaning: every decoded
    // character, percent-encoded again, yields the same bytes (case of hex digits aside).
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom('a', '-', '/', '%2F'), fc.string({ unit: 'grapheme' }))),
        (parts) => {
          const url = `https://news.example/${parts.map((p) => (p === '%2F' ? p : wp(p))).join('')}`;
          const shown = toDisplayUrl(url);
          const reEncoded = shown.replace(/\P{ASCII}/gu, (ch) => wp(ch));
          assert.equal(
            decodeURIComponentSafe(reEncoded.toLowerCase()),
            decodeURIComponentSafe(url.toLowerCase()),
          );
        },
      ),
      { numRuns: 1000 },
    );
  });
});

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
