// The redirect policy alone (lib/redirect/redirect_policy.ts) and the headers the answerer renders from it:
// every state, status and header, with no HTTP, database or cache in between.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type RedirectPages, toRedirectAnswer } from '../../../lib/redirect/answer_redirect.ts';
import {
  appendLinkUtm,
  appendUtmParams,
  decideRedirect,
  FORWARDED_VALUE_MAX_LENGTH,
  forwardedQuery,
  type RedirectSettings,
  toLocation,
} from '../../../lib/redirect/redirect_policy.ts';
import type { ServingRecord } from '../../../lib/redirect/serving_record.ts';
import { activeRecord } from '../../helpers/serving_records.ts';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const SETTINGS: RedirectSettings = {
  status: 301,
  cacheControl: 'private, max-age=90',
  utmParams: undefined,
  forwardQueryParams: [],
};

function record(overrides: Partial<ServingRecord> = {}): ServingRecord {
  return activeRecord('Ab3_x', 'https://news.example/2026/story/', overrides);
}

const decide = (r: ServingRecord | null, settings: Partial<RedirectSettings> = {}, query = '') =>
  decideRedirect('Ab3_x', r, NOW, { ...SETTINGS, ...settings }, query);

const pages: RedirectPages = {
  status: (page) => `<page kind="${page.kind}" destination="${page.destination ?? ''}">`,
  preview: () => '<preview>',
};

describe('decideRedirect: every state', () => {
  test('active and clean (or not yet scanned): the deployment status, its Cache-Control, the stored target', () => {
    for (const safety of ['clean', 'unknown'] as const) {
      assert.deepEqual(decide(record({ safety })), {
        status: 301,
        outcome: 'redirect',
        cacheControl: 'private, max-age=90',
        location: 'https://news.example/2026/story/',
      });
    }
  });

  test('each redirect status: the deployment default, overridden per link', () => {
    for (const status of [301, 302, 307, 308]) {
      assert.equal(decide(record(), { status }).status, status);
      assert.equal(decide(record({ redirectStatus: status }), { status: 301 }).status, status);
    }
  });

  test('unknown and pending links are 404 pages, briefly cacheable at the edge', () => {
    for (const r of [null, record({ status: 'pending' })]) {
      assert.deepEqual(decide(r), {
        status: 404,
        outcome: 'not_found',
        cacheControl: 'public, max-age=60',
        page: { kind: 'not_found', code: 'Ab3_x' },
      });
    }
  });

  test('gone is 410, cacheable for five minutes', () => {
    assert.deepEqual(decide(record({ status: 'gone' })), {
      status: 410,
      outcome: 'gone',
      cacheControl: 'public, max-age=300',
      page: { kind: 'gone', code: 'Ab3_x' },
    });
  });

  test('blocked (by status or by verdict) is 451, never cached, never naming the destination', () => {
    for (const r of [
      record({ status: 'blocked' }),
      record({ safety: 'blocked' }),
      record({ status: 'gone', safety: 'blocked' }),
    ]) {
      const d = decide(r);
      assert.deepEqual(d, {
        status: 451,
        outcome: 'blocked',
        cacheControl: 'no-store',
        page: { kind: 'blocked', code: 'Ab3_x' },
      });
    }
  });

  test('expired by status or by time: 302 to the fallback when there is one, else a 410 page', () => {
    const fallback = 'https://news.example/archive/';
    for (const r of [
      record({ status: 'expired' }),
      record({ expiresAt: NOW }),
      record({ expiresAt: NOW - 1 }),
    ]) {
      assert.deepEqual(decide(r), {
        status: 410,
        outcome: 'expired',
        cacheControl: 'no-store',
        page: { kind: 'expired', code: 'Ab3_x' },
      });
      assert.deepEqual(decide({ ...r, expiredUrl: fallback }), {
        status: 302,
        outcome: 'expired',
        cacheControl: 'no-store',
        location: fallback,
      });
    }
  });

  test('an expiring link is never cached past its expiry', () => {
    assert.equal(decide(record({ expiresAt: NOW + 30_500 })).cacheControl, 'private, max-age=30');
    assert.equal(decide(record({ expiresAt: NOW + 3_600_000 })).cacheControl, 'private, max-age=90');
    assert.equal(decide(record({ expiresAt: NOW + 999 })).cacheControl, 'private, max-age=0');
  });

  test('warn is a 200 interstitial naming the destination (UTM included), never cached', () => {
    assert.deepEqual(decide(record({ safety: 'warn' }), { utmParams: 'utm_source=short' }), {
      status: 200,
      outcome: 'warn',
      cacheControl: 'no-store',
      page: { kind: 'warn', code: 'Ab3_x', destination: 'https://news.example/2026/story/?utm_source=short' },
    });
  });

  test('the order of precedence: blocked before gone before expired before warn', () => {
    assert.equal(decide(record({ status: 'gone', safety: 'blocked' })).status, 451);
    assert.equal(decide(record({ status: 'gone', expiresAt: NOW - 1 })).status, 410);
    assert.equal(decide(record({ status: 'gone', expiresAt: NOW - 1 })).outcome, 'gone');
    assert.equal(decide(record({ safety: 'warn', expiresAt: NOW - 1 })).outcome, 'expired');
  });
});

describe('Location', () => {
  test('UTM markers are appended before the fragment and never replace a key already present', () => {
    const utm = 'utm_source=short&utm_medium=social';
    assert.equal(
      appendUtmParams('https://a.example/x', utm),
      'https://a.example/x?utm_source=short&utm_medium=social',
    );
    assert.equal(
      appendUtmParams('https://a.example/x?a=1#top', utm),
      'https://a.example/x?a=1&utm_source=short&utm_medium=social#top',
    );
    assert.equal(
      appendUtmParams('https://a.example/x?utm_source=paper', utm),
      'https://a.example/x?utm_source=paper&utm_medium=social',
    );
    assert.equal(
      appendUtmParams('https://a.example/x?', utm),
      'https://a.example/x?utm_source=short&utm_medium=social',
    );
    assert.equal(appendUtmParams('https://a.example/x', undefined), 'https://a.example/x');
  });

  test("a link's own UTM values: appended in a fixed order, UTF-8 percent-encoded, never replacing the target's", () => {
    const utm = { campaign: 'spring sale', source: 'newsletter', medium: 'email' };
    assert.equal(
      appendLinkUtm('https://a.example/x#top', utm),
      'https://a.example/x?utm_campaign=spring%20sale&utm_source=newsletter&utm_medium=email#top',
    );
    assert.equal(
      appendLinkUtm('https://a.example/x?utm_medium=print&a=1', utm),
      'https://a.example/x?utm_medium=print&a=1&utm_campaign=spring%20sale&utm_source=newsletter',
    );
    assert.equal(
      appendLinkUtm('https://a.example/x', { campaign: 'انتخابات' }),
      'https://a.example/x?utm_campaign=%D8%A7%D9%86%D8%AA%D8%AE%D8%A7%D8%A8%D8%A7%D8%AA',
    );
    assert.equal(appendLinkUtm('https://a.example/x', undefined), 'https://a.example/x');
    assert.equal(appendLinkUtm('https://a.example/x', {}), 'https://a.example/x');
  });

  test('precedence: the target, then forwarded parameters, then the link, then UTM_PARAMS', () => {
    const settings = {
      utmParams: 'utm_source=short&utm_medium=social&utm_term=all',
      forwardQueryParams: ['utm_campaign'],
    };
    // The link's own values win over UTM_PARAMS for the same key; the deployment still adds the rest.
    assert.equal(
      decide(record({ utm: { source: 'newsletter', campaign: 'c1' } }), settings).location,
      'https://news.example/2026/story/?utm_campaign=c1&utm_source=newsletter&utm_medium=social&utm_term=all',
    );
    // A forwarded request parameter wins over the link's value; the target's own key wins over everything.
    assert.equal(
      decide(
        record({ url: 'https://news.example/?utm_medium=print', utm: { campaign: 'c1', medium: 'email' } }),
        settings,
        'utm_campaign=from-request',
      ).location,
      'https://news.example/?utm_medium=print&utm_campaign=from-request&utm_source=short&utm_term=all',
    );
    // The warn page names the same destination; an expired link's fallback gets no UTM at all.
    assert.equal(
      decide(record({ safety: 'warn', utm: { campaign: 'c1' } }), settings).page?.destination,
      'https://news.example/2026/story/?utm_campaign=c1&utm_source=short&utm_medium=social&utm_term=all',
    );
    assert.equal(
      decide(
        record({ status: 'expired', expiredUrl: 'https://news.example/archive', utm: { campaign: 'c1' } }),
      ).location,
      'https://news.example/archive',
    );
  });

  test('ASCII targets are byte-exact; non-ASCII is punycoded (host) or percent-encoded once (the rest)', () => {
    const permalink = 'https://news.example/%d8%a7%d9%84%d8%b9/?a=%2F&b=%ZZ';
    assert.equal(toLocation(permalink), permalink);
    assert.equal(
      toLocation('https://例え.jp/パス?q=値'),
      'https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9?q=%E5%80%A4',
    );
    assert.equal(
      toLocation('https://a.example/already%20encoded/é'),
      'https://a.example/already%20encoded/%C3%A9',
    );
  });

  test('forwarded query parameters: only the allowed ones, first value, re-encoded, never the QR marker', () => {
    const allowed = ['ref', 'id'];
    assert.equal(forwardedQuery('ref=tw&x=1&ref=fb&qr=1&id=%2F%2Fevil', allowed), 'ref=tw&id=%2F%2Fevil');
    assert.equal(forwardedQuery('ref=%E0%A4%A', allowed), '');
    assert.equal(forwardedQuery(`ref=${'a'.repeat(FORWARDED_VALUE_MAX_LENGTH + 1)}`, allowed), '');
    const d = decide(record(), { forwardQueryParams: allowed }, 'ref=tw#frag');
    assert.equal(d.location, 'https://news.example/2026/story/?ref=tw%23frag');
  });
});

describe('toRedirectAnswer: the headers of each answer', () => {
  test('a redirect: status, Location, Cache-Control, noindex, Referrer-Policy; no body, GET or HEAD', () => {
    for (const method of ['GET', 'HEAD']) {
      assert.deepEqual(toRedirectAnswer(decide(record()), method, pages), {
        status: 301,
        headers: {
          'Cache-Control': 'private, max-age=90',
          'X-Robots-Tag': 'noindex',
          'Referrer-Policy': 'strict-origin-when-cross-origin',
          Location: 'https://news.example/2026/story/',
        },
        body: null,
        headerList: [
          'Cache-Control',
          'private, max-age=90',
          'X-Robots-Tag',
          'noindex',
          'Referrer-Policy',
          'strict-origin-when-cross-origin',
          'Location',
          'https://news.example/2026/story/',
        ],
      });
    }
  });

  test("a redirect's headerList is its headers in order, with HSTS on https too", () => {
    for (const https of [false, true]) {
      for (const r of [
        record(),
        record({ redirectStatus: 307 }),
        record({ status: 'expired', expiredUrl: 'https://news.example/f' }),
      ]) {
        const answer = toRedirectAnswer(decide(r), 'GET', pages, https);
        if (answer.headers.Location === undefined) continue;
        assert.deepEqual(answer.headerList, Object.entries(answer.headers).flat());
        assert.equal(answer.headers['Strict-Transport-Security'] !== undefined, https);
      }
    }
  });

  test('a page (404, 410, 451, expired, warn): HTML with a CSP; HEAD has the headers without the body', () => {
    const cases: [ServingRecord | null, number, string][] = [
      [null, 404, 'not_found'],
      [record({ status: 'gone' }), 410, 'gone'],
      [record({ status: 'blocked' }), 451, 'blocked'],
      [record({ status: 'expired' }), 410, 'expired'],
      [record({ safety: 'warn' }), 200, 'warn'],
    ];
    for (const [r, status, kind] of cases) {
      const get = toRedirectAnswer(decide(r), 'GET', pages);
      assert.equal(get.status, status);
      assert.equal(get.headers['Content-Type'], 'text/html; charset=utf-8');
      assert.match(get.headers['Content-Security-Policy']!, /default-src 'none'/);
      assert.equal(get.headers['X-Robots-Tag'], 'noindex');
      assert.equal(get.headers.Location, undefined);
      assert.match(get.body!, new RegExp(`kind="${kind}"`));
      const head = toRedirectAnswer(decide(r), 'HEAD', pages);
      assert.deepEqual(head.headers, get.headers);
      assert.equal(head.body, null);
    }
  });
});
