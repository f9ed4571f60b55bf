import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LinkRow } from '../../../lib/stores/link_rows.ts';
import { toVendorTarget } from '../../../lib/vendors/vendor_target.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const settings = {
  status: 301,
  cacheControl: 'private, max-age=90',
  utmParams: 'utm_source=short',
  shortBaseUrl: 'https://sho.rt',
};

function row(overrides: Partial<LinkRow> = {}): LinkRow {
  return {
    code: 'Ab3xY0',
    domain: '',
    targetUrl: 'https://news.example/%d8%b9/?a=1',
    status: 'active',
    safety: 'unknown',
    safetyReason: null,
    safetyCheckedAt: null,
    origin: 'wordpress',
    site: 'news',
    postId: 1,
    title: null,
    owner: 'wordpress:news',
    expiresAt: null,
    expiredUrl: null,
    redirectStatus: null,
    tags: [],
    utmCampaign: null,
    utmSource: null,
    utmMedium: null,
    dedupeKey: null,
    sourceVersion: null,
    deletedAt: null,
    createdAt: new Date(NOW),
    updatedAt: new Date(NOW),
    version: 1,
    fallbackUrl: null,
    routingRules: null,
    ...overrides,
  };
}

describe('toVendorTarget: a vendor copy answers what our resolver answers', () => {
  test('active and pending links: our Location, UTM markers included, byte-exact percent-encoding', () => {
    const expected = { longUrl: 'https://news.example/%d8%b9/?a=1&utm_source=short', archived: false };
    assert.deepEqual(toVendorTarget(row(), settings, NOW), expected);
    assert.deepEqual(toVendorTarget(row({ status: 'pending' }), settings, NOW), expected);
  });

  test("the link's own UTM values reach the vendor copy, winning over UTM_PARAMS, never over the target's", () => {
    assert.deepEqual(
      toVendorTarget(row({ utmSource: 'newsletter', utmCampaign: 'حملة' }), settings, NOW).longUrl,
      'https://news.example/%d8%b9/?a=1&utm_campaign=%D8%AD%D9%85%D9%84%D8%A9&utm_source=newsletter',
    );
    assert.deepEqual(
      toVendorTarget(
        row({ targetUrl: 'https://news.example/?utm_source=own', utmSource: 'x' }),
        settings,
        NOW,
      ).longUrl,
      'https://news.example/?utm_source=own',
    );
  });

  test('gone, deleted and expired-without-fallback lead to our gone page, archived; expired with a fallback points at it', () => {
    // Bitly cannot answer 410 and an archived bitlink may still redirect: while Bitly fronts the short domain,
    // its copy must not send readers to an unpublished article.
    const gonePage = { longUrl: 'https://sho.rt/Ab3xY0+', archived: true };
    assert.deepEqual(toVendorTarget(row({ status: 'gone' }), settings, NOW), gonePage);
    assert.deepEqual(
      toVendorTarget(row({ deletedAt: new Date(NOW), status: 'gone' }), settings, NOW),
      gonePage,
    );
    assert.deepEqual(toVendorTarget(row({ expiresAt: new Date(NOW - 1) }), settings, NOW), gonePage);
    assert.deepEqual(toVendorTarget(row({ status: 'expired' }), settings, NOW), gonePage);
    assert.deepEqual(
      toVendorTarget(row({ status: 'expired', expiredUrl: 'https://news.example/archive' }), settings, NOW),
      { longUrl: 'https://news.example/archive', archived: false },
    );
  });

  test('blocked and warned links never send a vendor reader to the target: our preview page instead', () => {
    assert.deepEqual(toVendorTarget(row({ status: 'blocked' }), settings, NOW), {
      longUrl: 'https://sho.rt/Ab3xY0+',
      archived: true,
    });
    assert.deepEqual(toVendorTarget(row({ safety: 'blocked' }), settings, NOW), {
      longUrl: 'https://sho.rt/Ab3xY0+',
      archived: true,
    });
    assert.deepEqual(toVendorTarget(row({ safety: 'warn' }), settings, NOW), {
      longUrl: 'https://sho.rt/Ab3xY0+',
      archived: false,
    });
  });
});
