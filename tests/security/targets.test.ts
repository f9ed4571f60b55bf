import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import type { ReconcileLinksInput, ReconcileReport } from '../../workflows/contract.ts';
import { REVIEW_FINDINGS } from '../helpers/hostile_inputs.ts';
import { expectFieldProblem } from '../helpers/problem.ts';
import { createUiClient, type UiClient } from '../helpers/ui_client.ts';

// One canonical form and one rule for every way a target enters (API create, batch
// and edit, UI forms and the live check, WordPress permalinks, Bitly imports), re-checked at serving time.
// The deployment of the security review: ALLOWED_TARGET_HOSTS=news.example, SHORT_BASE_URL=https://sho.rt.

const REDIS_URL = process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `lltest:${randomUUID()}:`;
const FAST = {
  bitly: { timeoutMs: 2_000, rateLimitRetryMs: 300, quotaRetryMs: 300 },
  retryBaseMs: 50,
  retryMaxMs: 400,
  publishWaitMs: 2_000,
};

let h: Harness;
let fake: BitlyFake;
let ui: UiClient;
let redis: ReturnType<typeof createClient>;

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({
    env: {
      ...fake.env(),
      SHORT_BASE_URL: 'https://sho.rt',
      ALLOWED_TARGET_HOSTS: 'news.example',
      REDIS_URL,
      REDIS_KEY_PREFIX: PREFIX,
    },
  });
  await h.startWorker({ vendors: FAST });
  ui = createUiClient(h.app as never);
  assert.equal((await ui.login('admin@example.test', 'correct horse battery')).status, 303);
  redis = createClient({ url: REDIS_URL });
  await redis.connect();
});
after(async () => {
  await redis?.close();
  await h?.close();
  await fake?.stop();
});

const [backslash, trailingDot, ownDomain] = REVIEW_FINDINGS.map((f) => f.input) as [string, string, string];

async function create(json: Record<string, unknown>): Promise<Response> {
  return h.api('/api/v1/links', { method: 'POST', json });
}

async function storedTarget(code: string): Promise<{ url: string; expiredUrl: string | null }> {
  const [row] = await h.db.sql<{ url: string; expiredUrl: string | null }[]>`
    SELECT target_url AS url, expired_url AS "expiredUrl" FROM links WHERE code = ${code}`;
  return row!;
}

async function redirectOf(code: string): Promise<Response> {
  await h.deps.resolver.invalidate(code);
  return h.app.request(`/${code}`, { headers: { Host: 'sho.rt' } });
}

async function metric(name: string, labels: string): Promise<number> {
  const text = await h.deps.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('item 1: one canonical form, refused when there is none', () => {
  test('the review findings through the API: backslash refused, trailing dots canonicalised or refused', async () => {
    await expectFieldProblem(await create({ url: backslash }), 422, 'url');
    await expectFieldProblem(await create({ url: ownDomain }), 422, 'url');
    await expectFieldProblem(await create({ url: 'https://sho.rt.:443/x' }), 422, 'url');
    await expectFieldProblem(
      await create({ url: 'https://news.example/a', expiredUrl: ownDomain }),
      422,
      'expiredUrl',
    );

    const res = await create({ url: trailingDot, expiredUrl: 'HTTPS://News.Example.:443/gone' });
    assert.equal(res.status, 201, await res.clone().text());
    const link = (await res.json()) as { code: string; url: string; expiredUrl: string };
    assert.equal(link.url, 'https://news.example/x');
    assert.equal(link.expiredUrl, 'https://news.example/gone');
    assert.deepEqual(await storedTarget(link.code), {
      url: 'https://news.example/x',
      expiredUrl: 'https://news.example/gone',
    });
    const answer = await redirectOf(link.code);
    assert.equal(answer.status, 301);
    assert.equal(answer.headers.get('Location'), 'https://news.example/x');
  });

  test('PATCH and batch apply the same rule and store the canonical form', async () => {
    const code = ((await (await create({ url: 'https://news.example/patch-me' })).json()) as { code: string })
      .code;
    for (const url of [backslash, ownDomain, 'https://evil.example/']) {
      await expectFieldProblem(
        await h.api(`/api/v1/links/${code}`, { method: 'PATCH', json: { url } }),
        422,
        'url',
      );
    }
    const patched = await h.api(`/api/v1/links/${code}`, {
      method: 'PATCH',
      json: { url: 'https://WWW.news.example./patched' },
    });
    assert.equal(patched.status, 200, await patched.clone().text());
    assert.equal((await storedTarget(code)).url, 'https://www.news.example/patched');

    const batch = await h.api('/api/v1/links/batch', {
      method: 'POST',
      json: { links: [{ url: backslash }, { url: ownDomain }, { url: 'https://News.Example./batch' }] },
    });
    assert.equal(batch.status, 200);
    const { results } = (await batch.json()) as {
      results: { status: number; link?: { url: string }; error?: { errors: { path: string }[] } }[];
    };
    assert.deepEqual(
      results.map((r) => r.status),
      [422, 422, 201],
    );
    assert.equal(results[2]!.link!.url, 'https://news.example/batch');
  });

  test('the UI form and its live check refuse them too, and show what will be stored', async () => {
    await ui.get('/ui/links/new');
    for (const url of [backslash, ownDomain]) {
      const res = await ui.post('/ui/links/new', { url });
      assert.equal(res.status, 422, url);
    }
    await ui.get('/ui/links/new');
    const created = await ui.post('/ui/links/new', { url: 'hTtPs://NEWS.example./from-the-form' });
    assert.equal(created.status, 303, await created.clone().text());
    const code = decodeURIComponent(/\/ui\/links\/([^?]+)/.exec(created.headers.get('Location') ?? '')![1]!);
    assert.equal((await storedTarget(code)).url, 'https://news.example/from-the-form');

    const check = async (value: string) =>
      (await (await ui.get(`/ui/api/check?field=url&value=${encodeURIComponent(value)}`)).json()) as {
        ok: boolean;
        message: string;
      };
    assert.equal((await check(backslash)).ok, false);
    assert.equal((await check(ownDomain)).ok, false);
    assert.match((await check(ownDomain)).message, /short domain/);
    const canonicalised = await check(trailingDot);
    assert.equal(canonicalised.ok, true);
    assert.match(canonicalised.message, /https:\/\/news\.example\/x/);
  });
});

describe('item 2: the allowlist on every way in, and at serving time', () => {
  const event = (fields: Record<string, unknown>) => ({
    id: uniqueId('delivery'),
    event: 'post.published',
    site: 'newsroom',
    occurredAt: new Date().toISOString(),
    title: 'A story',
    ...fields,
  });

  test('a WordPress permalink outside ALLOWED_TARGET_HOSTS or on the short domain is a 400 naming it', async () => {
    for (const permalink of ['https://evil.example/story', ownDomain, backslash]) {
      const res = await h.webhook(event({ postId: 9001, permalink }));
      const problem = await expectFieldProblem(res, 400, 'permalink');
      assert.ok(problem.errors!.length > 0);
    }
    const recorded = await h.db.sql`SELECT 1 FROM webhook_deliveries WHERE post_id = 9001`;
    assert.equal(recorded.length, 0, 'nothing was recorded or started for a refused permalink');
  });

  test('an accepted permalink is stored in canonical form', async () => {
    const res = await h.webhook(event({ postId: 9002, permalink: 'HTTPS://News.Example.:443/2024/story/' }));
    assert.equal(res.status, 202, await res.clone().text());
    const url = await eventually(async () => {
      const [row] = await h.db.sql<{ url: string; status: string }[]>`
        SELECT target_url AS url, status FROM links WHERE site = 'newsroom' AND post_id = 9002`;
      return row?.status === 'active' ? row.url : undefined;
    });
    assert.equal(url, 'https://news.example/2024/story/');
  });

  test('a Bitly-only link is imported only when its long URL obeys the rule, in canonical form', async () => {
    fake.seed({ keyword: 'Import-Ok', longUrl: 'HTTPS://News.Example./imported' });
    fake.seed({ keyword: 'Import-Evil', longUrl: 'https://evil.example/phish' });
    fake.seed({ keyword: 'Import-Loop', longUrl: 'https://sho.rt./loop' });
    fake.seed({ keyword: 'Import-Slash', longUrl: 'https://news.example\\@evil.example/' });
    const input: ReconcileLinksInput = { repair: true, importExtra: true };
    const report = (await h.temporal.client.workflow.execute('reconcileLinksWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: uniqueId('reconcile:security'),
      args: [input],
    })) as ReconcileReport;
    assert.ok(report);
    const rows = await h.db.sql<{ code: string; url: string }[]>`
      SELECT code, target_url AS url FROM links WHERE code LIKE 'Import-%' ORDER BY code`;
    assert.deepEqual(
      rows.map((r) => ({ ...r })),
      [{ code: 'Import-Ok', url: 'https://news.example/imported' }],
    );
  });

  test('a tampered Postgres row answers 404, counted as tampered, for GET and the preview', async () => {
    const before = await metric('lifeline_redirects_total', 'outcome="tampered"');
    const codes: string[] = [];
    for (const target of [
      'https://evil.example/',
      'https://news.example./not-canonical',
      'https://sho.rt/loop',
      'https://news.example\\@evil.example/',
    ]) {
      const code = ((await (await create({ url: 'https://news.example/fine' })).json()) as { code: string })
        .code;
      await h.db.sql`UPDATE links SET target_url = ${target}, version = version + 1 WHERE code = ${code}`;
      await h.deps.resolver.refresh(code);
      codes.push(code);
      const res = await redirectOf(code);
      assert.equal(res.status, 404, target);
      assert.equal(res.headers.get('Location'), null);
      assert.equal((await h.app.request(`/${code}+`, { headers: { Host: 'sho.rt' } })).status, 404);
    }
    // A tampered fallback of an expired link never redirects either.
    const expired = ((await (await create({ url: 'https://news.example/e' })).json()) as { code: string })
      .code;
    await h.db.sql`UPDATE links SET status = 'expired', expired_url = 'https://evil.example/fallback'
                   WHERE code = ${expired}`;
    await h.deps.resolver.refresh(expired);
    assert.equal((await redirectOf(expired)).status, 404);
    assert.equal(
      await metric('lifeline_redirects_total', 'outcome="tampered"'),
      before + 2 * codes.length + 1,
    );
    assert.ok((await metric('lifeline_link_lookups_total', 'layer="postgres",result="tampered"')) >= 1);
  });

  test('records read back from Redis are validated: a tampered one never redirects and is repaired', async () => {
    const code = ((await (await create({ url: 'https://news.example/redis' })).json()) as { code: string })
      .code;
    await h.deps.resolver.refresh(code);
    const key = `${PREFIX}link:${code}`;
    const genuine = await redis.get(key);
    assert.ok(genuine?.includes('https://news.example/redis'), `the store holds the link: ${genuine}`);

    // A forged record (a newer version, another host) and garbage: neither may redirect anywhere but the truth.
    for (const forged of [
      `999999|${JSON.stringify(['https://evil.example/', 'active', 'clean', null, null, null])}`,
      `999999|${JSON.stringify(['https://news.example./x', 'active', 'clean', null, null, null])}`,
      `999999|${JSON.stringify(['https://news.example/ok', 'active', 'clean', 333, null, null])}`,
      '999999|{"not":"an array"}',
      'garbage',
    ]) {
      await redis.set(key, forged);
      const res = await redirectOf(code);
      assert.equal(res.status, 301, forged);
      assert.equal(res.headers.get('Location'), 'https://news.example/redis', forged);
    }
    await redis.set(
      key,
      `999999|${JSON.stringify(['https://evil.example/', 'active', 'clean', null, null, null])}`,
    );
    await redirectOf(code);
    await eventually(
      async () => ((await redis.get(key))?.includes('news.example/redis') ? true : undefined),
      {
        what: 'the store repaired from Postgres',
      },
    );
    assert.ok((await metric('lifeline_link_lookups_total', 'layer="serving_store",result="tampered"')) >= 2);
  });
});
