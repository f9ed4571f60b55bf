// A dead article starts the WordPress reconciliation of that post only (real Postgres and Temporal, the signed
// listing fake the reconciliation tests use): the check's verdict is written as the checks write it and acted on
// (actOnDestination); the post's workflow asks the listing for that post (`post_id`) and repairs its link as
// WordPress says, and nothing else of the site. A link whose post WordPress says is published is never switched
// to its archived copy. A plugin that cannot list one post gets the whole site's reconciliation. WordPress post
// IDs 97601–97606 of the site `wppost` are this file's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WordPressListingFake } from '../../devkit/fakes/wordpress_listing_fake.ts';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { actOnDestination } from '../../lib/destinations/act_on_destination.ts';
import type { WordPressPostResult } from '../../lib/reconcile/reconcile_wordpress_post.ts';
import { recordArchiveResult } from '../../lib/stores/destination_state_store.ts';
import { getLinkByCode } from '../../lib/stores/link_store.ts';
import { upsertWordPressSite } from '../../lib/stores/wordpress_site_store.ts';
import { destinationDepsOf } from '../../routes/api/destinations.ts';
import {
  getWordPressPostReconcileWorkflowId,
  getWordPressReconcileWorkflowId,
  type WordPressReconcileReport,
} from '../../workflows/contract.ts';
import { writeDestinationVerdict } from '../helpers/destination_verdicts.ts';

const SITE = 'wppost';
let h: Harness;
let wp: WordPressListingFake;

before(async () => {
  h = await createHarness({ env: { SAFETY_TRUSTED_HOSTS: '127.0.0.1' } });
  await h.startWorker();
  wp = await new WordPressListingFake(SITE, h.webhookSecret).start();
  await upsertWordPressSite(h.db.sql, SITE, wp.restUrl, new Date());
});
after(async () => {
  await wp?.stop();
  await h?.close();
});

const permalink = (id: number, slug = `story-${id}`) => `${wp.url}/${slug}/`;

/** A post's link, as a publish made it an hour ago, with an archived copy and the policy `fallback`. */
async function postLink(code: string, postId: number): Promise<void> {
  const url = permalink(postId);
  await h.db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner, site, post_id, created_at, dead_policy)
    VALUES (${code}, ${url}, 'active', 'clean', 'wordpress', ${`wordpress:${SITE}`}, ${SITE}, ${postId},
            now() - interval '1 hour', 'fallback')`;
  await writeDestinationVerdict(h.db.sql, { code, url, host: '127.0.0.1', outcome: 'ok', verdict: 'ok' });
  await recordArchiveResult(h.db.sql, {
    code,
    url,
    state: 'found',
    archiveUrl: `https://web.archive.org/web/20250101000000/${url}`,
    archiveAt: new Date('2025-01-01T00:00:00Z'),
  });
}

/** The checks confirm the article dead (404 twice a day apart), then act: that post's reconciliation runs. */
async function deadArticle(code: string, postId: number, history?: string): Promise<WordPressPostResult> {
  const link = await getLinkByCode(h.db.sql, code);
  await writeDestinationVerdict(h.db.sql, {
    code,
    url: link!.targetUrl,
    host: '127.0.0.1',
    outcome: 'gone',
    verdict: 'dead',
    httpStatus: 404,
    chain: [{ url: link!.targetUrl, status: 404 }],
  });
  const acted = await actOnDestination(destinationDepsOf(h.deps), { code, actor: 'system:test' });
  assert.deepEqual(acted, { action: 'wordpress_reconcile', policy: 'fallback' });
  const workflowId = getWordPressPostReconcileWorkflowId(h.taskQueue, SITE, postId);
  const result = (await h.temporal.client.workflow.getHandle(workflowId).result()) as WordPressPostResult;
  if (history) await recordHistory(history, workflowId);
  return result;
}

async function answer(code: string): Promise<[number, string | null]> {
  const res = await h.app.request(`/${code}`);
  return [res.status, res.headers.get('Location')];
}

describe('a dead WordPress article', () => {
  test('reconciles that post only, as WordPress says; a published post is never switched to its copy', async () => {
    await postLink('wpPub1', 97601);
    await postLink('wpMove2', 97602);
    await postLink('wpOther3', 97603);
    await postLink('wpTrash4', 97604);
    await postLink('wpGone5', 97605);
    wp.put({ postId: 97601, status: 'publish', permalink: permalink(97601) });
    wp.put({ postId: 97602, status: 'publish', permalink: permalink(97602, '2026/story-97602') });
    // Moved in WordPress too, but no check found it dead: the post-only passes must leave it alone.
    wp.put({ postId: 97603, status: 'publish', permalink: permalink(97603, '2026/story-97603') });
    wp.put({ postId: 97604, status: 'trash', permalink: permalink(97604) });
    // 97605 was deleted for good: the listing does not have it.
    const requestsBefore = wp.requests.length;

    // Published where the link points: our check saw a passing failure. Nothing changes; never the copy.
    assert.deepEqual(await deadArticle('wpPub1', 97601), {
      site: SITE,
      postId: 97601,
      wordpress: 'publish',
      linkStatus: 'active',
    });
    assert.deepEqual(await answer('wpPub1'), [301, permalink(97601)]);
    assert.equal((await getLinkByCode(h.db.sql, 'wpPub1'))?.fallbackUrl, null, 'never switched to the copy');

    // Published at a new permalink: retargeted to it.
    assert.equal(
      (await deadArticle('wpMove2', 97602, 'reconcileWordPressPostWorkflow-retargeted')).wordpress,
      'publish',
    );
    assert.deepEqual(await answer('wpMove2'), [301, permalink(97602, '2026/story-97602')]);
    // Trashed: gone. Deleted for good: gone.
    assert.deepEqual(
      [(await deadArticle('wpTrash4', 97604)).wordpress, (await answer('wpTrash4'))[0]],
      ['trash', 410],
    );
    assert.deepEqual(await deadArticle('wpGone5', 97605), {
      site: SITE,
      postId: 97605,
      wordpress: 'absent',
      linkStatus: 'gone',
    });
    assert.equal((await answer('wpGone5'))[0], 410);

    // Only the four posts were asked for, one request each, and nothing else of the site changed.
    const asked = wp.requests.slice(requestsBefore);
    assert.deepEqual(
      asked.map((r) => new URL(r, 'http://x').searchParams.get('post_id')),
      ['97601', '97602', '97604', '97605'],
    );
    assert.deepEqual(await answer('wpOther3'), [301, permalink(97603)], 'the other post is untouched');
    const audit = await h.db.sql<{ code: string; action: string }[]>`
      SELECT code, action FROM audit_log WHERE code LIKE 'wp%' AND action <> 'link.created' ORDER BY id`;
    assert.deepEqual(
      audit.map((a) => [a.code, a.action]),
      [
        ['wpMove2', 'link.retargeted'],
        ['wpTrash4', 'link.status_changed'],
        ['wpGone5', 'link.status_changed'],
      ],
    );
    const fallbacks = await h.db.sql`SELECT code FROM links WHERE fallback_url IS NOT NULL`;
    assert.equal(fallbacks.length, 0, 'no WordPress-bound link answers a copy');
  });

  test('a plugin that cannot list one post: its absence proves nothing, the whole site is reconciled', async () => {
    // Deleted for good in WordPress; a plugin from before `post_id` answers the listing's first page instead.
    await postLink('wpOld6', 97606);
    wp.ignorePostId = true;
    try {
      assert.deepEqual(await deadArticle('wpOld6', 97606, 'reconcileWordPressPostWorkflow-whole-site'), {
        site: SITE,
        postId: 97606,
        wordpress: 'unknown',
        linkStatus: 'active',
        wholeSite: true,
      });
      // The site's full pass: a complete listing, so the absence counts, and the other drift is repaired too.
      const report = (await h.temporal.client.workflow
        .getHandle(getWordPressReconcileWorkflowId(h.taskQueue, SITE))
        .result()) as WordPressReconcileReport;
      assert.equal(report.complete, true);
      assert.equal((await answer('wpOld6'))[0], 410);
      assert.deepEqual(await answer('wpOther3'), [301, permalink(97603, '2026/story-97603')]);
    } finally {
      wp.ignorePostId = false;
    }
  });
});
