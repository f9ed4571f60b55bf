import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import { generateApiKey, getApiKeyDisplayPrefix, hashApiKey } from '../../../lib/auth/api_keys.ts';
import type { LinkStats } from '../../../lib/clicks/link_stats.ts';
import type { Link } from '../../../lib/links/link.ts';
import { createLogger } from '../../../lib/shared/logger.ts';
import { insertApiKey } from '../../../lib/stores/api_key_store.ts';
import { createTemporalClient } from '../../../lib/temporal/temporal_client.ts';
import { createWorkflowGateway } from '../../../lib/temporal/workflow_gateway.ts';
import { createApp } from '../../../routes/app.ts';
import { getFreePort } from '../../../scripts/dev_server.ts';
import { expectFieldProblem, expectProblem } from '../../helpers/problem.ts';

let h: Harness;
let readKey: string;
before(async () => {
  h = await createHarness({ env: { ALLOWED_TARGET_HOSTS: 'example.com,example.org' } });
  readKey = generateApiKey();
  await insertApiKey(h.db.sql, {
    name: 'reader',
    prefix: getApiKeyDisplayPrefix(readKey),
    keyHash: await hashApiKey(readKey),
    scopes: ['links:read'],
    createdBy: 'test',
  });
});
after(async () => {
  await h.close();
});

async function create(json: Record<string, unknown>): Promise<Link> {
  const res = await h.api('/api/v1/links', { method: 'POST', json });
  assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
  return (await res.json()) as Link;
}

async function list(
  query: string,
): Promise<{ items: Link[]; nextCursor: string | null; prevCursor: string | null }> {
  const res = await h.api(`/api/v1/links?${query}`);
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as { items: Link[]; nextCursor: string | null; prevCursor: string | null };
}

const reader = () => ({ headers: { Authorization: `Bearer ${readKey}` } });
const audit = (code: string) =>
  h.db.sql<{ actor: string; action: string; before: unknown; after: unknown; reason: string | null }[]>`
    SELECT actor, action, before, after, reason FROM audit_log WHERE code = ${code} ORDER BY id`;

describe('GET /api/v1/links', () => {
  const made: Link[] = [];
  before(async () => {
    made.push(await create({ url: 'https://example.com/politics/vote', tags: ['politics', 'vote-2026'] }));
    made.push(await create({ url: 'https://example.com/sport/derby', tags: ['sport'] }));
    made.push(
      await create({ url: 'https://example.org/weather/storm', tags: ['weather'], alias: 'storm-now' }),
    );
    made.push(
      await create({ url: 'https://example.com/100%25_off?x=1', tags: ['deals'], site: 'news', postId: 7 }),
    );
  });

  test('lists newest first, with each link in the API shape', async () => {
    const page = await list('limit=200');
    const codes = page.items.map((l) => l.code);
    for (const link of made) assert.ok(codes.includes(link.code));
    assert.ok(codes.indexOf(made[3]!.code) < codes.indexOf(made[0]!.code), 'newest first');
    const storm = page.items.find((l) => l.code === 'storm-now')!;
    assert.equal(storm.shortUrl, 'http://sho.rt.test/storm-now');
    assert.deepEqual(storm.tags, ['weather']);
    assert.deepEqual(storm.vendors, []);
  });

  test('q searches code, url (substring, case-insensitive) and exact tags; LIKE wildcards are literal', async () => {
    assert.deepEqual(
      (await list('q=STORM-n')).items.map((l) => l.code),
      ['storm-now'],
    );
    assert.deepEqual(
      (await list('q=sport%2Fder')).items.map((l) => l.code),
      [made[1]!.code],
    );
    assert.deepEqual(
      (await list('q=vote-2026')).items.map((l) => l.code),
      [made[0]!.code],
    );
    // "%" and "_" match themselves, not "anything".
    assert.deepEqual(
      (await list(`q=${encodeURIComponent('100%25_off')}`)).items.map((l) => l.code),
      [made[3]!.code],
    );
    assert.deepEqual(
      (await list('q=%25')).items.map((l) => l.code),
      [made[3]!.code],
    );
    assert.deepEqual((await list('q=nothing-like-this')).items, []);
  });

  test('filters by status, tag, site, origin and safety', async () => {
    assert.deepEqual(
      (await list('tag=sport')).items.map((l) => l.code),
      [made[1]!.code],
    );
    assert.deepEqual(
      (await list('site=news')).items.map((l) => l.code),
      [made[3]!.code],
    );
    assert.ok((await list('status=active')).items.length >= 4);
    assert.deepEqual((await list('status=expired')).items, []);
    assert.ok((await list('origin=api')).items.length >= 4);
    assert.deepEqual((await list('origin=wordpress')).items, []);
    assert.ok((await list('safety=clean&tag=weather')).items.length === 1);
    assert.deepEqual((await list('safety=unknown&tag=weather')).items, []);
    // Empty parameters (a form's "any") are ignored.
    assert.ok((await list('status=&tag=&q=')).items.length >= 4);
  });

  test('invalid filters are a 422 naming the parameter; a forged cursor is a 400', async () => {
    await expectFieldProblem(await h.api('/api/v1/links?status=asleep'), 422, 'status');
    await expectFieldProblem(await h.api('/api/v1/links?limit=0'), 422, 'limit');
    await expectFieldProblem(await h.api('/api/v1/links?limit=201'), 422, 'limit');
    await expectFieldProblem(await h.api('/api/v1/links?colour=red'), 422, 'colour');
    await expectFieldProblem(await h.api('/api/v1/links?cursor=bm90LWEtY3Vyc29y'), 400, 'cursor');
    const cursor = (await list('limit=1')).nextCursor!;
    await expectFieldProblem(await h.api(`/api/v1/links?limit=1&sort=code&cursor=${cursor}`), 400, 'cursor');
  });

  test('cursor pages are stable under concurrent inserts: no repeats, no gaps, both directions', async () => {
    const tag = 'paging';
    for (let i = 0; i < 9; i++) await create({ url: `https://example.com/paging/${i}`, tags: [tag] });
    const first = await list(`tag=${tag}&limit=4`);
    assert.equal(first.items.length, 4);
    assert.equal(first.prevCursor, null);
    // Links created while someone pages land before page one, never inside later pages.
    for (let i = 0; i < 3; i++) await create({ url: `https://example.com/paging/late-${i}`, tags: [tag] });
    const second = await list(`tag=${tag}&limit=4&cursor=${first.nextCursor}`);
    const third = await list(`tag=${tag}&limit=4&cursor=${second.nextCursor}`);
    assert.equal(third.nextCursor, null);
    const seen = [...first.items, ...second.items, ...third.items].map((l) => l.url);
    assert.deepEqual(
      seen,
      Array.from({ length: 9 }, (_, i) => `https://example.com/paging/${8 - i}`),
    );
    // Back from page three is page two again.
    const back = await list(`tag=${tag}&limit=4&cursor=${third.prevCursor}`);
    assert.deepEqual(
      back.items.map((l) => l.code),
      second.items.map((l) => l.code),
    );
    // Every sort is a total order, so paging by code also visits each link once.
    const byCode: string[] = [];
    let cursor = '';
    do {
      const page = await list(`tag=${tag}&sort=code&limit=5${cursor ? `&cursor=${cursor}` : ''}`);
      byCode.push(...page.items.map((l) => l.code));
      cursor = page.nextCursor ?? '';
    } while (cursor);
    assert.equal(byCode.length, 12);
    assert.deepEqual(
      byCode,
      [...byCode].sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : 1)),
    );
  });

  test('deleted links are not listed; 401 without a key; a read-only key may list', async () => {
    const gone = await create({ url: 'https://example.com/to-delete-from-list', tags: ['listdel'] });
    assert.equal((await h.api(`/api/v1/links/${gone.code}`, { method: 'DELETE' })).status, 204);
    assert.deepEqual((await list('tag=listdel')).items, []);
    await expectProblem(await h.api('/api/v1/links', { headers: { Authorization: '' } }), 401);
    assert.equal((await h.api('/api/v1/links', reader())).status, 200);
  });
});

describe('GET /api/v1/links/{code} and by-post', () => {
  test('answers the link with its ETag; 404 for unknown, deleted or unminted', async () => {
    const link = await create({ url: 'https://example.com/get-one', site: 'blog', postId: 42 });
    const res = await h.api(`/api/v1/links/${link.code}`, reader());
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('ETag'), '"1"');
    assert.equal(((await res.json()) as Link).url, 'https://example.com/get-one');
    const byPost = await h.api('/api/v1/links/by-post/blog/42', reader());
    assert.equal(((await byPost.json()) as Link).code, link.code);
    await expectProblem(await h.api('/api/v1/links/by-post/blog/43'), 404);
    await expectProblem(await h.api('/api/v1/links/nope-nope'), 404);
    await expectFieldProblem(await h.api('/api/v1/links/by-post/blog/-3'), 422, '(body)');
  });
});

describe('PATCH /api/v1/links/{code}', () => {
  test('retargets in Postgres with an audit entry, redirects follow at once, and the sync workflow is told', async () => {
    const link = await create({ url: 'https://example.com/old-place' });
    const res = await h.api(`/api/v1/links/${link.code}`, {
      method: 'PATCH',
      json: { url: 'https://example.com/new-place', reason: 'article moved' },
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('Lifeline-Sync'), 'accepted');
    assert.equal(res.headers.get('ETag'), '"2"');
    assert.equal(((await res.json()) as Link).url, 'https://example.com/new-place');
    const redirect = await h.app.request(`/${link.code}`);
    assert.equal(redirect.headers.get('Location'), 'https://example.com/new-place');
    const entries = await audit(link.code);
    const last = entries[entries.length - 1]!;
    assert.equal(last.action, 'link.retargeted');
    assert.match(last.actor, /^apikey:\d+$/);
    assert.deepEqual(last.before, { url: 'https://example.com/old-place' });
    assert.deepEqual(last.after, { url: 'https://example.com/new-place' });
    assert.equal(last.reason, 'article moved');
    const handle = h.temporal.client.workflow.getHandle(`sync:${link.code}`);
    assert.equal((await handle.describe()).type, 'syncLinkWorkflow');
  });

  test('changes expiry, fallback, redirect status, tags and status; null clears; each change audited', async () => {
    const link = await create({ url: 'https://example.com/settings', tags: ['a'] });
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const patched = (await (
      await h.api(`/api/v1/links/${link.code}`, {
        method: 'PATCH',
        json: {
          expiresAt,
          expiredUrl: 'https://example.com/archive',
          redirectStatus: 302,
          tags: ['b', 'c', 'b'],
        },
      })
    ).json()) as Link;
    assert.equal(patched.expiresAt, expiresAt);
    assert.equal(patched.expiredUrl, 'https://example.com/archive');
    assert.equal(patched.redirectStatus, 302);
    assert.deepEqual(patched.tags, ['b', 'c']);
    assert.equal((await h.app.request(`/${link.code}`)).status, 302);

    const cleared = (await (
      await h.api(`/api/v1/links/${link.code}`, {
        method: 'PATCH',
        json: { expiresAt: null, expiredUrl: null, redirectStatus: null, status: 'gone' },
      })
    ).json()) as Link;
    assert.equal(cleared.expiresAt, undefined);
    assert.equal(cleared.redirectStatus, undefined);
    assert.equal(cleared.status, 'gone');
    assert.equal((await h.app.request(`/${link.code}`)).status, 410);
    const back = (await (
      await h.api(`/api/v1/links/${link.code}`, { method: 'PATCH', json: { status: 'active' } })
    ).json()) as Link;
    assert.equal(back.status, 'active');
    const actions = (await audit(link.code)).map((e) => e.action);
    assert.deepEqual(actions, ['link.created', 'link.updated', 'link.updated', 'link.status_changed']);
  });

  test('an edit that changes nothing writes nothing', async () => {
    const link = await create({ url: 'https://example.com/same', tags: ['x'] });
    const res = await h.api(`/api/v1/links/${link.code}`, {
      method: 'PATCH',
      json: { url: 'https://example.com/same', tags: ['x'] },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('Lifeline-Sync'), null);
    assert.equal((await audit(link.code)).length, 1);
  });

  test('moving the expiry of an expired link into the future brings it back', async () => {
    const link = await create({ url: 'https://example.com/expired-one' });
    await h.db
      .sql`UPDATE links SET status = 'expired', expires_at = now() - interval '1 hour' WHERE code = ${link.code}`;
    await expectFieldProblem(
      await h.api(`/api/v1/links/${link.code}`, { method: 'PATCH', json: { status: 'active' } }),
      422,
      'expiresAt',
    );
    const res = await h.api(`/api/v1/links/${link.code}`, {
      method: 'PATCH',
      json: { expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
    });
    assert.equal(((await res.json()) as Link).status, 'active');
    assert.equal((await h.app.request(`/${link.code}`)).status, 301);
  });

  test('refuses invalid changes with 422 naming the field, and changes nothing', async () => {
    const link = await create({ url: 'https://example.com/strict' });
    await h.db.sql`UPDATE links SET status = 'blocked', safety = 'blocked' WHERE code = ${link.code}`;
    const cases: [unknown, string][] = [
      [{ url: 'javascript:alert(1)' }, 'url'],
      [{ url: 'https://not-allowed.example.net/' }, 'url'],
      [{ expiredUrl: 'ftp://example.com/' }, 'expiredUrl'],
      [{ expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt'],
      [{ status: 'expired' }, 'status'],
      [{ status: 'active' }, 'status'],
      [{ redirectStatus: 303 }, 'redirectStatus'],
      [{ alias: 'rename-me' }, 'alias'],
      [{}, '(body)'],
      [{ reason: 'only a reason' }, '(body)'],
    ];
    for (const [json, path] of cases) {
      await expectFieldProblem(
        await h.api(`/api/v1/links/${link.code}`, { method: 'PATCH', json }),
        422,
        path,
      );
    }
    const row = (await h.db.sql`SELECT target_url, version FROM links WHERE code = ${link.code}`)[0]!;
    assert.equal(row.target_url, 'https://example.com/strict');
    assert.equal(row.version, 1);
    assert.equal((await audit(link.code)).length, 1);
  });

  test('If-Match with an older version is a 412; 404 for unknown or deleted; 403 for a read-only key', async () => {
    const link = await create({ url: 'https://example.com/versioned' });
    const first = await h.api(`/api/v1/links/${link.code}`, {
      method: 'PATCH',
      json: { tags: ['one'] },
      headers: { 'If-Match': '"1"' },
    });
    assert.equal(first.status, 200);
    await expectProblem(
      await h.api(`/api/v1/links/${link.code}`, {
        method: 'PATCH',
        json: { tags: ['two'] },
        headers: { 'If-Match': '"1"' },
      }),
      412,
    );
    await expectProblem(
      await h.api('/api/v1/links/no-such-code', { method: 'PATCH', json: { tags: [] } }),
      404,
    );
    await expectProblem(
      await h.api(`/api/v1/links/${link.code}`, { method: 'PATCH', json: { tags: [] }, ...reader() }),
      403,
    );
    await expectProblem(
      await h.api(`/api/v1/links/${link.code}`, {
        method: 'PATCH',
        body: '{"tags":',
        headers: { 'Content-Type': 'application/json' },
      }),
      400,
    );
  });

  test('when Temporal is down the change is still saved (Postgres is the truth) and says so: Lifeline-Sync: deferred', async () => {
    const link = await create({ url: 'https://example.com/temporal-down' });
    const down = createWorkflowGateway({
      temporal: createTemporalClient({
        connection: { address: `127.0.0.1:${await getFreePort()}` },
        namespace: 'default',
      }),
      taskQueue: h.taskQueue,
      logger: createLogger({ level: 'silent' }),
    });
    const downApp = createApp({ ...h.deps, workflows: down });
    const res = await downApp.request(`/api/v1/links/${link.code}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${h.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/temporal-was-down' }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('Lifeline-Sync'), 'deferred');
    assert.equal(
      (await h.app.request(`/${link.code}`)).headers.get('Location'),
      'https://example.com/temporal-was-down',
    );
    await down.close();
  });
});

describe('DELETE /api/v1/links/{code}', () => {
  test('204; the code then answers 410 forever, is 404 to the API, and cannot be taken again', async () => {
    const link = await create({ url: 'https://example.com/delete-me', alias: 'delete-me-now' });
    const res = await h.api(`/api/v1/links/${link.code}?reason=${encodeURIComponent('legal request')}`, {
      method: 'DELETE',
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('Lifeline-Sync'), 'accepted');
    assert.equal((await h.app.request(`/${link.code}`)).status, 410);
    await expectProblem(await h.api(`/api/v1/links/${link.code}`), 404);
    await expectProblem(await h.api(`/api/v1/links/${link.code}`, { method: 'DELETE' }), 404);
    await expectProblem(
      await h.api(`/api/v1/links/${link.code}`, { method: 'PATCH', json: { status: 'active' } }),
      404,
    );
    // The row stays, so the alias is never handed out again.
    await expectFieldProblem(
      await h.api('/api/v1/links', {
        method: 'POST',
        json: { url: 'https://example.com/x', alias: 'delete-me-now' },
      }),
      409,
      'alias',
    );
    const row = (await h.db.sql`SELECT status, deleted_at FROM links WHERE code = ${link.code}`)[0]!;
    assert.equal(row.status, 'gone');
    assert.ok(row.deleted_at);
    const last = (await audit(link.code)).pop()!;
    assert.equal(last.action, 'link.deleted');
    assert.equal(last.reason, 'legal request');
  });

  test('404 for an unknown code; 403 for a read-only key', async () => {
    await expectProblem(await h.api('/api/v1/links/never-was', { method: 'DELETE' }), 404);
    const link = await create({ url: 'https://example.com/keep-me' });
    await expectProblem(await h.api(`/api/v1/links/${link.code}`, { method: 'DELETE', ...reader() }), 403);
  });
});

describe('GET /api/v1/links/{code}/stats', () => {
  test('aggregates click_counts by kind, day, country and referrer', async () => {
    const link = await create({ url: 'https://example.com/counted' });
    const day = (offset: number, hour = 10) => new Date(Date.UTC(2026, 9, 10 + offset, hour));
    const rows: [Date, string, string, string, number][] = [
      [day(0), 'human', 'FR', 'twitter.com', 5],
      [day(0, 11), 'human', 'DE', '', 3],
      [day(0), 'qr', 'FR', '', 2],
      [day(0), 'bot', '', '', 7],
      [day(0), 'head', '', '', 1],
      [day(1), 'preview', '', 'slack.com', 4],
      [day(2), 'human', 'FR', 'twitter.com', 1],
      [day(9), 'human', 'FR', '', 100], // outside the window
    ];
    for (const [hour, kind, country, ref, clicks] of rows) {
      await h.db.sql`
        INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks)
        VALUES (${link.code}, ${hour}, ${kind}, ${country}, ${ref}, ${clicks})`;
    }
    const res = await h.api(`/api/v1/links/${link.code}/stats?from=2026-10-10&to=2026-10-13`, reader());
    assert.equal(res.status, 200);
    const stats = (await res.json()) as LinkStats;
    assert.equal(stats.code, link.code);
    assert.equal(stats.clicks, 11); // people: human 9 + qr 2
    assert.equal(stats.humanClicks, 9);
    assert.equal(stats.qrScans, 2);
    assert.equal(stats.botHits, 8); // bots and HEAD
    assert.equal(stats.previews, 4);
    assert.deepEqual(
      stats.byDay.map((d) => [d.day, d.clicks]),
      [
        ['2026-10-10', 10],
        ['2026-10-11', 0],
        ['2026-10-12', 1],
      ],
    );
    assert.deepEqual(stats.byCountry, [
      { country: 'FR', clicks: 8 },
      { country: 'DE', clicks: 3 },
    ]);
    assert.deepEqual(stats.byReferrer, [
      { host: 'twitter.com', clicks: 6 },
      { host: null, clicks: 5 },
    ]);
    assert.equal(stats.vendor, undefined);
  });

  test('defaults to the last 30 days; bad windows are 422; unknown links 404', async () => {
    const link = await create({ url: 'https://example.com/stats-defaults' });
    const stats = (await (await h.api(`/api/v1/links/${link.code}/stats`)).json()) as LinkStats;
    assert.ok(stats.byDay.length >= 30 && stats.byDay.length <= 31);
    assert.equal(stats.clicks, 0);
    await expectFieldProblem(await h.api(`/api/v1/links/${link.code}/stats?from=yesterday`), 422, 'from');
    await expectFieldProblem(
      await h.api(`/api/v1/links/${link.code}/stats?from=2026-02-01&to=2026-01-01`),
      422,
      'from',
    );
    await expectFieldProblem(
      await h.api(`/api/v1/links/${link.code}/stats?from=2020-01-01&to=2026-01-01`),
      422,
      'from',
    );
    await expectProblem(await h.api('/api/v1/links/not-a-link/stats'), 404);
  });

  test('a vendor click source is added when present, and its outage does not break our stats', async () => {
    const link = await create({ url: 'https://example.com/vendor-stats' });
    const day = new Date().toISOString().slice(0, 10);
    const withVendor = createApp({
      ...h.deps,
      vendorClicks: async (code) =>
        code === link.code
          ? {
              name: 'bitly',
              fetchedAt: new Date('2026-01-01T00:00:00Z'),
              days: [{ day, clicks: 12 }],
              fronts: { active: 'inhouse', since: null, switches: [] },
            }
          : null,
    });
    const call = (app: typeof withVendor) =>
      app.request(`/api/v1/links/${link.code}/stats`, { headers: { Authorization: `Bearer ${h.apiKey}` } });
    const vendor = ((await (await call(withVendor)).json()) as LinkStats).vendor!;
    assert.equal(vendor.name, 'bitly');
    assert.equal(vendor.clicks, 12);
    assert.equal(vendor.comparedDays, 1);
    assert.equal(vendor.difference, -12);
    assert.deepEqual(
      vendor.byDay.find((d) => d.day === day),
      { day, ourClicks: 0, vendorClicks: 12, difference: -12, front: 'inhouse' },
    );
    assert.ok(vendor.byDay.filter((d) => d.day !== day).every((d) => d.vendorClicks === null));
    const broken = createApp({
      ...h.deps,
      vendorClicks: async () => {
        throw new Error('vendor down');
      },
    });
    const res = await call(broken);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as LinkStats).vendor, undefined);
  });
});

describe('POST /api/v1/links (targets)', () => {
  test('a target outside ALLOWED_TARGET_HOSTS is a 422, subdomains are allowed', async () => {
    await expectFieldProblem(
      await h.api('/api/v1/links', { method: 'POST', json: { url: 'https://elsewhere.example.net/' } }),
      422,
      'url',
    );
    await expectFieldProblem(
      await h.api('/api/v1/links', {
        method: 'POST',
        json: { url: 'https://example.com/', expiredUrl: 'https://elsewhere.example.net/' },
      }),
      422,
      'expiredUrl',
    );
    assert.equal(
      (await h.api('/api/v1/links', { method: 'POST', json: { url: 'https://www.example.org/sub' } })).status,
      201,
    );
  });
});
