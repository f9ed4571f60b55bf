import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { signWebhook, verifyWebhookSignature } from '../../../lib/auth/webhook_signature.ts';

const secret = 'whsec_0123456789abcdef';
const body = '{"id":"d1","title":"\\u0627\\u0644 \\/ x"}';

describe('webhook signatures', () => {
  test('match an independent HMAC over "<t>.<raw body>" (API.md)', async () => {
    const header = await signWebhook(secret, body, 1_700_000_000);
    const expected = createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex');
    assert.equal(header, `t=1700000000,v1=${expected}`);
    assert.deepEqual(await verifyWebhookSignature(secret, header, body, 1_700_000_100), { ok: true });
  });

  test('reject a wrong secret, an edited body, a stale or future timestamp, and malformed headers', async () => {
    const header = await signWebhook(secret, body, 1_700_000_000);
    const now = 1_700_000_000;
    const cases: [string | undefined, string, number, RegExp][] = [
      [await signWebhook('whsec_other_secret_00', body, now), body, now, /does not match/],
      [header, body.replace('d1', 'd2'), now, /does not match/],
      [header, body, now + 301, /outside/],
      [header, body, now - 301, /outside/],
      [undefined, body, now, /missing/],
      ['v1=abc', body, now, /timestamp/],
      [`t=${now}`, body, now, /no v1/],
      [`t=abc,v1=${'0'.repeat(64)}`, body, now, /timestamp/],
    ];
    for (const [h, b, at, reason] of cases) {
      const result = await verifyWebhookSignature(secret, h, b, at);
      assert.equal(result.ok, false);
      assert.match((result as { reason: string }).reason, reason);
    }
  });

  test('accept any of several v1 values (secret rotation)', async () => {
    const good = (await signWebhook(secret, body, 1_700_000_000)).split('v1=')[1];
    const header = `t=1700000000,v1=${'f'.repeat(64)},v1=${good}`;
    assert.deepEqual(await verifyWebhookSignature(secret, header, body, 1_700_000_000), { ok: true });
  });
});
