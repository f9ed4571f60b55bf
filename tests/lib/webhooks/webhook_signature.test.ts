// Our Standard Webhooks signing (node:crypto) checked by an independent implementation, the `standardwebhooks`
// package: a signature by one secret, two during a rotation, and what does not verify.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  newWebhookSecret,
  standardWebhookHeaders,
  webhookBody,
} from '../../../lib/webhooks/webhook_signature.ts';

describe('Standard Webhooks signing', () => {
  const body = webhookBody({
    eventType: 'link.created',
    createdAt: new Date('2026-12-02T12:00:00Z'),
    payload: { code: 'abc12', url: 'https://example.com/قصة' },
  });
  const now = Math.floor(Date.now() / 1000);

  test('one secret: the package verifies it and returns the body', () => {
    const secret = newWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const headers = standardWebhookHeaders([secret], 'msg_0123', now, body);
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers));
    assert.throws(() => new Webhook(secret).verify(`${body} `, headers));
    assert.throws(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'msg_other' }));
  });

  test('a rotation: two signatures, each secret verifies', () => {
    const [old, next] = [newWebhookSecret(), newWebhookSecret()];
    const headers = standardWebhookHeaders([next, old], 'msg_4567', now, body);
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
    for (const secret of [old, next]) assert.ok(new Webhook(secret).verify(body, headers));
  });
});
