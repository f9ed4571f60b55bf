import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  createOutgoingFetch,
  getAddressProblem,
  getOutgoingUrlProblem,
  type OutgoingLookup,
  OutgoingRequestRefused,
  parseAllowanceEntry,
  STRICT_OUTGOING_RULE,
} from '../../../lib/shared/outgoing_request.ts';

// The outgoing-request rule on its own (docs/adr/0058-outgoing-requests-rule.md): which addresses it refuses in
// which spelling, what the operator's allowance opens, and that it holds at connect time (DNS answers, redirects).

let server: Server;
let port = 0;
let hits = 0;
before(async () => {
  server = createServer((req, res) => {
    hits++;
    if (req.url === '/hop') res.writeHead(302, { Location: `http://127.0.0.2:${port}/secret` }).end();
    else res.writeHead(200).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const refusedAddress = (address: string) => getAddressProblem(address, address, STRICT_OUTGOING_RULE);

describe('the outgoing-request rule', () => {
  test('every non-public range is refused, in every spelling; public unicast is not', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.1.1',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '192.0.2.1',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
    ]) {
      assert.ok(refusedAddress(address), `${address} should be refused`);
    }
    for (const address of [
      '93.184.216.34',
      '2606:4700::1111',
      '::ffff:93.184.216.34',
      '64:ff9b::5db8:d822',
    ]) {
      assert.equal(refusedAddress(address), null, address);
    }
    for (const url of [
      'https://2130706433/',
      'https://0x7f.1/',
      'https://0177.0.0.01/',
      'https://[::ffff:7f00:1]/',
    ]) {
      assert.match(getOutgoingUrlProblem(new URL(url), STRICT_OUTGOING_RULE) ?? '', /loopback/, url);
    }
  });

  test('metadata addresses are refused even inside an allowed range; the allowance opens the rest', () => {
    const rule = { allowPrivate: ['169.254.0.0/16', '10.0.0.0/8', 'hooks.internal'] };
    assert.match(getAddressProblem('169.254.169.254', 'x', rule) ?? '', /metadata/);
    assert.match(getAddressProblem('fd00:ec2::254', 'x', rule) ?? '', /metadata/);
    assert.match(getAddressProblem('::ffff:169.254.169.254', 'x', rule) ?? '', /metadata/);
    assert.equal(getAddressProblem('169.254.1.1', 'x', rule), null);
    assert.equal(getAddressProblem('10.9.8.7', 'x', rule), null);
    assert.equal(getAddressProblem('192.168.0.1', 'hooks.internal', rule), null, 'allowed by name');
    assert.ok(getAddressProblem('192.168.0.1', 'other.internal', rule));
    assert.equal(
      getOutgoingUrlProblem(new URL('http://hooks.internal/x'), rule),
      null,
      'http to an allowed host',
    );
    assert.match(getOutgoingUrlProblem(new URL('http://example.com/'), rule) ?? '', /only https/);
    assert.match(getOutgoingUrlProblem(new URL('ftp://example.com/'), rule) ?? '', /https only/);
    assert.match(getOutgoingUrlProblem(new URL('https://a:b@example.com/'), rule) ?? '', /user-info/);
  });

  test('allowance entries: names, addresses and CIDR ranges; anything else is not one', () => {
    assert.equal(parseAllowanceEntry('Hooks.Internal.')?.kind, 'host');
    assert.equal(parseAllowanceEntry('10.0.0.0/8')?.kind, 'range');
    assert.equal(parseAllowanceEntry('[::1]')?.kind, 'range');
    for (const bad of ['10.0.0.0/40', 'http://x', 'a b', '', '-x.example'])
      assert.equal(parseAllowanceEntry(bad), null, bad);
  });

  test('at connect time: a name resolving to loopback is refused unless allowed by name', async () => {
    const loopback: OutgoingLookup = (_h, _o, callback) =>
      callback(null, [{ address: '127.0.0.1', family: 4 }]);
    const before = hits;
    await assert.rejects(
      createOutgoingFetch(STRICT_OUTGOING_RULE, { lookup: loopback })(`https://evil.example:${port}/`),
      (error: unknown) =>
        error instanceof OutgoingRequestRefused && /evil\.example was not connected to/.test(error.message),
    );
    // Allowed by name: the same answer connects (plain http to an allowed host).
    const byName = createOutgoingFetch({ allowPrivate: ['wp.internal'] }, { lookup: loopback });
    assert.equal((await byName(`http://wp.internal:${port}/`)).status, 200);
    assert.equal(hits - before, 1);
  });

  test('a redirect is not followed by default; a followed one is checked again where it connects', async () => {
    const rule = { allowPrivate: ['localhost'] };
    const localhostOnly: OutgoingLookup = (_h, _o, callback) =>
      callback(null, [{ address: '127.0.0.1', family: 4 }]);
    const outgoing = createOutgoingFetch(rule, { lookup: localhostOnly });
    const before = hits;
    const manual = await outgoing(`http://localhost:${port}/hop`);
    assert.equal(manual.status, 302);
    await manual.body?.cancel();
    await assert.rejects(
      outgoing(`http://localhost:${port}/hop`, { redirect: 'follow' }),
      OutgoingRequestRefused,
    );
    assert.equal(hits - before, 2, 'the redirect target 127.0.0.2 was never reached');
  });
});
