// The operations page's "Our domains" card in English and Arabic: each stored fact with its state, what was read
// and when, a failed last attempt, and the watch switched off. Facts are written through the store, as the
// worker's reads write them (tests/workflows/watch_domains.test.ts runs the reads themselves).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, HARNESS_ADMIN, type Harness } from '../../../devkit/harness/harness.ts';
import { createI18n } from '../../../lib/i18n/translator.ts';
import { recordDomainFactErrors, upsertDomainFactRead } from '../../../lib/stores/domain_watch_store.ts';
import { createUiClient } from '../../helpers/ui_client.ts';

const DAY = 86_400_000;
const AR = { 'Accept-Language': 'ar-EG,ar;q=0.9' };
const EN = { 'Accept-Language': 'en-GB,en;q=0.9' };
let h: Harness;

before(async () => {
  h = await createHarness({ env: { SHORT_BASE_URL: 'https://shrt.test', DOMAIN_WATCH_INTERVAL: '6h' } });
  const now = Date.now();
  await upsertDomainFactRead(h.db.sql, {
    subject: 'shrt.test',
    fact: 'registration',
    ok: false,
    expiresAt: new Date(now + 20.5 * DAY),
    detail: { statuses: ['client transfer prohibited', 'active'], registrar: 'Registrar of Tests' },
  });
  await upsertDomainFactRead(h.db.sql, {
    subject: 'shrt.test',
    fact: 'certificate',
    ok: false,
    expiresAt: new Date(now - 2 * DAY),
    detail: {
      issuer: 'Lifeline Tests — Lifeline Test CA',
      names: ['elsewhere.test'],
      nameMatches: false,
      trusted: false,
      trustError: 'CERT_HAS_EXPIRED',
    },
  });
  await upsertDomainFactRead(h.db.sql, {
    subject: 'shrt.test',
    fact: 'reputation',
    ok: false,
    expiresAt: null,
    detail: { threats: ['SOCIAL_ENGINEERING'] },
  });
  await upsertDomainFactRead(h.db.sql, {
    subject: 'shrt.test',
    fact: 'dnssec',
    ok: null,
    expiresAt: null,
    detail: { signed: null },
  });
  await upsertDomainFactRead(h.db.sql, {
    subject: 'shrt.test',
    fact: 'lock',
    ok: true,
    expiresAt: null,
    detail: { locks: ['client transfer prohibited'] },
  });
  // A domain whose registry never answered: an attempt, no reading.
  await recordDomainFactErrors(
    h.db.sql,
    'orphan.invalid',
    ['registration'],
    'no RDAP service for orphan.invalid',
  );
});
after(() => h.close());

async function opsPage(headers: Record<string, string>): Promise<string> {
  const client = createUiClient(h.app as never);
  assert.equal((await client.login(HARNESS_ADMIN.email, HARNESS_ADMIN.password, headers)).status, 303);
  const res = await client.get('/ui/ops', headers);
  assert.equal(res.status, 200);
  return res.text();
}

/** The card's visible text, row by row (`data-fact` = "name fact"). */
function rows(html: string): Map<string, string> {
  const card = /<section class="card" id="domains"[\s\S]*?<\/section>/.exec(html)?.[0];
  assert.ok(card, 'the card is on the page');
  const found = new Map<string, string>();
  for (const m of card.matchAll(/<tr data-fact="([^"]+)">([\s\S]*?)<\/tr>/g)) {
    found.set(
      m[1]!,
      m[2]!
        .replace(/<[^>]+>/g, ' ')
        .replace(/&amp;/g, '&')
        .replace(/&#39;|&#x27;/g, "'")
        .replace(/\s+/g, ' ')
        .trim(),
    );
  }
  return found;
}

describe('the operations page: our domains', () => {
  for (const [locale, headers] of [
    ['en', EN],
    ['ar', AR],
  ] as const) {
    test(`every fact with its state, what was read and when (${locale})`, async () => {
      const i18n = createI18n(locale);
      const { t } = i18n;
      const html = await opsPage(headers);
      assert.ok(html.includes(t('domains.title')));
      assert.ok(html.includes(t('domains.lead', { interval: '6h' })));
      const r = rows(html);
      assert.deepEqual(
        [...r.keys()],
        [
          'orphan.invalid registration',
          'shrt.test registration',
          'shrt.test certificate',
          'shrt.test reputation',
          'shrt.test dnssec',
          'shrt.test lock',
        ],
      );
      const registration = r.get('shrt.test registration')!;
      assert.ok(registration.includes(t('domains.fact.registration')), registration);
      assert.ok(registration.includes(t('domains.state.bad')), registration);
      assert.ok(registration.includes(t('domains.registrar', { name: 'Registrar of Tests' })), registration);
      const days = t('domains.expires', { date: 'X', days: 20 }).split('X')[1]!;
      assert.ok(registration.includes(days.trim()), `${registration} has ${days}`);
      const certificate = r.get('shrt.test certificate')!;
      for (const line of [t('domains.wrongName'), t('domains.untrusted', { reason: 'CERT_HAS_EXPIRED' })])
        assert.ok(certificate.includes(line), `${certificate}: ${line}`);
      // The words around the date (the translator wraps values in bidi isolates).
      const ended = t('domains.expired', { date: 'X' })
        .split('X')[0]!
        .replace(/[\u2068\u2069]/g, '')
        .trim();
      assert.ok(certificate.includes(ended), `${certificate} has ${ended}`);
      assert.ok(
        r.get('shrt.test reputation')!.includes(t('domains.listed', { threats: 'SOCIAL_ENGINEERING' })),
      );
      const dnssec = r.get('shrt.test dnssec')!;
      assert.ok(
        dnssec.includes(t('domains.state.unknown')) && dnssec.includes(t('domains.notShown')),
        dnssec,
      );
      const lock = r.get('shrt.test lock')!;
      assert.ok(lock.includes(t('domains.state.good')), lock);
      assert.ok(lock.includes(t('domains.locks', { locks: 'client transfer prohibited' })), lock);
      const orphan = r.get('orphan.invalid registration')!;
      assert.ok(orphan.includes(t('domains.never')), orphan);
      assert.ok(orphan.includes('no RDAP service for orphan.invalid'), orphan);
      // No message key leaks into the page.
      assert.doesNotMatch([...r.values()].join(' '), /\bdomains\.[a-zA-Z.]+/);
    });
  }

  test('the watch switched off says so', async () => {
    const off = await createHarness({
      env: { SHORT_BASE_URL: 'https://shrt.test', DOMAIN_WATCH_INTERVAL: 'off' },
    });
    try {
      const client = createUiClient(off.app as never);
      assert.equal((await client.login(HARNESS_ADMIN.email, HARNESS_ADMIN.password, EN)).status, 303);
      const html = await (await client.get('/ui/ops', EN)).text();
      assert.ok(
        html.includes('The domain watch is off (<code dir="ltr">DOMAIN_WATCH_INTERVAL=off</code>).'),
        html,
      );
      assert.ok(html.includes(createI18n('en').t('domains.none')));
    } finally {
      await off.close();
    }
  });
});
