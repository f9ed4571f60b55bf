// The served certificate, read from a real TLS server on loopback with certificates this test makes: valid, near
// expiry, expired, for another name, from an untrusted CA; and the outgoing-request rule in front of the socket.
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { after, before, describe, test } from 'node:test';
import { judgeCertificate } from '../../../lib/domains/domain_facts.ts';
import { readServedCertificate } from '../../../lib/domains/tls_certificate.ts';
import { TransientFailure } from '../../../lib/shared/errors.ts';
import { type OutgoingLookup, OutgoingRequestRefused } from '../../../lib/shared/outgoing_request.ts';
import {
  createTestCa,
  startTestTlsServer,
  type TestCa,
  type TestTlsServer,
} from '../../helpers/tls_certificates.ts';

const DAY = 86_400_000;
const LOOPBACK = { allowPrivate: ['127.0.0.0/8'] };
/** Every made-up name here resolves to loopback, where the test's server listens. */
const toLoopback: OutgoingLookup = (_host, _o, callback) =>
  callback(null, [{ address: '127.0.0.1', family: 4 } as LookupAddress]);

let ca: TestCa;
let server: TestTlsServer;
const now = Date.now();

before(async () => {
  ca = createTestCa();
  const at = (days: number) => new Date(now + days * DAY);
  server = await startTestTlsServer(ca.issue(['fallback.test'], at(-1), at(90)));
  server.serve('good.test', ca.issue(['good.test', 'www.good.test'], at(-10), at(80)));
  server.serve('soon.test', ca.issue(['soon.test'], at(-80), at(5)));
  server.serve('expired.test', ca.issue(['expired.test'], at(-90), at(-2)));
  server.serve('misnamed.test', ca.issue(['elsewhere.test'], at(-1), at(80)));
});
after(async () => {
  await server.close();
  ca.close();
});

const read = (host: string, options: { ca?: string[]; rule?: typeof LOOPBACK } = {}) =>
  readServedCertificate({
    host,
    port: server.port,
    rule: options.rule ?? LOOPBACK,
    lookup: toLoopback,
    ca: options.ca ?? [ca.caPem],
  });

describe('the certificate a host serves', () => {
  test('a good one: its dates, issuer and names; fine', async () => {
    const cert = await read('good.test');
    assert.deepEqual(cert.names, ['good.test', 'www.good.test']);
    assert.equal(cert.issuer, 'Lifeline Tests — Lifeline Test CA');
    assert.equal(cert.trusted, true);
    assert.equal(cert.nameMatches, true);
    assert.ok(Math.abs(cert.validTo.getTime() - (now + 80 * DAY)) < 2_000, cert.validTo.toISOString());
    const judged = judgeCertificate(cert, now);
    assert.equal(judged.ok, true);
    assert.equal(judged.expiresAt, cert.validTo);
  });

  test('five days left: trusted and named, but not fine', async () => {
    const cert = await read('soon.test');
    assert.equal(cert.trusted, true);
    assert.equal(judgeCertificate(cert, now).ok, false);
    assert.ok((cert.validTo.getTime() - now) / DAY < 5.01);
  });

  test('expired: read all the same, with OpenSSL’s reason', async () => {
    const cert = await read('expired.test');
    assert.equal(cert.trusted, false);
    assert.equal(cert.trustError, 'CERT_HAS_EXPIRED');
    assert.ok(cert.validTo.getTime() < now);
    assert.equal(judgeCertificate(cert, now).ok, false);
  });

  test('for another name: trusted chain, wrong name, not fine', async () => {
    const cert = await read('misnamed.test');
    assert.deepEqual(cert.names, ['elsewhere.test']);
    assert.equal(cert.nameMatches, false);
    assert.equal(cert.trusted, true);
    const judged = judgeCertificate(cert, now);
    assert.equal(judged.ok, false);
    assert.equal(judged.detail.nameMatches, false);
  });

  test('from a CA nobody trusts (Node’s own roots): untrusted', async () => {
    const cert = await readServedCertificate({
      host: 'good.test',
      port: server.port,
      rule: LOOPBACK,
      lookup: toLoopback,
    });
    assert.equal(cert.trusted, false);
    assert.match(cert.trustError ?? '', /UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED|UNABLE_TO_VERIFY/);
  });

  test('the outgoing-request rule: a name resolving to loopback is refused without an allowance', async () => {
    await assert.rejects(
      read('good.test', { rule: { allowPrivate: [] } }),
      (e) => e instanceof OutgoingRequestRefused,
    );
  });

  test('nothing listening: a retryable failure', async () => {
    await assert.rejects(
      readServedCertificate({ host: 'good.test', port: 1, rule: LOOPBACK, lookup: toLoopback }),
      (e) => e instanceof TransientFailure && e.kind === 'TlsUnavailable',
    );
  });
});
