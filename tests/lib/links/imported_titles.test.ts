// WordPress titles reach links through three doors (the signed webhook, backfill batches, the signed listing);
// each must hand on a title that passes the editor title rule (one line, no control or bidirectional formatting
// characters, at most TITLE_MAX_CHARS), made so rather than refused, so a headline never costs a post its link.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TITLE_MAX_CHARS, titleProblem } from '../../../lib/links/link.ts';
import { backfillPostSchema } from '../../../lib/publishing/backfill_batch.ts';
import { wordpressEventSchema } from '../../../lib/publishing/wordpress_event.ts';
import { listingPageSchema } from '../../../lib/reconcile/wordpress_listing.ts';

const NOW = '2026-12-02T00:00:00Z';

/** Each door's title after parsing `raw`. */
function throughEachDoor(raw: string): Record<string, string | undefined> {
  const event = wordpressEventSchema.parse({
    id: 'd-1',
    event: 'post.published',
    site: 'news',
    postId: 1,
    permalink: 'https://news.example/a/',
    title: raw,
    occurredAt: NOW,
  });
  const post = backfillPostSchema.parse({
    postId: 1,
    permalink: 'https://news.example/a/',
    title: raw,
    publishedAt: NOW,
    modifiedAt: NOW,
  });
  const page = listingPageSchema.parse({
    site: 'news',
    page: 1,
    perPage: 1,
    total: 1,
    totalPages: 1,
    posts: [
      { postId: 1, status: 'draft', permalink: 'https://news.example/a/', title: raw, modifiedAt: NOW },
    ],
  });
  return { webhook: event.title, backfill: post.title, listing: page.posts[0]!.title };
}

describe('titles from WordPress', () => {
  const hostile: [string, string, string | undefined][] = [
    ['a right-to-left override', 'Invoice \u202Efdp.exe', 'Invoice fdp.exe'],
    ['isolates', '\u2066Breaking\u2069 news', 'Breaking news'],
    ['line breaks and tabs', 'Line one\r\nline\ttwo\u2028three', 'Line one line two three'],
    ['C0 and C1 controls', 'A\u0000B\u0007C\u0085D\u001b[31m', 'A B C D [31m'],
    ['a lone surrogate', 'broken \ud800 text', 'broken \ufffd text'],
    ['only controls', '\u0000\n\u202E', undefined],
    ['Arabic with its marks, kept', 'عاجل\u200F: الخبر', 'عاجل\u200F: الخبر'],
  ];
  for (const [what, raw, expected] of hostile) {
    test(`${what}: cleaned to pass the editor title rule`, () => {
      for (const [door, title] of Object.entries(throughEachDoor(raw))) {
        assert.equal(title, expected, `${door}: ${JSON.stringify(title)}`);
        if (title !== undefined) assert.equal(titleProblem(title), null, door);
      }
    });
  }

  test(`a long title is cut to ${TITLE_MAX_CHARS} characters, whatever its length (the listing's too)`, () => {
    for (const raw of ['é'.repeat(900), '🗞'.repeat(5000), 'x'.repeat(200_000)]) {
      for (const [door, title] of Object.entries(throughEachDoor(raw))) {
        assert.ok(title !== undefined, door);
        assert.equal([...title].length, TITLE_MAX_CHARS, door);
        assert.ok(title.endsWith('\u2026'), `${door}: the cut is shown`);
        assert.equal(titleProblem(title), null, door);
      }
    }
  });
});
