// A link switched to its destination's archived copy, in the pure parts of the redirect: the policy's answer (page
// or 302, its precedence among the other answers), the serving record's encoding (unchanged for every other link),
// the positional projection from Postgres, the page, and what Bitly is told.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decideRedirect, type RedirectSettings } from '../../../lib/redirect/redirect_policy.ts';
import {
  type ServingRecord,
  type ServingValues,
  servingRecordFromValues,
  servingRecordSchema,
  toServingRecord,
} from '../../../lib/redirect/serving_record.ts';
import { decodeServingRecord, encodeServingRecord } from '../../../lib/redirect/serving_store.ts';
import type { LinkRow } from '../../../lib/stores/link_rows.ts';
import { toVendorTarget } from '../../../lib/vendors/vendor_target.ts';
import { redirectPages } from '../../../routes/redirect.tsx';

const NOW = Date.UTC(2026, 11, 2, 9, 0, 0);
const COPY = 'https://web.archive.org/web/20250101000000/https://elsewhere.example/story';
const SETTINGS: RedirectSettings = {
  status: 301,
  cacheControl: 'private, max-age=90',
  utmParams: 'utm_source=s',
};

function record(overrides: Partial<ServingRecord> = {}): ServingRecord {
  return {
    code: 'Ab3_x',
    url: 'https://elsewhere.example/story',
    status: 'active',
    safety: 'clean',
    redirectStatus: null,
    expiresAt: null,
    expiredUrl: null,
    version: 3,
    ...overrides,
  };
}

describe('the redirect policy', () => {
  test('a fallback answers our page with the copy and the original URL, never cacheable', () => {
    const decision = decideRedirect('Ab3_x', record({ fallbackUrl: COPY }), NOW, SETTINGS);
    assert.deepEqual(decision, {
      status: 200,
      outcome: 'archived',
      cacheControl: 'no-store',
      page: {
        kind: 'archived',
        code: 'Ab3_x',
        destination: COPY,
        original: 'https://elsewhere.example/story',
      },
    });
    const withQuery = decideRedirect('Ab3_x', record({ fallbackUrl: COPY }), NOW, SETTINGS, 'qr=1');
    assert.equal(withQuery.cacheControl, 'no-store');
  });

  test('DEAD_FALLBACK_ANSWER=redirect: a 302 to the copy, without our UTM values', () => {
    const decision = decideRedirect('Ab3_x', record({ fallbackUrl: COPY }), NOW, {
      ...SETTINGS,
      fallbackAnswer: 'redirect',
    });
    assert.deepEqual(decision, {
      status: 302,
      outcome: 'archived',
      cacheControl: 'no-store',
      location: COPY,
    });
  });

  test('blocked, gone and expired still win over a fallback; without one the answer is unchanged', () => {
    assert.equal(
      decideRedirect('Ab3_x', record({ fallbackUrl: COPY, safety: 'blocked' }), NOW, SETTINGS).status,
      451,
    );
    assert.equal(
      decideRedirect('Ab3_x', record({ fallbackUrl: COPY, status: 'gone' }), NOW, SETTINGS).status,
      410,
    );
    assert.equal(
      decideRedirect('Ab3_x', record({ fallbackUrl: COPY, expiresAt: NOW - 1 }), NOW, SETTINGS).outcome,
      'expired',
    );
    assert.deepEqual(decideRedirect('Ab3_x', record(), NOW, SETTINGS), {
      status: 301,
      outcome: 'redirect',
      cacheControl: 'private, max-age=90',
      location: 'https://elsewhere.example/story?utm_source=s',
    });
  });

  test('the page names the copy as the way on and the original as text', () => {
    const decision = decideRedirect('Ab3_x', record({ fallbackUrl: COPY }), NOW, SETTINGS);
    const html = redirectPages.status(decision.page!);
    assert.match(html, /This page is no longer available at its source/);
    assert.ok(html.includes(`href="${COPY}"`));
    assert.ok(html.includes('<code>https://elsewhere.example/story</code>'));
    assert.ok(!html.includes('href="https://elsewhere.example/story"'), 'no link to the dead page');
  });
});

describe('the serving record', () => {
  test('a record without a fallback encodes exactly as before; one with it round-trips, with or without UTM', () => {
    assert.equal(
      encodeServingRecord(record()),
      '3|["https://elsewhere.example/story","active","clean",null,null,null]',
    );
    for (const r of [record({ fallbackUrl: COPY }), record({ fallbackUrl: COPY, utm: { campaign: 'c' } })]) {
      const decoded = decodeServingRecord('Ab3_x', encodeServingRecord(r));
      assert.deepEqual(decoded, r);
      assert.deepEqual(servingRecordSchema.parse(decoded), r);
    }
    assert.equal(
      decodeServingRecord('Ab3_x', `3|["u","active","clean",null,null,null,null,"${'x'.repeat(2049)}"]`),
      null,
    );
    assert.equal(decodeServingRecord('Ab3_x', '3|["u","active","clean",null,null,null,null,5]'), null);
  });

  test("Postgres's positional row gives the same record as the named one", () => {
    const values: ServingValues = [
      'https://elsewhere.example/story',
      'active',
      'clean',
      null,
      null,
      null,
      'c',
      null,
      null,
      3,
      COPY,
      null,
    ];
    const fromValues = servingRecordFromValues('Ab3_x', values);
    assert.deepEqual(fromValues, record({ fallbackUrl: COPY, utm: { campaign: 'c' } }));
    assert.deepEqual(
      servingRecordFromValues('Ab3_x', [...values.slice(0, 10), null, null] as unknown as ServingValues),
      record({ utm: { campaign: 'c' } }),
    );
    assert.equal('fallbackUrl' in toServingRecord(linkRow({ fallbackUrl: null })), false);
  });

  test('Bitly is pointed at our preview page while the fallback lasts (not archived)', () => {
    const target = toVendorTarget(
      linkRow({ fallbackUrl: COPY }),
      { ...SETTINGS, shortBaseUrl: 'https://sho.rt' },
      NOW,
    );
    assert.deepEqual(target, { longUrl: 'https://sho.rt/Ab3_x+', archived: false });
  });
});

function linkRow(overrides: Partial<LinkRow>): LinkRow {
  return {
    code: 'Ab3_x',
    domain: '',
    targetUrl: 'https://elsewhere.example/story',
    status: 'active',
    safety: 'clean',
    safetyReason: null,
    safetyCheckedAt: null,
    origin: 'api',
    site: null,
    postId: null,
    title: null,
    owner: 'apikey:1',
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
    version: 3,
    fallbackUrl: null,
    routingRules: null,
    ...overrides,
  };
}
