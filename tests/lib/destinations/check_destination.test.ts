// One destination check against real HTTP(S) servers on loopback, one made-up host name per behaviour: every
// outcome classified, the chain and TLS kept, and the politeness the gate promises (one request at a time per
// host, the host's rate) seen by the servers themselves.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type DestinationSites, startDestinationSites } from '../../../devkit/fakes/destination_sites.ts';
import {
  checkDestination,
  type DestinationCheckerDeps,
} from '../../../lib/destinations/check_destination.ts';
import { getCheckerUserAgent } from '../../../lib/destinations/destination_check_deps.ts';
import { HostGate } from '../../../lib/destinations/host_gate.ts';
import { createRuleLookup, type OutgoingRule } from '../../../lib/shared/outgoing_request.ts';

let sites: DestinationSites;
const RULE: OutgoingRule = { allowPrivate: ['127.0.0.0/8'], plainHttp: true };

before(async () => {
  sites = await startDestinationSites({ tls: true });
  sites.set('ok.test', { kind: 'page', paths: ['/story'], title: 'A fine story' });
  sites.set('gone404.test', { kind: 'status', status: 404 });
  sites.set('gone410.test', { kind: 'status', status: 410 });
  sites.set('broken.test', { kind: 'status', status: 503 });
  sites.set('moved.test', { kind: 'redirects', hops: 3 });
  sites.set('five.test', { kind: 'redirects', hops: 5 });
  sites.set('loop.test', { kind: 'redirects', hops: 6 });
  sites.set('temporary.test', { kind: 'redirects', hops: 2, status: 302 });
  sites.set('soft.test', { kind: 'soft-404', realPaths: ['/real'] });
  sites.set('home.test', { kind: 'redirect-unknown-home', realPaths: ['/real'] });
  sites.set('hang.test', { kind: 'hang' });
  sites.set('forsale.test', { kind: 'parking' });
  sites.set('www.sedoparking.com', { kind: 'parking' });
  sites.set('parked-ns.test', { kind: 'page', title: 'Something' });
  sites.set('nohead.test', { kind: 'page', paths: ['/story'], refuseHead: true });
  sites.set('self-signed.test', { kind: 'page', paths: ['/'] });
});
after(async () => {
  await sites.close();
});

function checker(overrides: Partial<DestinationCheckerDeps> = {}): DestinationCheckerDeps {
  const rule = overrides.rule ?? RULE;
  return {
    rule,
    lookup: createRuleLookup(rule, sites.lookup(['nowhere.test'])) as DestinationCheckerDeps['lookup'],
    gate: new HostGate({ rateFor: () => 1000 }),
    userAgent: getCheckerUserAgent('https://links.example/about'),
    timeoutMs: 3_000,
    resolveNs: async (domain) =>
      domain === 'parked-ns.test'
        ? ['ns1.parkingcrew.net.', 'ns2.parkingcrew.net.']
        : ['ns1.example-dns.net'],
    ...overrides,
  };
}

const check = (url: string, wantTitle = false, deps = checker()) =>
  checkDestination(deps, url, { wantTitle });

describe('checkDestination', () => {
  test('ok: HEAD answers 200, a made-up sibling 404; the first check reads the title; our user agent', async () => {
    const before = sites.requests.length;
    const result = await check(sites.url('ok.test', '/story'), true);
    assert.equal(result.outcome, 'ok');
    assert.equal(result.httpStatus, 200);
    assert.equal(result.pageTitle, 'A fine story');
    assert.equal(result.finalUrl, sites.url('ok.test', '/story'));
    assert.deepEqual(result.chain, [{ url: sites.url('ok.test', '/story'), status: 200, location: null }]);
    assert.equal(result.tls, null);
    const made = sites.requests.slice(before);
    assert.deepEqual(
      made.map((r) => [r.method, r.path.startsWith('/lifeline-check-') ? '/sibling' : r.path]),
      [
        ['GET', '/story'],
        ['HEAD', '/sibling'],
      ],
    );
    assert.ok(made.every((r) => r.userAgent === 'LifelineLinkCheck/1.0 (+https://links.example/about)'));
    // A later check (title known) does not read the page: HEAD only.
    const later = sites.requests.length;
    assert.equal((await check(sites.url('ok.test', '/story'))).outcome, 'ok');
    assert.deepEqual(
      sites.requests.slice(later).map((r) => r.method),
      ['HEAD', 'HEAD'],
    );
  });

  test('gone: 404 and 410, each confirmed by a GET; a 503 is unreachable', async () => {
    const before = sites.requests.length;
    const r404 = await check(sites.url('gone404.test', '/old'));
    assert.deepEqual([r404.outcome, r404.httpStatus], ['gone', 404]);
    assert.deepEqual(
      sites.requests.slice(before).map((r) => r.method),
      ['HEAD', 'GET'],
    );
    const r410 = await check(sites.url('gone410.test', '/old'));
    assert.deepEqual([r410.outcome, r410.httpStatus], ['gone', 410]);
    const r503 = await check(sites.url('broken.test', '/x'));
    assert.deepEqual([r503.outcome, r503.error], ['unreachable', 'HTTP 503']);
  });

  test('HEAD refused (405): a small GET answers instead', async () => {
    const result = await check(sites.url('nohead.test', '/story'));
    assert.deepEqual([result.outcome, result.httpStatus], ['ok', 200]);
  });

  test('moved: permanent redirects followed up to five with the chain kept; six are too many; 302s are ok', async () => {
    const moved = await check(sites.url('moved.test', '/hop0'), true);
    assert.equal(moved.outcome, 'moved');
    assert.equal(moved.finalUrl, sites.url('moved.test', '/hop3'));
    assert.equal(moved.pageTitle, 'Where it went');
    assert.deepEqual(
      moved.chain.map((h) => [new URL(h.url).pathname, h.status, h.location]),
      [
        ['/hop0', 301, '/hop1'],
        ['/hop1', 301, '/hop2'],
        ['/hop2', 301, '/hop3'],
        ['/hop3', 200, null],
      ],
    );
    const five = await check(sites.url('five.test', '/hop0'));
    assert.deepEqual([five.outcome, five.chain.length], ['moved', 6]);
    const loop = await check(sites.url('loop.test', '/hop0'));
    assert.equal(loop.outcome, 'unreachable');
    assert.match(loop.error!, /more than 5 redirects/);
    assert.equal(loop.chain.length, 6);
    // A Location far longer than a stored URL may be: followed, and kept only as far as the columns allow.
    sites.set('long.test', { kind: 'redirects', hops: 0, to: `/story?${'q'.repeat(3000)}` });
    const long = await check(sites.url('long.test', '/hop0'));
    assert.deepEqual([long.outcome, long.finalUrl], ['gone', null]);
    assert.equal(long.chain[0]!.location!.length, 2048);
    const temporary = await check(sites.url('temporary.test', '/hop0'));
    assert.deepEqual([temporary.outcome, temporary.chain.length], ['ok', 3]);
  });

  test("soft-404: a 200 that is the site's not-found page, or a redirect where made-up paths go too", async () => {
    assert.equal((await check(sites.url('soft.test', '/deleted-story'))).outcome, 'soft-404');
    assert.equal((await check(sites.url('soft.test', '/deleted-story'), true)).outcome, 'soft-404');
    assert.equal((await check(sites.url('soft.test', '/real'))).outcome, 'ok');
    const home = await check(sites.url('home.test', '/deleted'));
    assert.equal(home.outcome, 'soft-404');
    assert.equal(home.finalUrl, sites.url('home.test', '/'));
    assert.equal((await check(sites.url('home.test', '/real'))).outcome, 'ok');
    // The home page itself is never a not-found page.
    assert.equal((await check(sites.url('home.test', '/'))).outcome, 'ok');
  });

  test('unreachable: a TLS error (self-signed), a DNS failure, a timeout, a private address not allowed', async () => {
    const tls = await check(`https://self-signed.test:${sites.tlsPort}/`);
    assert.equal(tls.outcome, 'unreachable');
    assert.match(tls.tls?.error ?? '', /SELF_SIGNED/);
    assert.match(tls.error!, /^tls: /);
    const dns = await check(sites.url('nowhere.test', '/'));
    assert.equal(dns.outcome, 'unreachable');
    assert.match(dns.error!, /^dns: ENOTFOUND/);
    const hang = await check(sites.url('hang.test', '/'), false, checker({ timeoutMs: 300 }));
    assert.equal(hang.outcome, 'unreachable');
    assert.match(hang.error!, /^timeout: no answer within 300 ms/);
    const strict: OutgoingRule = { allowPrivate: [], plainHttp: true };
    const before = sites.requests.length;
    const refused = await check(sites.url('ok.test', '/story'), false, checker({ rule: strict }));
    assert.equal(refused.outcome, 'unreachable');
    assert.match(refused.error!, /^refused: ok\.test was not connected to/);
    const literal = await check(`http://127.0.0.1:${sites.port}/story`, false, checker({ rule: strict }));
    assert.match(literal.error!, /^refused: .*loopback/);
    assert.equal(sites.requests.length, before, 'nothing reached the server');
    // Without plainHttp, the ordinary rule: https only.
    const httpsOnly = await check(
      sites.url('ok.test', '/story'),
      false,
      checker({ rule: { allowPrivate: [] } }),
    );
    assert.match(httpsOnly.error!, /only https is allowed/);
  });

  test('parked: a redirect to a parking host, parking name servers, or a for-sale page', async () => {
    sites.set('expired.test', {
      kind: 'redirects',
      hops: 0,
      status: 302,
      to: sites.url('www.sedoparking.com', '/'),
    });
    assert.equal((await check(sites.url('expired.test', '/hop0'))).outcome, 'parked');
    assert.equal((await check(sites.url('parked-ns.test', '/story'))).outcome, 'parked');
    assert.equal((await check(sites.url('forsale.test', '/story'), true)).outcome, 'parked');
    assert.equal((await check(sites.url('forsale.test', '/story'))).outcome, 'parked');
  });

  test('politeness: never two requests at once to one host, and the pause after each answer held', async () => {
    const rate = 25; // per second: 40 ms between one answer from a host and the next request to it
    // Sites of their own that count a request arriving sooner than that after the host's previous answer.
    const polite = await startDestinationSites({ minGapMs: 1000 / rate });
    try {
      const hosts = ['polite-a.test', 'polite-b.test', 'polite-c.test'];
      const paths = ['/1', '/2', '/3', '/4', '/5'];
      for (const host of hosts) polite.set(host, { kind: 'page', paths });
      const deps = checker({
        gate: new HostGate({ rateFor: () => rate }),
        lookup: createRuleLookup(RULE, polite.lookup()) as DestinationCheckerDeps['lookup'],
      });
      await Promise.all(
        hosts.flatMap((host) =>
          paths.map((p) => checkDestination(deps, polite.url(host, p), { wantTitle: true })),
        ),
      );
      assert.equal(polite.requests.length, 30, 'GET and the sibling HEAD for each of 15 checks');
      assert.deepEqual(
        hosts.map((h) => polite.maxInFlight.get(h)),
        [1, 1, 1],
      );
      assert.equal(polite.overlaps, 0);
      assert.equal(polite.gapViolations, 0);
      for (const host of hosts) {
        const starts = polite.requests.filter((r) => r.host === host).map((r) => r.startedAtMs);
        for (let i = 1; i < starts.length; i++)
          assert.ok(starts[i]! - starts[i - 1]! >= 1000 / rate, `${host}: ${starts[i]! - starts[i - 1]!} ms`);
      }
      // The same checks without the gate's pause: the sites see it (the check can fail).
      const rude = checker({
        gate: new HostGate({ rateFor: () => 100_000 }),
        lookup: createRuleLookup(RULE, polite.lookup()) as DestinationCheckerDeps['lookup'],
      });
      await Promise.all(
        paths.map((p) => checkDestination(rude, polite.url('polite-a.test', p), { wantTitle: true })),
      );
      assert.ok(polite.gapViolations > 0);
    } finally {
      await polite.close();
    }
  });
});
