// The RDAP client against the loopback RDAP fake (RFC 9083 answers, RFC 9224 bootstrap): finding the registry,
// keeping the bootstrap file, reading expiry, statuses, DNSSEC and the registrar; 404 as "no such domain", 429 as a
// retryable failure carrying Retry-After; the outgoing-request rule in front of every request.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type RdapFake, startRdapFake } from '../../../devkit/fakes/rdap_fake.ts';
import { judgeRegistration } from '../../../lib/domains/domain_facts.ts';
import { createRdapClient, findRdapBase, parseBootstrap } from '../../../lib/domains/rdap_client.ts';
import { PermanentFailure, TransientFailure } from '../../../lib/shared/errors.ts';
import { createOutgoingFetch, STRICT_OUTGOING_RULE } from '../../../lib/shared/outgoing_request.ts';

const LOOPBACK = { allowPrivate: ['127.0.0.0/8'] };
const DAY = 86_400_000;
let rdap: RdapFake;
const now = Date.now();

before(async () => {
  rdap = await startRdapFake();
  rdap.addRegistry('tld-test', ['test']);
  rdap.addRegistry('tld-example', ['example', 'news.example']);
  rdap.setDomain('tld-test', 'sho.rt.test', {
    expiresAt: new Date(now + 20 * DAY),
    statuses: ['client transfer prohibited', 'client delete prohibited', 'active'],
    delegationSigned: true,
    registrar: 'Registrar of Tests',
  });
  rdap.setDomain('tld-example', 'newsroom.example', { expiresAt: new Date(now + 400 * DAY) });
  rdap.setDomain('tld-example', 'held.news.example', {
    expiresAt: new Date(now + 400 * DAY),
    statuses: ['server hold'],
    delegationSigned: false,
  });
});
after(() => rdap.stop());

const client = (overrides: Partial<Parameters<typeof createRdapClient>[0]> = {}) =>
  createRdapClient({ bootstrapUrl: rdap.bootstrapUrl, fetch: createOutgoingFetch(LOOPBACK), ...overrides });

describe('RDAP through the bootstrap file', () => {
  test('the bootstrap shape: the longest matching label wins, https first', () => {
    const services = parseBootstrap({
      services: [
        [['example'], ['http://a.example/rdap/', 'https://a.example/rdap/']],
        [['news.example'], ['https://b.example/']],
      ],
    });
    assert.equal(findRdapBase(services, 'newsroom.example'), 'https://a.example/rdap/');
    assert.equal(findRdapBase(services, 'x.news.example'), 'https://b.example/');
    assert.equal(findRdapBase(services, 'sho.rt'), null);
    assert.throws(() => parseBootstrap({ version: '1.0' }), /no services array/);
  });

  test('reads expiry, statuses, DNSSEC and the registrar; the bootstrap file is fetched once', async () => {
    rdap.reset();
    const c = client();
    const answer = await c.lookupDomain('sho.rt.test');
    assert.equal(answer.kind, 'found');
    if (answer.kind !== 'found') return;
    assert.equal(answer.domain.name, 'sho.rt.test');
    assert.equal(
      answer.domain.expiresAt?.toISOString(),
      new Date(Math.floor((now + 20 * DAY) / 1000) * 1000).toISOString(),
    );
    assert.deepEqual(answer.domain.statuses, [
      'client transfer prohibited',
      'client delete prohibited',
      'active',
    ]);
    assert.equal(answer.domain.delegationSigned, true);
    assert.equal(answer.domain.registrar, 'Registrar of Tests');
    assert.equal(answer.domain.registeredAt?.toISOString(), '2015-03-01T10:00:00.000Z');
    await c.lookupDomain('newsroom.example');
    assert.equal(rdap.bootstrapFetches(), 1, 'kept between lookups');
    assert.deepEqual(
      rdap.queriesTo('tld-example').map((q) => q.name),
      ['newsroom.example'],
    );
    // 20 days left: registration not fine (under 30), DNSSEC signed, transfer locked.
    const facts = judgeRegistration(answer, now);
    assert.deepEqual(
      facts.map((f) => [f.fact, f.ok]),
      [
        ['registration', false],
        ['dnssec', true],
        ['lock', true],
      ],
    );
  });

  test('a hold status makes the registration bad whatever its expiry; no secureDNS member is unknown', async () => {
    const held = await client().lookupDomain('held.news.example');
    assert.equal(held.kind, 'found');
    const facts = judgeRegistration(held, now);
    assert.deepEqual(
      facts.map((f) => [f.fact, f.ok]),
      [
        ['registration', false],
        ['dnssec', false],
        ['lock', false],
      ],
    );
    assert.deepEqual(facts[0]!.detail.alarming, ['server hold']);
    const plain = await client().lookupDomain('newsroom.example');
    assert.ok(plain.kind === 'found' && plain.domain.delegationSigned === null);
    assert.deepEqual(
      judgeRegistration(plain, now).map((f) => [f.fact, f.ok]),
      [
        ['registration', true],
        ['dnssec', null],
        ['lock', true],
      ],
    );
  });

  test('404: the registry holds no such domain (registration bad), not an error', async () => {
    const answer = await client().lookupDomain('gone.test');
    assert.deepEqual(answer, { kind: 'not_found', server: new URL(rdap.baseOf('tld-test')).host });
    assert.deepEqual(
      judgeRegistration(answer, now).map((f) => [f.fact, f.ok]),
      [
        ['registration', false],
        ['dnssec', null],
        ['lock', null],
      ],
    );
  });

  test('429: a retryable failure carrying the registry’s Retry-After; nothing retried here', async () => {
    rdap.reset();
    rdap.rateLimitNext('tld-test', 7);
    const c = client();
    const error = await c.lookupDomain('sho.rt.test').then(
      () => assert.fail('a 429 must fail'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof TransientFailure, String(error));
    assert.equal(error.kind, 'RdapRateLimited');
    assert.equal(error.retryAfterMs, 7_000);
    assert.deepEqual(
      rdap.queriesTo('tld-test').map((q) => q.status),
      [429],
      'one request: the retry is the workflow’s',
    );
    const again = await c.lookupDomain('sho.rt.test');
    assert.equal(again.kind, 'found');
  });

  test('5xx is retryable, another 4xx is not; a TLD with no service is a permanent failure', async () => {
    rdap.server.failNext({ path: '/tld-test/', answer: { status: 503, body: '' } });
    await assert.rejects(client().lookupDomain('sho.rt.test'), (e) => e instanceof TransientFailure);
    rdap.server.failNext({ path: '/tld-test/', answer: { status: 403, body: '' } });
    await assert.rejects(
      client().lookupDomain('sho.rt.test'),
      (e) => e instanceof PermanentFailure && e.kind === 'RdapRefused',
    );
    await assert.rejects(
      client().lookupDomain('sho.rt'),
      (e) => e instanceof PermanentFailure && e.kind === 'RdapNoService',
    );
  });

  test('an answer over 1 MiB is refused, not read', async () => {
    rdap.server.failNext({
      path: '/tld-test/',
      answer: {
        status: 200,
        headers: { 'Content-Type': 'application/rdap+json' },
        body: `{"x":"${'a'.repeat(1_100_000)}"}`,
      },
    });
    await assert.rejects(
      client().lookupDomain('sho.rt.test'),
      (e) => e instanceof PermanentFailure && e.kind === 'RdapAnswerTooLarge',
    );
  });

  test('DOMAIN_WATCH_RDAP_URL: one base for every domain, no bootstrap fetched', async () => {
    rdap.reset();
    const answer = await client({
      rdapUrl: rdap.baseOf('tld-test'),
      bootstrapUrl: 'https://unused.invalid/',
    }).lookupDomain('sho.rt.test');
    assert.equal(answer.kind, 'found');
    assert.equal(rdap.bootstrapFetches(), 0);
  });

  test('the outgoing-request rule: loopback is refused unless allowed, before any request', async () => {
    rdap.reset();
    await assert.rejects(
      client({ fetch: createOutgoingFetch(STRICT_OUTGOING_RULE) }).lookupDomain('sho.rt.test'),
      (e) =>
        e instanceof PermanentFailure && e.kind === 'Refused' && /OUTGOING_ALLOWED_PRIVATE/.test(e.message),
    );
    // An RDAP base the bootstrap file names on a private address is refused the same way.
    await assert.rejects(
      client({ rdapUrl: 'https://10.1.2.3/rdap/', fetch: createOutgoingFetch(LOOPBACK) }).lookupDomain(
        'sho.rt.test',
      ),
      (e) => e instanceof PermanentFailure && e.kind === 'Refused',
    );
    assert.equal(rdap.requests.length, 0);
  });
});
