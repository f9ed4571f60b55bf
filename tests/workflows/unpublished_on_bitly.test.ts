import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import {
  waitForPostLink,
  waitForPostSynced,
  waitForPostWorkflow,
  wordpressEvent,
} from '../../devkit/harness/wordpress_events.ts';

// Bitly cannot answer 410 and an archived bitlink may still redirect: while Bitly fronts the short domain (a
// failover window), the Bitly copy of an unpublished post's link must lead to our gone page, never to the
// article. Publish → unpublish → republish against the Bitly fake, reading what its redirect answers.

let fake: BitlyFake;
let h: Harness;

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({ env: fake.env() });
  await h.startWorker({
    vendors: { bitly: { timeoutMs: 1_000 }, retryBaseMs: 50, retryMaxMs: 400, publishWaitMs: 60_000 },
  });
});
after(async () => {
  await h.close();
  await fake.stop();
});
beforeEach(() => fake.reset());

let nextPost = 8500; // post IDs are workflow IDs on the shared dev server: a range no other file uses

async function send(body: ReturnType<typeof wordpressEvent>) {
  const res = await h.webhook(body);
  assert.equal(res.status, 202, await res.clone().text());
}

/** The post's workflow, then the sync queue's drainer it handed the change to. */
async function settled(postId: number, code: string) {
  await waitForPostSynced(h, 'news', postId, code);
}

/** Where a reader who reaches Bitly's copy of `code` is sent (the fake's own redirect). */
async function bitlyLocation(code: string): Promise<string | null> {
  const res = await fetch(`${fake.url}/${code}`, { redirect: 'manual' });
  await res.body?.cancel();
  return res.headers.get('Location');
}

async function unpublishThenRepublish() {
  const postId = nextPost++;
  await send(wordpressEvent('post.published', { postId }));
  const link = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
  // A first publish places the link on Bitly itself (no sync workflow yet).
  await waitForPostWorkflow(h, 'news', postId);
  assert.equal(await bitlyLocation(link.code), link.url);
  const gonePage = `${h.config.shortBaseUrl}/${link.code}+`;

  await send(wordpressEvent('post.unpublished', { postId }));
  await waitForPostLink(h, 'news', postId, (l) => l.status === 'gone');
  await settled(postId, link.code);
  const copy = fake.linkByKeyword(link.code);
  assert.equal(copy?.longUrl, gonePage, 'the Bitly copy leads to our gone page, not to the article');
  assert.equal(copy?.archived, true);
  assert.equal(await bitlyLocation(link.code), gonePage);
  // Our gone page answers without naming the article.
  const page = await h.app.request(`/${link.code}+`);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /410 Gone/);
  assert.ok(!html.includes(link.url), 'the gone page does not name the old article');

  await send(wordpressEvent('post.published', { postId }));
  await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
  await settled(postId, link.code);
  const restored = fake.linkByKeyword(link.code);
  assert.equal(restored?.longUrl, link.url, 'republish restores the permalink on Bitly');
  assert.equal(restored?.archived, false);
  assert.equal(await bitlyLocation(link.code), link.url);
  return link;
}

describe('an unpublished post on Bitly', () => {
  test('publish → unpublish: Bitly sends readers to our gone page; republish: to the permalink again', async () => {
    await unpublishThenRepublish();
    assert.equal(fake.listLinks().length, 1, 'one bitlink, edited in place');
  });

  test('a plan that refuses destination edits: the back-half moves to a bitlink for the gone page and back', async () => {
    fake.patchLongUrl = 'upgrade-required';
    const link = await unpublishThenRepublish();
    // Each move made a new bitlink and archived the one it left; only the current one holds our code.
    const holders = fake.listLinks().filter((l) => l.keywords.includes(link.code));
    assert.equal(holders.length, 1);
  });
});
