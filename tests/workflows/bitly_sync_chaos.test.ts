import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import {
  arabicPermalink,
  waitForPostLink,
  waitForPostWorkflow,
  wordpressEvent,
} from '../../devkit/harness/wordpress_events.ts';

// Every failure mode at once, over many links, then a counting check: each link is correct in Postgres AND
// on the fake, Bitly holds exactly our links under exactly our codes, and no mapping points at a bitlink
// that does not answer the code.

let fake: BitlyFake;
let h: Harness;
before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({ env: fake.env() });
  await h.startWorker({
    vendors: {
      bitly: { timeoutMs: 400, rateLimitRetryMs: 150, quotaRetryMs: 300 },
      retryBaseMs: 40,
      retryMaxMs: 400,
      publishWaitMs: 120_000,
    },
  });
});
after(async () => {
  await h.close();
  await fake.stop();
});

const POSTS_PER_PHASE = 20;
const STOLEN_PER_PHASE = 5;

async function publishMany(firstPostId: number) {
  const ids = Array.from({ length: POSTS_PER_PHASE }, (_, i) => firstPostId + i);
  await Promise.all(
    ids.map(async (postId) => {
      const res = await h.webhook(wordpressEvent('post.published', { postId }));
      assert.equal(res.status, 202);
    }),
  );
  await Promise.all(
    ids.map((postId) =>
      waitForPostLink(h, 'news', postId, (l) => l.status === 'active', { timeoutMs: 120_000 }),
    ),
  );
  await Promise.all(ids.map((postId) => waitForPostWorkflow(h, 'news', postId)));
  return ids;
}

describe('Bitly sync under every failure mode (counting check)', () => {
  test(`${2 * POSTS_PER_PHASE} publishes through 5xx, 429, 403 rate limits, timeouts, drops, slow answers, silent random back-halves and 409s`, async () => {
    fake.maxConcurrent = 5;
    fake.setChaos({
      rate: 0.3,
      kinds: ['5xx', '429', '403-rate', 'timeout', 'drop', 'slow'],
      seed: 20261121,
      slowMs: 200,
    });

    // Phase 1: taken back-halves are answered SILENTLY with a random back-half.
    fake.takenKeyword = 'silent-random';
    fake.stealNextKeywords(STOLEN_PER_PHASE);
    const phase1 = await publishMany(100);
    // Phase 2: taken back-halves are answered with 409.
    fake.takenKeyword = 'conflict';
    fake.stealNextKeywords(STOLEN_PER_PHASE);
    const phase2 = await publishMany(200);
    fake.setChaos(null);

    assert.ok(fake.stats.chaos > 20, `chaos injected ${fake.stats.chaos} failures`);
    assert.equal(fake.stats.silentRandom, STOLEN_PER_PHASE);
    assert.equal(fake.stats.conflicts, STOLEN_PER_PHASE);
    assert.equal(fake.stats.concurrencyRejections, 0, 'never more than 5 requests in flight');

    // Postgres: every post has exactly one active link, synced to Bitly, with a recorded vendor id.
    const rows = await h.db.sql<
      {
        code: string;
        postId: number;
        url: string;
        state: string;
        vendorId: string | null;
        syncedUrl: string;
      }[]
    >`
      SELECT l.code, l.post_id AS "postId", l.target_url AS url, v.state, v.vendor_id AS "vendorId", v.synced_url AS "syncedUrl"
      FROM links l LEFT JOIN vendor_links v ON v.code = l.code AND v.vendor = 'bitly'
      WHERE l.site = 'news' AND l.status = 'active'`;
    const posts = [...phase1, ...phase2];
    assert.equal(rows.length, posts.length);
    assert.deepEqual(rows.map((r) => r.postId).sort(), [...posts].sort());
    for (const row of rows) {
      assert.equal(row.state, 'synced', `${row.code}: ${row.state}`);
      assert.equal(row.url, arabicPermalink(row.postId));
      assert.equal(row.syncedUrl, row.url);
      // The fake: our code is the back-half, of the bitlink we recorded, pointing at the permalink.
      const onBitly = fake.linkByKeyword(row.code);
      assert.ok(onBitly, `Bitly holds ${row.code}`);
      assert.equal(
        onBitly.id,
        row.vendorId,
        `${row.code}: the recorded mapping is the bitlink that answers the code`,
      );
      assert.equal(onBitly.longUrl, row.url);
      assert.equal(onBitly.group, fake.groupGuid);
      assert.equal(onBitly.archived, false);
    }

    // The fake: the live links of our group are exactly our links, each under exactly its code.
    const live = fake.listLinks().filter((l) => !l.archived);
    assert.equal(live.length, posts.length, 'no duplicate or stray live bitlinks');
    const ourCodes = new Set(rows.map((r) => r.code));
    for (const link of live) {
      assert.equal(link.keywords.length, 1);
      assert.ok(ourCodes.has(link.keywords[0]!), `live bitlink ${link.id} answers one of our codes`);
    }
    // The silent random back-halves were archived, never kept as a mapping.
    const archived = fake.listLinks().filter((l) => l.archived);
    assert.equal(archived.length, STOLEN_PER_PHASE);
    for (const stray of archived) {
      assert.equal(stray.keywords.length, 0);
      assert.ok(!rows.some((r) => r.vendorId === stray.id));
    }
    // Every refused code was replaced before it was ever shared, and is audited.
    const reminted = await h.db.sql`SELECT 1 FROM audit_log WHERE action = 'link.reminted'`;
    assert.equal(reminted.length, 2 * STOLEN_PER_PHASE);
    const collisions = await h.db.sql`SELECT 1 FROM vendor_links WHERE state <> 'synced'`;
    assert.equal(collisions.length, 0);
  });
});
