// Routing rules in the pure parts of the redirect (ADR 0080): which rule a request matches (first match wins,
// Accept-Language q-values, the device table, the country header), the routed decision (Vary, never
// shared-cacheable, the rule's target under the link's own UTM and status), the serving record's encodings (a
// link without rules unchanged), the link model's schema, and what Bitly and the static snapshot are given.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { findRestoreRowProblem } from '../../../lib/escrow/restore_rows.ts';
import { routingRulesSchema } from '../../../lib/links/routing_rules.ts';
import {
  decideRedirect,
  decideRoutedRedirect,
  type RedirectSettings,
} from '../../../lib/redirect/redirect_policy.ts';
import { createRecordAdmission } from '../../../lib/redirect/resolver_cache.ts';
import {
  chooseRoute,
  deviceOf,
  NEEDS_COUNTRY,
  NEEDS_DEVICE,
  NEEDS_LANGUAGE,
  preferredLanguage,
  readRouteVariant,
  routeCountryOf,
  routeNeeds,
  routeVariantKey,
  varyFor,
} from '../../../lib/redirect/route_choice.ts';
import {
  type ServingRecord,
  type ServingValues,
  servingRecordFromValues,
  servingRecordSchema,
  toServingRecord,
} from '../../../lib/redirect/serving_record.ts';
import { decodeServingRecord, encodeServingRecord } from '../../../lib/redirect/serving_store.ts';
import { createKvWriter } from '../../../lib/snapshot/kv_snapshot.ts';
import { createNginxWriter } from '../../../lib/snapshot/nginx_snapshot.ts';
import { createRedirectsWriter } from '../../../lib/snapshot/redirects_snapshot.ts';
import { toStaticAnswer } from '../../../lib/snapshot/static_answer.ts';
import type { LinkRow, RoutingRule } from '../../../lib/stores/link_rows.ts';
import type { CanonicalTargetPolicy } from '../../../lib/targets/target_rule.ts';
import { toVendorTarget } from '../../../lib/vendors/vendor_target.ts';

const NOW = Date.UTC(2026, 11, 2, 9, 0, 0);
const SETTINGS: RedirectSettings = {
  status: 301,
  cacheControl: 'public, max-age=300, s-maxage=600',
  utmParams: 'utm_source=print',
};
const AR = 'https://news.example/ar/story';
const IOS = 'https://apps.example/ios';
const EG = 'https://news.example/eg/story';
const RULES: RoutingRule[] = [
  { kind: 'language', values: ['ar', 'fa'], target: AR },
  { kind: 'device', values: ['ios'], target: IOS },
  { kind: 'country', values: ['EG'], target: EG },
];

function record(overrides: Partial<ServingRecord> = {}): ServingRecord & { rules: RoutingRule[] } {
  return {
    code: 'Rt9_a',
    url: 'https://news.example/en/story',
    status: 'active',
    safety: 'clean',
    redirectStatus: null,
    expiresAt: null,
    expiredUrl: null,
    version: 4,
    rules: RULES,
    ...overrides,
  } as ServingRecord & { rules: RoutingRule[] };
}

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
const IPAD_APP =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS]';
const ANDROID =
  'Mozilla/5.0 (Linux; Android 15; Pixel 9) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';
const MAC_SAFARI =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15';
const WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:140.0) Gecko/20100101 Firefox/140.0';

describe('which rule a request matches', () => {
  test('Accept-Language: the primary tag of the highest q wins; ties go to the first; * and q=0 never', () => {
    const table: [string | undefined, string][] = [
      ['ar-EG,ar;q=0.9,en;q=0.8', 'ar'],
      ['en-US,en;q=0.9,ar;q=0.95', 'en'],
      ['en-US;q=0.8,en;q=0.7,ar;q=0.95', 'ar'],
      ['en;q=0.5, fr;q=0.5', 'en'],
      ['AR', 'ar'],
      ['*', ''],
      ['*, ar;q=0.1', 'ar'],
      ['ar;q=0, en;q=0.2', 'en'],
      ['ar;q=0', ''],
      ['x-klingon, zh-Hant-TW;q=0.7', 'zh'],
      ['en;q=abc, ar;q=0.3', 'ar'],
      ['ar;q=1.5, en;q=0.4', 'en'],
      ['', ''],
      [undefined, ''],
    ];
    for (const [header, expected] of table) assert.equal(preferredLanguage(header), expected, String(header));
  });

  test('the device table: iOS (iPad in-app too), Android, everything else a desktop', () => {
    const table: [string | undefined, string][] = [
      [IPHONE, 'ios'],
      ['Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148', 'ios'],
      ['Mozilla/5.0 (iPod touch; CPU iPhone OS 12_0 like Mac OS X)', 'ios'],
      [IPAD_APP, 'ios'],
      [ANDROID, 'android'],
      ['Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 Chrome/131.0 Safari/537.36', 'android'],
      [MAC_SAFARI, 'desktop'],
      [WINDOWS, 'desktop'],
      ['curl/8.11.0', 'desktop'],
      ['', 'desktop'],
      [undefined, 'desktop'],
    ];
    // Twice: the second pass answers from the remembered last agent where it repeats.
    for (let pass = 0; pass < 2; pass++) {
      for (const [ua, expected] of table) assert.equal(deviceOf(ua), expected, String(ua));
    }
  });

  test('the country header: two letters upper-cased; unknown and Tor (XX, T1) are no country', () => {
    assert.equal(routeCountryOf('eg'), 'EG');
    assert.equal(routeCountryOf('EG'), 'EG');
    assert.equal(routeCountryOf('XX'), '');
    assert.equal(routeCountryOf('T1'), '');
    assert.equal(routeCountryOf('EGY'), '');
    assert.equal(routeCountryOf(undefined), '');
  });

  test('first match wins, in the order the rules are stored; no match is the link’s own target (-1)', () => {
    const variant = { language: 'ar', device: 'ios' as const, country: 'EG' };
    assert.equal(chooseRoute(RULES, variant), 0);
    assert.equal(chooseRoute([RULES[2]!, RULES[1]!, RULES[0]!], variant), 0, 'the country rule, now first');
    assert.equal(chooseRoute(RULES, { language: 'en', device: 'ios', country: 'EG' }), 1);
    assert.equal(chooseRoute(RULES, { language: 'fa', device: 'desktop', country: '' }), 0);
    assert.equal(chooseRoute(RULES, { language: 'en', device: 'android', country: 'EG' }), 2);
    assert.equal(chooseRoute(RULES, { language: 'en', device: 'android', country: 'SA' }), -1);
    assert.equal(chooseRoute(RULES, { language: '', device: '', country: '' }), -1);
  });

  test('only the headers the rules need are read, and Vary names exactly those', () => {
    assert.equal(routeNeeds([RULES[0]!]), NEEDS_LANGUAGE);
    assert.equal(routeNeeds(RULES), NEEDS_LANGUAGE | NEEDS_DEVICE | NEEDS_COUNTRY);
    assert.equal(varyFor(NEEDS_LANGUAGE, 'cf-ipcountry'), 'Accept-Language');
    assert.equal(
      varyFor(NEEDS_LANGUAGE | NEEDS_DEVICE | NEEDS_COUNTRY, 'cf-ipcountry'),
      'Accept-Language, User-Agent, cf-ipcountry',
    );
    // Without a trusted country header a country rule can never match: nothing varies by country.
    assert.equal(varyFor(NEEDS_COUNTRY, undefined), '');
    const asked: string[] = [];
    const request = {
      header(name: string) {
        asked.push(name);
        return { 'accept-language': 'ar', 'user-agent': IPHONE, 'cf-ipcountry': 'eg' }[name];
      },
    };
    const variant = readRouteVariant(NEEDS_LANGUAGE, request, 'cf-ipcountry');
    assert.deepEqual(asked, ['accept-language']);
    assert.deepEqual(variant, { language: 'ar', device: '', country: '' });
    assert.equal(routeVariantKey(variant), 'ar||');
    assert.deepEqual(readRouteVariant(NEEDS_DEVICE | NEEDS_COUNTRY, request, 'cf-ipcountry'), {
      language: '',
      device: 'ios',
      country: 'EG',
    });
  });
});

describe('the routed decision', () => {
  test('a matched rule answers its target with the link’s UTM values and status, Vary set, never shared', () => {
    const decision = decideRoutedRedirect(
      'Rt9_a',
      record({ utm: { campaign: 'eid' }, redirectStatus: 302 }),
      { language: 'ar', device: 'desktop', country: '' },
      'Accept-Language, User-Agent',
      NOW,
      SETTINGS,
    );
    assert.deepEqual(decision, {
      status: 302,
      outcome: 'redirect',
      cacheControl: 'private, max-age=300',
      location: `${AR}?utm_campaign=eid&utm_source=print`,
      vary: 'Accept-Language, User-Agent',
      route: 0,
    });
  });

  test('no match: the link’s own answer, still with Vary and private', () => {
    const decision = decideRoutedRedirect(
      'Rt9_a',
      record(),
      { language: 'en', device: 'desktop', country: 'GB' },
      'Accept-Language',
      NOW,
      SETTINGS,
    );
    assert.equal(decision.route, -1);
    assert.equal(decision.location, 'https://news.example/en/story?utm_source=print');
    assert.equal(decision.cacheControl, 'private, max-age=300');
    assert.equal(decision.vary, 'Accept-Language');
  });

  test('blocked, gone and warned links answer as they would without rules (the warn page leads to the rule target)', () => {
    const ar = { language: 'ar', device: '' as const, country: '' };
    assert.equal(
      decideRoutedRedirect('Rt9_a', record({ safety: 'blocked' }), ar, '', NOW, SETTINGS).status,
      451,
    );
    assert.equal(
      decideRoutedRedirect('Rt9_a', record({ status: 'gone' }), ar, '', NOW, SETTINGS).status,
      410,
    );
    const warned = decideRoutedRedirect('Rt9_a', record({ safety: 'warn' }), ar, '', NOW, SETTINGS);
    assert.equal(warned.outcome, 'warn');
    assert.equal(warned.page?.destination, `${AR}?utm_source=print`);
  });

  test('the archived copy stands in for the link’s own target only; a rule target is answered as it is', () => {
    const copy = 'https://web.archive.org/web/2026/https://news.example/en/story';
    const dead = record({ fallbackUrl: copy });
    const ar = decideRoutedRedirect(
      'Rt9_a',
      dead,
      { language: 'ar', device: '', country: '' },
      '',
      NOW,
      SETTINGS,
    );
    assert.equal(ar.location, `${AR}?utm_source=print`);
    const en = decideRoutedRedirect(
      'Rt9_a',
      dead,
      { language: 'en', device: '', country: '' },
      '',
      NOW,
      SETTINGS,
    );
    assert.equal(en.outcome, 'archived');
  });

  test('the plain policy (Bitly, the static snapshot, the preview) answers the link’s own target', () => {
    const decision = decideRedirect('Rt9_a', record(), NOW, SETTINGS);
    assert.equal(decision.location, 'https://news.example/en/story?utm_source=print');
    assert.equal(decision.vary, undefined);
  });
});

describe('records and the link model', () => {
  const row: LinkRow = {
    code: 'Rt9_a',
    domain: '',
    targetUrl: 'https://news.example/en/story',
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
    version: 4,
    fallbackUrl: null,
    routingRules: RULES,
  };

  test('the serving store keeps a record without rules byte for byte; with rules, a ninth element', () => {
    const plain = toServingRecord({ ...row, routingRules: null });
    assert.equal('rules' in plain, false);
    assert.equal(
      encodeServingRecord(plain),
      '4|["https://news.example/en/story","active","clean",null,null,null]',
    );
    const routed = toServingRecord(row);
    const encoded = encodeServingRecord(routed);
    assert.equal(
      encoded,
      `4|["https://news.example/en/story","active","clean",null,null,null,null,null,[["language",["ar","fa"],"${AR}"],["device",["ios"],"${IOS}"],["country",["EG"],"${EG}"]]]`,
    );
    assert.deepEqual(decodeServingRecord('Rt9_a', encoded), routed);
    assert.ok(servingRecordSchema.safeParse(routed).success);
    // With a fallback too, both come back.
    const both = { ...routed, fallbackUrl: 'https://web.archive.org/web/2026/x' };
    assert.deepEqual(decodeServingRecord('Rt9_a', encodeServingRecord(both)), both);
  });

  test('a stored rule list this version cannot read is a miss, never a half-read record', () => {
    for (const rules of [
      '[]',
      '[["weather",["sunny"],"https://x.example/"]]',
      '[["language",[],"https://x.example/"]]',
      '[["language",["ar"]]]',
      '[["language",["ar"],42]]',
      '{"kind":"language"}',
    ]) {
      const raw = `4|["https://news.example/en/story","active","clean",null,null,null,null,null,${rules}]`;
      assert.equal(decodeServingRecord('Rt9_a', raw), null, rules);
    }
  });

  test('the positional Postgres row projects to the same record as the named row', () => {
    const values: ServingValues = [
      row.targetUrl,
      'active',
      'clean',
      null,
      null,
      null,
      null,
      null,
      null,
      4,
      null,
      RULES,
    ];
    assert.deepEqual(servingRecordFromValues('Rt9_a', values), toServingRecord(row));
    const none = servingRecordFromValues('Rt9_a', [...values.slice(0, 11), null] as unknown as ServingValues);
    assert.equal('rules' in none, false);
  });

  test('Bitly is given the link’s own target, and the static snapshot answers it and says so', () => {
    const vendor = toVendorTarget(row, { ...SETTINGS, shortBaseUrl: 'https://sho.rt' }, NOW);
    assert.equal(vendor.longUrl, 'https://news.example/en/story?utm_source=print');
    const answer = toStaticAnswer(row, NOW, SETTINGS);
    assert.equal(answer?.location, 'https://news.example/en/story?utm_source=print');
    assert.equal(answer?.routed, true);
    assert.equal(toStaticAnswer({ ...row, routingRules: null }, NOW, SETTINGS)?.routed, undefined);
  });

  test('each static snapshot format answers the default target and says so beside the code', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lifeline-rules-snapshot-'));
    try {
      const options = {
        outDir: dir,
        publicDir: dir,
        shortBaseUrl: 'https://sho.rt',
        listen: '8080',
        serverName: 'sho.rt',
        generatedAt: new Date(NOW).toISOString(),
        notFound: { status: 404, cacheControl: 'public, max-age=60' },
        rootRedirectUrl: undefined,
        longestCode: 5,
      };
      const routed = toStaticAnswer(row, NOW, SETTINGS)!;
      const plain = toStaticAnswer({ ...row, code: 'Pl4in', routingRules: null }, NOW, SETTINGS)!;
      for (const create of [createNginxWriter, createRedirectsWriter, createKvWriter]) {
        const writer = await create(options);
        await writer.add(plain);
        await writer.add(routed);
        await writer.finish();
      }
      const entries = readFileSync(join(dir, 'nginx', 'lifeline_map_entries.conf'), 'utf8');
      assert.match(entries, /# \/Rt9_a has routing rules: this is its default target/);
      assert.doesNotMatch(entries, /# \/Pl4in/);
      assert.match(entries, /news\.example\/en\/story\?utm_source=print/);
      assert.match(readFileSync(join(dir, 'nginx', 'lifeline_http.conf'), 'utf8'), /routing rules/);
      const redirects = readFileSync(join(dir, 'redirects', '_redirects'), 'utf8');
      assert.match(
        redirects,
        /# \/Rt9_a has routing rules: this is its default target\n\/Rt9_a {2}https:\/\/news\.example\/en\/story\?utm_source=print {2}301\n/,
      );
      const kv = JSON.parse(readFileSync(join(dir, 'json', 'kv-0001.json'), 'utf8')) as {
        key: string;
        value: string;
      }[];
      const value = JSON.parse(kv.find((p) => p.key === 'Rt9_a')!.value) as {
        routed?: string;
        location: string;
      };
      assert.equal(value.location, 'https://news.example/en/story?utm_source=print');
      assert.match(value.routed ?? '', /default target/);
      assert.equal(
        (JSON.parse(kv.find((p) => p.key === 'Pl4in')!.value) as { routed?: string }).routed,
        undefined,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the schema normalises values (case, duplicates) and names each bad one by its path', () => {
    const parsed = routingRulesSchema.parse([
      { kind: 'language', values: [' AR ', 'ar', 'Fa'], target: 'https://News.Example/ar' },
      { kind: 'country', values: ['eg'], target: 'https://news.example/eg' },
      { kind: 'device', values: ['iOS'], target: 'https://apps.example/ios' },
    ]);
    assert.deepEqual(parsed, [
      { kind: 'language', values: ['ar', 'fa'], target: 'https://news.example/ar' },
      { kind: 'country', values: ['EG'], target: 'https://news.example/eg' },
      { kind: 'device', values: ['ios'], target: 'https://apps.example/ios' },
    ]);
    const bad = routingRulesSchema.safeParse([
      { kind: 'language', values: ['arabic'], target: 'https://news.example/ar' },
      { kind: 'device', values: ['windows'], target: 'https://x.example/' },
      { kind: 'planet', values: ['mars'], target: 'https://x.example/' },
      { kind: 'country', values: [], target: 'https://x.example/' },
      { kind: 'country', values: ['EG'], target: 'ftp://x.example/' },
    ]);
    assert.equal(bad.success, false);
    const paths = bad.error!.issues.map((i) => i.path.join('.')).sort();
    assert.deepEqual(paths, ['0.values.0', '1.values.0', '2.kind', '3.values', '4.target']);
    const tooMany = routingRulesSchema.safeParse(Array.from({ length: 9 }, () => RULES[0]));
    assert.equal(tooMany.success, false);
  });
});

describe('rule targets under the one target rule wherever a record enters', () => {
  const policy: CanonicalTargetPolicy = {
    allowedHosts: ['news.example'],
    shortHost: 'sho.rt',
    shortPort: '443',
  };

  test('the resolver admits a record only when every rule target obeys the rule (else the code answers 404)', () => {
    const tallies = {
      serving_store: { tampered: { n: 0 } },
      postgres: { tampered: { n: 0 } },
    } as unknown as Parameters<typeof createRecordAdmission>[1];
    const admit = createRecordAdmission(policy, tallies, undefined);
    const ok = record({ rules: [{ kind: 'language', values: ['ar'], target: AR }] });
    assert.equal(admit(ok, 'postgres'), ok);
    const elsewhere = record({
      rules: [{ kind: 'language', values: ['ar'], target: 'https://evil.example/' }],
    });
    assert.equal(admit(elsewhere, 'postgres'), undefined);
    const loop = record({ rules: [{ kind: 'device', values: ['ios'], target: 'https://sho.rt/other' }] });
    assert.equal(admit(loop, 'serving_store'), undefined);
    const shapeless = record({ rules: [{ kind: 'weather', values: ['sun'], target: AR }] as never });
    assert.equal(admit(shapeless, 'postgres'), undefined);
    assert.equal((tallies as unknown as Record<string, { tampered: { n: number } }>).postgres!.tampered.n, 2);
  });

  test('a restore refuses a link whose rule target breaks the rule, or whose rules are unreadable', () => {
    const base = { code: 'Rt9_a', target_url: 'https://news.example/en/story', expired_url: null };
    const refused = new Set<string>();
    assert.equal(
      findRestoreRowProblem('links', { ...base, routing_rules: RULES.slice(0, 1) }, policy, refused),
      null,
    );
    assert.equal(findRestoreRowProblem('links', { ...base, routing_rules: null }, policy, refused), null);
    assert.equal(
      findRestoreRowProblem(
        'links',
        { ...base, routing_rules: [{ kind: 'language', values: ['ar'], target: 'https://evil.example/' }] },
        policy,
        refused,
      ),
      'target',
    );
    assert.equal(
      findRestoreRowProblem('links', { ...base, code: 'Rt9_b', routing_rules: 'ar' }, policy, refused),
      'target',
    );
    assert.deepEqual([...refused], ['Rt9_a', 'Rt9_b']);
  });
});
