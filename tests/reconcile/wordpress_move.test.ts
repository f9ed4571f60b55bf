import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { WordPressListingFake } from '../../devkit/fakes/wordpress_listing_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import {
  waitForPostLink,
  waitForPostWorkflow,
  wordpressEvent,
} from '../../devkit/harness/wordpress_events.ts';
import { createI18n } from '../../lib/i18n/translator.ts';
import { countWaitingBreakerHolds } from '../../lib/publishing/mass_change_breaker.ts';
import { registerWordPressBreakerGauge } from '../../lib/shared/metrics.ts';
import { getWordPressReconcileWorkflowId } from '../../workflows/contract.ts';
import { createUiClient } from '../helpers/ui_client.ts';

// A newsroom moves to a fresh WordPress (export, import, new hosting): the same site id, a new installation id,
// post IDs reassigned among the articles, each post carrying the code it claims (`knownCode`, its post meta) and
// its GUID. Every old code must stay with its own article; what cannot be decided lands in the review list. And
// the breaker: a listing whose posts all vanished changes nothing until an admin approves (real Postgres and
// Temporal; the plugin's signed listing as a fake).

const SITE = 'moving';
const ARTICLES = 44;
let h: Harness;
let wp: WordPressListingFake;

before(async () => {
  // A small floor, so a few post events reach the budget (the share of these small sites is below it).
  h = await createHarness({ env: { WORDPRESS_BREAKER_MIN: '3' } });
  await h.startWorker();
  wp = await new WordPressListingFake(SITE, h.webhookSecret).start();
});
after(async () => {
  await wp?.stop();
  await h?.close();
});

/** Articles 43 and 44 share a permalink (a duplicate whose slug WordPress never made unique). */
const permalinkOf = (article: number) =>
  article >= 43
    ? 'https://news.example/2026/the-same-slug/'
    : `https://news.example/2026/article-${article}/`;
/** The fresh WordPress numbers the articles anew: article i gets ID ((i + 6) mod 44) + 1, every ID reused. */
const newIdOf = (article: number) => ((article + 6) % ARTICLES) + 1;

type Review = { id: number; kind: string; postId: number | null; code: string | null; candidates: string[] };
type Report = {
  rebound?: number;
  reviewed?: number;
  migration?: string;
  complete: boolean;
  breaker?: { holdId: number; status: string; applied: number; skipped: number; decidedBy: string };
};

async function location(code: string): Promise<[number, string | null]> {
  const res = await h.app.request(`/${code}`);
  return [res.status, res.headers.get('Location')];
}

async function openReviews(site: string): Promise<Review[]> {
  const res = await h.api(`/api/v1/wordpress/reviews?site=${site}`);
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { items: Review[] }).items;
}

describe('moving to a new WordPress', () => {
  test('every old code still lands on its own article: re-bound by claim, GUID or path; ambiguity reviewed', async () => {
    const installationA = randomUUID();
    const codes = new Map<number, string>();
    // Another site's article, whose code a post of the moved site will claim (a copied meta).
    const other = await h.webhook(
      wordpressEvent('post.published', {
        site: 'elsewhere',
        postId: 9,
        permalink: 'https://news.example/elsewhere/9/',
      }),
    );
    assert.equal(other.status, 202);
    const otherCode = (await waitForPostLink(h, 'elsewhere', 9, (l) => l.status === 'active')).code;

    // Site A: every article published, each with its GUID; the plugin stores the code it was answered.
    for (let article = 1; article <= ARTICLES; article++) {
      const res = await h.webhook(
        wordpressEvent('post.published', {
          site: SITE,
          postId: article,
          permalink: permalinkOf(article),
          title: `Article ${article}`,
          restUrl: wp.restUrl,
          installationId: installationA,
          guid: `https://old.news.example/?p=${article}`,
        }),
      );
      assert.equal(res.status, 202, await res.clone().text());
    }
    for (let article = 1; article <= ARTICLES; article++) {
      await waitForPostWorkflow(h, SITE, article);
      codes.set(article, (await waitForPostLink(h, SITE, article, (l) => l.status === 'active')).code);
    }
    assert.equal(new Set(codes.values()).size, ARTICLES);

    // Site B: the export imported into a fresh WordPress. Articles 1–3 lost their post meta but kept their
    // GUIDs; 4–5 lost both (matched by permalink path); 43 lost both and shares its path with 44, which was not
    // exported (ambiguous); a new post 45 claims another site's code. Everything else carries its claim.
    const installationB = randomUUID();
    wp.installationId = installationB;
    const bPosts: {
      postId: number;
      article: number | null;
      permalink: string;
      knownCode?: string;
      guid: string;
    }[] = [];
    for (let article = 1; article <= 43; article++) {
      bPosts.push({
        postId: newIdOf(article),
        article,
        permalink: permalinkOf(article),
        ...(article > 5 && article !== 43 ? { knownCode: codes.get(article)! } : {}),
        guid:
          article <= 3
            ? `https://old.news.example/?p=${article}`
            : `https://new.news.example/?p=${newIdOf(article)}`,
      });
    }
    bPosts.push({
      postId: 45,
      article: null,
      permalink: 'https://news.example/2026/copied/',
      knownCode: otherCode,
      guid: 'https://new.news.example/?p=45',
    });
    for (const p of bPosts) {
      wp.put({
        postId: p.postId,
        status: 'publish',
        permalink: p.permalink,
        guid: p.guid,
        ...(p.knownCode ? { knownCode: p.knownCode } : {}),
      });
    }
    for (const p of bPosts) {
      const res = await h.webhook(
        wordpressEvent('post.published', {
          site: SITE,
          postId: p.postId,
          permalink: p.permalink,
          title: p.article ? `Article ${p.article}` : 'Copied',
          restUrl: wp.restUrl,
          installationId: installationB,
          guid: p.guid,
          ...(p.knownCode ? { knownCode: p.knownCode } : {}),
        }),
      );
      assert.equal(res.status, 202, await res.clone().text());
    }
    for (const p of bPosts) await waitForPostWorkflow(h, SITE, p.postId);
    // The switch started the site's reconciliation (migration mode); one more pass after every event.
    const workflowId = getWordPressReconcileWorkflowId(h.taskQueue, SITE);
    await h.temporal.client.workflow.getHandle(workflowId).result();
    const again = await h.webhook({
      id: randomUUID(),
      event: 'site.permalinks_changed',
      site: SITE,
      occurredAt: new Date().toISOString(),
      restUrl: wp.restUrl,
      reason: 'home',
      installationId: installationB,
    });
    assert.equal(again.status, 202);
    const last = (await h.temporal.client.workflow.getHandle(workflowId).result()) as Report;
    assert.equal(last.complete, true);
    assert.equal(last.migration, 'ongoing', 'open review items keep the site in migration mode');

    // Every old code answers with its own article; none is 410; no second code was minted.
    for (let article = 1; article <= 42; article++) {
      assert.deepEqual(
        await location(codes.get(article)!),
        [301, permalinkOf(article)],
        `article ${article}`,
      );
      const bound = await h.api(`/api/v1/links/by-post/${SITE}/${newIdOf(article)}`);
      assert.equal(
        ((await bound.json()) as { code: string }).code,
        codes.get(article),
        `post ${newIdOf(article)}`,
      );
    }
    for (const article of [43, 44]) assert.equal((await location(codes.get(article)!))[0], 301);
    const siteLinks = await h.db.sql<{ n: number; gone: number }[]>`
      SELECT count(*)::int AS n, count(*) FILTER (WHERE status <> 'active')::int AS gone
      FROM links WHERE site = ${SITE}`;
    assert.deepEqual(siteLinks[0], { n: ARTICLES, gone: 0 }, 'no second code, nothing gone');

    // Each moved code was re-bound once (audited before → after); the ambiguous one was not.
    const rebound = await h.db.sql<
      { code: string; before: { postId: number | null }; after: { postId: number } }[]
    >`
      SELECT code, before, after FROM audit_log WHERE action = 'link.rebound' AND actor = ${`wordpress:${SITE}`}`;
    const byCode = new Map(rebound.map((r) => [r.code, r]));
    assert.equal(rebound.length, 42, 'one re-bind per moved article');
    for (let article = 1; article <= 42; article++) {
      assert.equal(byCode.get(codes.get(article)!)?.after.postId, newIdOf(article));
    }
    const runs = await h.db.sql<{ report: Report }[]>`
      SELECT report FROM ops_runs WHERE kind = 'reconcile' AND workflow_id LIKE ${`${workflowId}:%`}`;
    assert.ok(runs.length >= 2);
    assert.ok(
      runs.every((r) => typeof r.report.rebound === 'number' || r.report.rebound === undefined),
      'each pass reports what it re-bound',
    );

    // The review list holds exactly what was planted (and what follows from it).
    const reviews = await openReviews(SITE);
    const summary = reviews
      .map(
        (r) => `${r.kind} post=${r.postId ?? '-'} code=${r.code ?? '-'} candidates=${r.candidates.join('|')}`,
      )
      .sort();
    const c43 = codes.get(43)!;
    const c44 = codes.get(44)!;
    assert.deepEqual(
      summary,
      [
        `ambiguous post=${newIdOf(43)} code=- candidates=${[c43, c44].sort().join('|')}`,
        `foreign-claim post=45 code=${otherCode} candidates=`,
        `unmatched-link post=- code=${c43} candidates=`,
        `unmatched-link post=- code=${c44} candidates=`,
      ].sort(),
    );
    assert.deepEqual(await location(otherCode), [301, 'https://news.example/elsewhere/9/'], 'never re-bound');

    // An admin resolves them: 43 is bound to its post, 44 left gone, the rest kept. Migration mode ends.
    const resolve = async (kind: string, code: string | null, json: unknown) => {
      const item = reviews.find((r) => r.kind === kind && (code === null || r.code === code))!;
      const res = await h.api(`/api/v1/wordpress/reviews/${item.id}/resolve`, { method: 'POST', json });
      assert.equal(res.status, 200, await res.clone().text());
      return (await res.json()) as { migrationEnded: boolean };
    };
    await resolve('ambiguous', null, { action: 'bind', code: c43 });
    await resolve('unmatched-link', c43, { action: 'keep' });
    await resolve('foreign-claim', otherCode, { action: 'keep' });
    const lastOne = await resolve('unmatched-link', c44, { action: 'gone' });
    assert.equal(lastOne.migrationEnded, true);
    assert.deepEqual(await location(c43), [301, permalinkOf(43)]);
    assert.equal((await location(c44))[0], 410);
    const bound43 = await h.api(`/api/v1/links/by-post/${SITE}/${newIdOf(43)}`);
    assert.equal(((await bound43.json()) as { code: string }).code, c43);
    const sites = (await (await h.api('/api/v1/wordpress/sites')).json()) as {
      items: { site: string; migrating: boolean; installationId: string; previousInstallationId: string }[];
    };
    const moving = sites.items.find((s) => s.site === SITE)!;
    assert.deepEqual(
      [moving.migrating, moving.installationId, moving.previousInstallationId],
      [false, installationB, installationA],
    );
  });

  test('the breaker on post events: unpublishes beyond the hourly budget wait for an admin', async () => {
    const site = 'busy';
    for (let postId = 1; postId <= 5; postId++) {
      await h.webhook(
        wordpressEvent('post.published', { site, postId, permalink: `https://news.example/busy/${postId}/` }),
      );
    }
    const codes: string[] = [];
    for (let postId = 1; postId <= 5; postId++) {
      await waitForPostWorkflow(h, site, postId);
      codes.push((await waitForPostLink(h, site, postId, (l) => l.status === 'active')).code);
    }
    for (let postId = 1; postId <= 5; postId++) {
      await h.webhook(wordpressEvent('post.unpublished', { site, postId }));
    }
    const outcomes = [];
    for (let postId = 1; postId <= 5; postId++)
      outcomes.push((await waitForPostWorkflow(h, site, postId)).applied.at(-1));
    assert.deepEqual(outcomes.sort(), [
      'post.unpublished: gone',
      'post.unpublished: gone',
      'post.unpublished: gone',
      'post.unpublished: held',
      'post.unpublished: held',
    ]);
    const list = (await (await h.api('/api/v1/wordpress/breaker?status=waiting')).json()) as {
      items: { id: number; site: string; source: string; counts: unknown }[];
    };
    const hold = list.items.find((i) => i.site === site)!;
    assert.deepEqual([hold.source, hold.counts], ['events', { gone: { held: 2 } }]);
    const gone = async () =>
      (await Promise.all(codes.map(location))).filter(([status]) => status === 410).length;
    assert.equal(await gone(), 3, 'two unpublishes wait');
    const decided = await h.api(`/api/v1/wordpress/breaker/${hold.id}/approve`, { method: 'POST' });
    assert.equal(decided.status, 202, await decided.clone().text());
    await h.temporal.client.workflow.getHandle(getWordPressReconcileWorkflowId(h.taskQueue, site)).result();
    assert.equal(await gone(), 5, 'approved: applied');
  });

  test('the breaker: an empty listing changes nothing until approved; a refusal discards it', async () => {
    const gauge = new Registry();
    registerWordPressBreakerGauge(gauge, () => countWaitingBreakerHolds(h.db.sql));
    for (const [site, approve] of [
      ['vanished-a', true],
      ['vanished-b', false],
    ] as const) {
      const empty = await new WordPressListingFake(site, h.webhookSecret).start();
      try {
        // 60 live post links; the budget is max(2% of 60, 3) = 3.
        await h.db.sql`
          INSERT INTO links (code, target_url, status, safety, origin, owner, site, post_id, created_at)
          SELECT ${`${site.slice(-1)}v`} || g, 'https://news.example/v/' || g || '/', 'active', 'clean', 'wordpress',
                 ${`wordpress:${site}`}, ${site}, g, now() - interval '1 hour'
          FROM generate_series(1, 60) AS g`;
        const res = await h.webhook({
          id: randomUUID(),
          event: 'site.permalinks_changed',
          site,
          occurredAt: new Date().toISOString(),
          restUrl: empty.restUrl,
          reason: 'home',
        });
        assert.equal(res.status, 202);
        const workflowId = getWordPressReconcileWorkflowId(h.taskQueue, site);
        const hold = await eventually(
          async () => {
            const list = (await (await h.api('/api/v1/wordpress/breaker?status=waiting')).json()) as {
              items: { id: number; site: string; budget: number; counts: unknown; sample: unknown[] }[];
            };
            return list.items.find((i) => i.site === site);
          },
          { timeoutMs: 30_000, what: `${site}'s hold` },
        );
        assert.equal(hold.budget, 3);
        assert.deepEqual(hold.counts, { gone: { held: 60 } });
        assert.equal(hold.sample.length, 20);
        assert.match(await gauge.metrics(), /^lifeline_wordpress_breaker_waiting 1$/m);
        // Nothing changed while it waits.
        const live = await h.db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM links WHERE site = ${site} AND status = 'active'`;
        assert.equal(live[0]!.n, 60);
        assert.deepEqual(await location(`${site.slice(-1)}v7`), [301, 'https://news.example/v/7/']);

        if (approve) {
          const decided = await h.api(`/api/v1/wordpress/breaker/${hold.id}/approve`, { method: 'POST' });
          assert.equal(decided.status, 202, await decided.clone().text());
        } else {
          // The refusal from the admins' page, which shows the hold in English and in Arabic.
          const admin = createUiClient(h.app as never);
          assert.equal((await admin.login('admin@example.test', 'correct horse battery')).status, 303);
          const arabic = await (await admin.get('/ui/ops/wordpress', { 'Accept-Language': 'ar' })).text();
          assert.ok(arabic.includes(createI18n('ar').t('wordpress.breaker')), 'Arabic page');
          const page = await (await admin.get('/ui/ops/wordpress')).text();
          assert.ok(
            page.includes('Changes waiting for approval') && page.includes(`Hold ${hold.id}: ${site}`),
          );
          const refused = await admin.post(`/ui/ops/wordpress/breaker/${hold.id}/discard`, {});
          assert.equal(refused.status, 303);
        }
        const report = (await h.temporal.client.workflow.getHandle(workflowId).result()) as Report;
        if (approve) await recordHistory('reconcileWordPressWorkflow-breaker-approved', workflowId);
        assert.equal(report.breaker?.status, approve ? 'applied' : 'discarded');
        assert.equal(report.breaker?.applied, approve ? 60 : 0);
        const after = await h.db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM links WHERE site = ${site} AND status = 'gone'`;
        assert.equal(after[0]!.n, approve ? 60 : 0);
        assert.equal((await location(`${site.slice(-1)}v7`))[0], approve ? 410 : 301);
        assert.match(await gauge.metrics(), /^lifeline_wordpress_breaker_waiting 0$/m);
        const again = await h.api(`/api/v1/wordpress/breaker/${hold.id}/approve`, { method: 'POST' });
        assert.equal(again.status, 409, 'a decided hold stays decided');
      } finally {
        await empty.stop();
      }
    }
  });
});
