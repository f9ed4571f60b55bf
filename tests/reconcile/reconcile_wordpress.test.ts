import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { WordPressListingFake } from '../../devkit/fakes/wordpress_listing_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { listingRequestMessage, signKind, signWebhook } from '../../lib/auth/webhook_signature.ts';
import { fetchListingPage } from '../../lib/reconcile/wordpress_listing.ts';
import { getWordPressReconcileWorkflowId } from '../../workflows/contract.ts';

// The WordPress leg of reconciliation against a signed listing that behaves like the plugin's (real Postgres
// and Temporal): each kind of drift found and repaired with WordPress winning, started by site.permalinks_changed;
// the outbound guards (signature, other hosts, size).

const SITE = 'wpnews';
let h: Harness;
let wp: WordPressListingFake;

before(async () => {
  h = await createHarness({ env: { SAFETY_TRUSTED_HOSTS: '127.0.0.1' } });
  await h.startWorker();
  wp = await new WordPressListingFake(SITE, h.webhookSecret).start();
});
after(async () => {
  await wp?.stop();
  await h?.close();
});

const permalink = (id: number, slug = `story-${id}`) => `${wp.url}/${slug}/`;

async function insertPostLink(code: string, postId: number, url: string, status = 'active') {
  await h.db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner, site, post_id, created_at)
    VALUES (${code}, ${url}, ${status}, 'clean', 'wordpress', ${`wordpress:${SITE}`}, ${SITE}, ${postId},
            now() - interval '1 hour')`;
}

async function siteEvent(reason = 'permalink_structure') {
  const body = {
    id: randomUUID(),
    event: 'site.permalinks_changed',
    site: SITE,
    occurredAt: new Date().toISOString(),
    restUrl: wp.restUrl,
    reason,
  };
  return { body, res: await h.webhook(body) };
}

type Report = {
  wordpress: { drift: Record<string, number>; repaired: Record<string, number>; unrepaired: string[] } | null;
  read: number;
  complete: boolean;
};

describe('WordPress leg of reconciliation', () => {
  test('site.permalinks_changed starts it at once; each kind of drift is found and repaired, WordPress winning', async () => {
    await insertPostLink('wpSync1', 1, permalink(1));
    await insertPostLink('wpMove2', 2, permalink(2));
    await insertPostLink('wpTrash3', 3, permalink(3));
    await insertPostLink('wpBack4', 4, permalink(4), 'gone');
    await insertPostLink('wpDel6', 6, permalink(6));
    wp.put({ postId: 1, status: 'publish', permalink: permalink(1) });
    wp.put({ postId: 2, status: 'publish', permalink: permalink(2, '2026/story-2') });
    wp.put({ postId: 3, status: 'trash', permalink: permalink(3) });
    wp.put({ postId: 4, status: 'publish', permalink: permalink(4) });
    wp.put({ postId: 5, status: 'publish', permalink: permalink(5) });
    wp.put({ postId: 7, status: 'draft', permalink: `${wp.url}/?p=7` });
    wp.put({ postId: 8, status: 'future', permalink: `${wp.url}/?p=8` });
    // Post 6 was deleted for good: it is not listed at all.

    const { body, res } = await siteEvent();
    assert.equal(res.status, 202, await res.clone().text());
    const workflowId = getWordPressReconcileWorkflowId(h.taskQueue, SITE);
    assert.deepEqual(await res.json(), { workflowId });
    const report = (await h.temporal.client.workflow.getHandle(workflowId).result()) as Report;
    await recordHistory('reconcileWordPressWorkflow-repaired', workflowId);
    assert.equal(report.complete, true);
    assert.equal(report.read, 7);
    assert.deepEqual(report.wordpress?.drift, { stale: 2, gone: 2, missing: 1 });
    assert.deepEqual(report.wordpress?.repaired, { stale: 2, gone: 2, missing: 1 });
    assert.ok(
      wp.requests.every((r) => r.startsWith('/wp-json/lifeline/v1/posts?page=')),
      'signed listing only',
    );

    const location = async (code: string) => {
      const answer = await h.app.request(`/${code}`);
      return [answer.status, answer.headers.get('Location')];
    };
    assert.deepEqual(await location('wpSync1'), [301, permalink(1)]);
    assert.deepEqual(
      await location('wpMove2'),
      [301, permalink(2, '2026/story-2')],
      'moved permalink: retargeted',
    );
    assert.deepEqual((await location('wpTrash3'))[0], 410, 'trashed: gone');
    assert.deepEqual(
      await location('wpBack4'),
      [301, permalink(4)],
      'published again: the same code is back',
    );
    assert.deepEqual((await location('wpDel6'))[0], 410, 'deleted for good: gone');
    const created = await h.api(`/api/v1/links/by-post/${SITE}/5`);
    assert.equal(created.status, 200, 'a missed publish gets its link');
    const five = (await created.json()) as { url: string; status: string };
    assert.deepEqual([five.url, five.status], [permalink(5), 'active']);
    for (const id of [7, 8]) assert.equal((await h.api(`/api/v1/links/by-post/${SITE}/${id}`)).status, 404);
    const audit = await h.db.sql<{ action: string; before: { url?: string } }[]>`
      SELECT action, before FROM audit_log WHERE code = 'wpMove2' ORDER BY id`;
    assert.deepEqual(
      audit.map((a) => [a.action, a.before.url]),
      [['link.retargeted', permalink(2)]],
    );

    // The same delivery again changes nothing; a second run finds nothing to repair.
    const again = await h.webhook(body);
    assert.equal(again.status, 202);
    const { res: second } = await siteEvent('home');
    const secondReport = (await h.temporal.client.workflow
      .getHandle(((await second.json()) as { workflowId: string }).workflowId)
      .result()) as Report;
    assert.deepEqual(secondReport.wordpress?.drift, {});
    const runs = await h.db.sql<{ status: string }[]>`
      SELECT status FROM ops_runs WHERE kind = 'reconcile' AND workflow_id LIKE ${`${workflowId}:%`}`;
    assert.deepEqual(
      runs.map((r) => r.status),
      ['succeeded', 'succeeded'],
      'each pass is an operations run',
    );
  });

  test('the listing is trusted only when signed, only on its own host, and within its size cap', async () => {
    const deps = {
      getSecret: async () => h.webhookSecret,
      restUrls: {},
      outgoing: { allowPrivate: ['127.0.0.1'] },
    };
    const page = await fetchListingPage(deps, { site: SITE, restUrl: wp.restUrl, page: 1 });
    assert.equal(page.site, SITE);
    wp.answerSecret = 'forged-by-a-proxy';
    try {
      await assert.rejects(
        fetchListingPage(deps, { site: SITE, restUrl: wp.restUrl, page: 1 }),
        /signature is refused/,
      );
    } finally {
      wp.answerSecret = null;
    }
    await assert.rejects(
      fetchListingPage(
        { ...deps, getSecret: async () => 'not-the-secret-xx' },
        { site: SITE, restUrl: wp.restUrl, page: 1 },
      ),
      /answered 401 \(the plugin refused our signature/,
    );
    wp.redirectTo = 'http://127.0.0.2:9/wp-json/lifeline/v1/posts';
    try {
      await assert.rejects(
        fetchListingPage(deps, { site: SITE, restUrl: wp.restUrl, page: 1 }),
        /redirected to 127\.0\.0\.2:9/,
      );
    } finally {
      wp.redirectTo = null;
    }
    await assert.rejects(
      fetchListingPage({ ...deps, maxBytes: 64 }, { site: SITE, restUrl: wp.restUrl, page: 1 }),
      /64-byte cap/,
    );
    await assert.rejects(
      fetchListingPage(deps, { site: 'another-site', restUrl: wp.restUrl, page: 1 }),
      /belongs to site "wpnews"/,
    );
    // A run whose listing is refused changes nothing and is recorded as failed.
    wp.answerSecret = 'forged-by-a-proxy';
    try {
      await h.db.sql`UPDATE links SET status = 'active' WHERE code = 'wpTrash3'`;
      const { res } = await siteEvent();
      const workflowId = ((await res.json()) as { workflowId: string }).workflowId;
      await assert.rejects(h.temporal.client.workflow.getHandle(workflowId).result());
      const [run] = await h.db.sql<{ status: string; report: { error: string } }[]>`
        SELECT status, report FROM ops_runs WHERE workflow_id LIKE ${`${workflowId}:%`} ORDER BY started_at DESC LIMIT 1`;
      assert.equal(run!.status, 'failed');
      assert.match(run!.report.error, /signature is refused/);
      const [still] = await h.db.sql<{ status: string }[]>`SELECT status FROM links WHERE code = 'wpTrash3'`;
      assert.equal(still!.status, 'active', 'nothing changed on an untrusted answer');
    } finally {
      wp.answerSecret = null;
    }
    await eventually(async () => true);
  });

  test('each request is signed for its host and a nonce; an answer is bound to it, and passes for nothing else', async () => {
    const deps = {
      getSecret: async () => h.webhookSecret,
      restUrls: {},
      outgoing: { allowPrivate: ['127.0.0.1'] },
    };
    // Two reads: two nonces, each accepted once by the plugin.
    const seen = wp.nonces.size;
    await fetchListingPage(deps, { site: SITE, restUrl: wp.restUrl, page: 1 });
    await fetchListingPage(deps, { site: SITE, restUrl: wp.restUrl, page: 1 });
    assert.equal(wp.nonces.size, seen + 2);

    // An answer the plugin signed for one request, captured and served again for another, is refused.
    const nonce = randomBytes(16).toString('hex');
    const target = '/wp-json/lifeline/v1/posts?page=1&per_page=500';
    const host = new URL(wp.url).host;
    const captured = await fetch(`${wp.url}${target}`, {
      headers: {
        'X-Lifeline-Signature': await signKind(
          h.webhookSecret,
          'listing-request',
          listingRequestMessage('GET', host, target, nonce),
          Date.now() / 1000,
          nonce,
        ),
      },
    });
    assert.equal(captured.status, 200);
    const answer = { header: captured.headers.get('x-lifeline-signature')!, body: await captured.text() };
    wp.replayAnswer = answer;
    try {
      await assert.rejects(
        fetchListingPage(deps, { site: SITE, restUrl: wp.restUrl, page: 1 }),
        /signature is refused \(signature does not match\)/,
      );
      // A plugin that still signs answers v1 is not trusted either.
      wp.replayAnswer = {
        header: await signWebhook(h.webhookSecret, answer.body, Date.now() / 1000),
        body: answer.body,
      };
      await assert.rejects(
        fetchListingPage(deps, { site: SITE, restUrl: wp.restUrl, page: 1 }),
        /signature is refused \(signature has no v2= value/,
      );
    } finally {
      wp.replayAnswer = null;
    }

    // The same signed answer posted to Lifeline as a backfill batch or an event: refused as unsigned for that kind.
    for (const path of ['/api/v1/hooks/wordpress/backfill', '/api/v1/hooks/wordpress']) {
      const res = await h.app.request(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Lifeline-Signature': answer.header },
        body: answer.body,
      });
      assert.equal(res.status, 401, `${path}: ${await res.clone().text()}`);
    }

    // Plain http to anything but loopback is refused before any request.
    await assert.rejects(
      fetchListingPage(deps, { site: SITE, restUrl: 'http://wp.example/wp-json/lifeline/v1/', page: 1 }),
      /is not https/,
    );
  });

  test('an article link hijacked through its expiry: refused to links:write; one that expired anyway is healed by reconciliation and by post.updated', async () => {
    const issued = await h.api('/api/v1/keys', {
      method: 'POST',
      json: { name: 'integrator', scopes: ['links:write'] },
    });
    const writerKey = ((await issued.json()) as { key: string }).key;
    await insertPostLink('wpHijk9', 9, permalink(9));
    wp.put({ postId: 9, status: 'publish', permalink: permalink(9) });
    const location = async (code: string) => {
      const answer = await h.app.request(`/${code}`);
      return [answer.status, answer.headers.get('Location')];
    };

    // The attack: an expiry a few seconds ahead and a fallback on another host.
    const attempt = await h.api('/api/v1/links/wpHijk9', {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${writerKey}` },
      json: {
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
        expiredUrl: 'https://evil.example/phish',
      },
    });
    assert.equal(attempt.status, 403, await attempt.clone().text());

    // An expiry that got there anyway (an admin's, or one set before this rule) is carried out by the sweeper…
    await h.db.sql`
      UPDATE links SET expires_at = now() + interval '1 second', expired_url = 'https://evil.example/phish',
                       version = version + 1
      WHERE code = 'wpHijk9'`;
    await h.deps.workflows.syncLink('wpHijk9', 'expiry set');
    await eventually(async () => {
      const [row] = await h.db.sql`SELECT status FROM links WHERE code = 'wpHijk9'`;
      return row?.status === 'expired' ? true : undefined;
    });
    assert.deepEqual(await location('wpHijk9'), [302, 'https://evil.example/phish'], 'hijacked');

    // …and reconciliation sees an expired link of a published post as drift: back to the article, for good.
    const { res } = await siteEvent();
    const workflowId = ((await res.json()) as { workflowId: string }).workflowId;
    const report = (await h.temporal.client.workflow.getHandle(workflowId).result()) as Report;
    assert.equal(report.wordpress?.repaired.stale, 1, JSON.stringify(report.wordpress));
    assert.deepEqual(await location('wpHijk9'), [301, permalink(9)], 'healed');
    const [row] = await h.db.sql<{ status: string; expiresAt: Date | null; expiredUrl: string | null }[]>`
      SELECT status, expires_at AS "expiresAt", expired_url AS "expiredUrl" FROM links WHERE code = 'wpHijk9'`;
    assert.deepEqual(row, { status: 'active', expiresAt: null, expiredUrl: null }, 'no expiry left to fire');
    const [audit] = await h.db.sql<
      { actor: string; before: { status: string; expiredUrl: string }; after: unknown }[]
    >`SELECT actor, before, after FROM audit_log WHERE code = 'wpHijk9' AND actor LIKE 'wordpress:%'
      ORDER BY id DESC LIMIT 1`;
    assert.equal(audit?.actor, `wordpress:${SITE}`);
    assert.deepEqual(
      [audit.before.status, audit.before.expiredUrl],
      ['expired', 'https://evil.example/phish'],
    );
    assert.deepEqual(audit.after, { status: 'active', expiresAt: null, expiredUrl: null });

    // The next post.updated from WordPress heals one too, without waiting for a reconciliation.
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner, site, post_id, created_at, expires_at,
                         expired_url)
      VALUES ('wpHijk10', ${permalink(10)}, 'expired', 'clean', 'wordpress', ${`wordpress:${SITE}`}, ${SITE}, 10,
              now() - interval '1 hour', now() - interval '1 minute', 'https://evil.example/phish')`;
    await h.deps.resolver.refresh('wpHijk10');
    assert.deepEqual(await location('wpHijk10'), [302, 'https://evil.example/phish']);
    const updated = await h.webhook({
      id: randomUUID(),
      event: 'post.updated',
      site: SITE,
      postId: 10,
      permalink: permalink(10),
      occurredAt: new Date().toISOString(),
      restUrl: wp.restUrl,
    });
    assert.equal(updated.status, 202, await updated.clone().text());
    await eventually(async () => {
      const [status, target] = await location('wpHijk10');
      return status === 301 && target === permalink(10) ? true : undefined;
    });
  });
});
