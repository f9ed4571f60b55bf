import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import { type SignedKind, signKind, signWebhook } from '../../../lib/auth/webhook_signature.ts';

// Signed WordPress deliveries are checked for their kind (v2): an event's signature does not open the backfill
// route nor the other way round, and once a v2 value is present a v1 value beside it does not count. A v1-only
// delivery (a plugin that predates v2) still passes.

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h?.close();
});

let nextPost = 8100; // post IDs are workflow IDs on the shared dev server: a range no other file uses
function event() {
  const postId = nextPost++;
  return JSON.stringify({
    id: `kinds-${postId}-${Date.now()}`,
    event: 'post.unpublished',
    site: 'news',
    postId,
    occurredAt: new Date().toISOString(),
  });
}

async function post(path: string, body: string, signature: string) {
  const res = await h.app.request(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Lifeline-Signature': signature },
    body,
  });
  return { status: res.status, text: await res.text() };
}

const now = () => Date.now() / 1000;
const v2 = (kind: SignedKind, body: string, secret = h.webhookSecret) => signKind(secret, kind, body, now());

describe('WordPress signatures by kind', () => {
  test('an event signed for its kind passes; signed as another kind, it is refused', async () => {
    const body = event();
    assert.notEqual((await post('/api/v1/hooks/wordpress', body, await v2('event', body))).status, 401);
    for (const kind of ['backfill', 'listing-answer', 'listing-request'] as const) {
      const other = event();
      const res = await post('/api/v1/hooks/wordpress', other, await v2(kind, other));
      assert.equal(res.status, 401, `${kind}: ${res.text}`);
    }
  });

  test('a backfill batch signed as an event or a listing answer is refused before its body is read as a batch', async () => {
    const body = JSON.stringify({ not: 'a batch' });
    for (const kind of ['event', 'listing-answer'] as const) {
      const res = await post('/api/v1/hooks/wordpress/backfill', body, await v2(kind, body));
      assert.equal(res.status, 401, `${kind}: ${res.text}`);
    }
    // Signed as a backfill batch, the same body gets as far as validation.
    assert.equal(
      (await post('/api/v1/hooks/wordpress/backfill', body, await v2('backfill', body))).status,
      400,
    );
  });

  test('v1 alone still passes (older plugins); next to a v2 value only the v2 value counts', async () => {
    const body = event();
    assert.notEqual(
      (await post('/api/v1/hooks/wordpress', body, await signWebhook(h.webhookSecret, body, now()))).status,
      401,
    );
    const mixed = event();
    const good = await signWebhook(h.webhookSecret, mixed, now());
    const wrongV2 = (await v2('event', mixed, 'another-secret-entirely')).split(',v2=')[1];
    const res = await post('/api/v1/hooks/wordpress', mixed, `${good},v2=${wrongV2}`);
    assert.equal(res.status, 401, res.text);
  });
});
