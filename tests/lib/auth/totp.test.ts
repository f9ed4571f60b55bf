// RFC 6238 against its own test vectors (SHA-1, the appendix's secret), the ±1 step window, and reuse.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  base32Decode,
  base32Encode,
  generateTotpSecret,
  matchTotp,
  totpCode,
  totpStep,
  totpUri,
} from '../../../lib/auth/totp.ts';

// RFC 6238 Appendix B: the SHA-1 secret is the ASCII of "12345678901234567890".
const RFC_SECRET = base32Encode(new TextEncoder().encode('12345678901234567890'));
// Times (s) and the 8-digit codes of the appendix; six digits are their last six.
const VECTORS: [number, string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

describe('TOTP (RFC 6238)', () => {
  test('the RFC test vectors, six digits', async () => {
    for (const [seconds, code] of VECTORS) {
      assert.equal(await totpCode(RFC_SECRET, totpStep(seconds * 1000)), code.slice(-6), `T=${seconds}`);
    }
  });

  test('base32 round trip (RFC 4648), case and spaces ignored', () => {
    assert.equal(base32Encode(new TextEncoder().encode('foobar')), 'MZXW6YTBOI');
    assert.equal(new TextDecoder().decode(base32Decode('mzxw 6ytb oi======')), 'foobar');
    const secret = generateTotpSecret();
    assert.equal(secret.length, 32, '160 bits');
    assert.equal(base32Encode(base32Decode(secret)), secret);
    assert.throws(() => base32Decode('not-base32!'));
  });

  test('a code is accepted one step either side of now, not two', async () => {
    const now = 1_700_000_015_000;
    const step = totpStep(now);
    for (const offset of [-1, 0, 1]) {
      const code = await totpCode(RFC_SECRET, step + offset);
      assert.equal(await matchTotp(RFC_SECRET, code, now, 0), step + offset, `offset ${offset}`);
    }
    for (const offset of [-2, 2]) {
      const code = await totpCode(RFC_SECRET, step + offset);
      // A code of a far step may equal a near one by chance (1 in a million); this secret's do not.
      assert.equal(await matchTotp(RFC_SECRET, code, now, 0), null, `offset ${offset}`);
    }
  });

  test('a code whose step was accepted already (or an older one) never counts again', async () => {
    const now = 1_700_000_015_000;
    const step = totpStep(now);
    const code = await totpCode(RFC_SECRET, step);
    assert.equal(await matchTotp(RFC_SECRET, code, now, step), null, 'the same step');
    assert.equal(await matchTotp(RFC_SECRET, code, now, step + 1), null, 'a newer step was used');
    const previous = await totpCode(RFC_SECRET, step - 1);
    assert.equal(await matchTotp(RFC_SECRET, previous, now, step - 2), step - 1);
  });

  test('anything but six digits is no code', async () => {
    const now = Date.now();
    for (const typed of ['', '12345', '1234567', 'abcdef', '12 34 5x']) {
      assert.equal(await matchTotp(RFC_SECRET, typed, now, 0), null, typed);
    }
    const code = await totpCode(RFC_SECRET, totpStep(now));
    assert.notEqual(await matchTotp(RFC_SECRET, `${code.slice(0, 3)} ${code.slice(3)}`, now, 0), null);
  });

  test('the otpauth URI authenticator apps read', () => {
    const text = totpUri('JBSWY3DPEHPK3PXP', 'nadia@newsroom.example', 'Lifeline');
    assert.ok(text.startsWith('otpauth://totp/Lifeline:nadia%40newsroom.example?'), text);
    const uri = new URL(text);
    assert.equal(uri.searchParams.get('secret'), 'JBSWY3DPEHPK3PXP');
    assert.equal(uri.searchParams.get('issuer'), 'Lifeline');
    assert.equal(uri.searchParams.get('digits'), '6');
    assert.equal(uri.searchParams.get('period'), '30');
  });
});
