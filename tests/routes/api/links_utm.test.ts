// Per-link UTM parameters end to end: set and edited through the API (a merge patch), stored, shown in the
// link JSON, carried by the serving record (Redis included) into the redirect's Location beside UTM_PARAMS,
// audited, part of the dedupe key; bad values are 422s naming the field.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import type { Link } from '../../../lib/links/link.ts';
import { expectFieldProblem } from '../../helpers/problem.ts';

const REDIS_URL = process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let h: Harness;
before(async () => {
  h = await createHarness({
    env: {
      UTM_PARAMS: 'utm_source=lifeline&utm_medium=social',
      REDIS_URL,
      REDIS_KEY_PREFIX: `t-utm-${process.pid}-${Date.now()}:`,
    },
  });
});
after(async () => {
  await h.close();
});

async function create(json: Record<string, unknown>, status = 201): Promise<Link> {
  const res = await h.api('/api/v1/links', { method: 'POST', json });
  assert.equal(res.status, status, await res.clone().text());
  return (await res.json()) as Link;
}

async function patch(code: string, json: Record<string, unknown>): Promise<Link> {
  const res = await h.api(`/api/v1/links/${code}`, { method: 'PATCH', json });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as Link;
}

const location = async (code: string) =>
  (await h.app.request(`/${code}`, { headers: { 'User-Agent': 'Mozilla/5.0 Firefox/140.0' } })).headers.get(
    'Location',
  );

describe('per-link UTM parameters', () => {
  test('created, shown, and applied: the link wins over UTM_PARAMS, the target over both', async () => {
    const link = await create({
      url: 'https://example.com/story?utm_medium=print',
      utm: { campaign: ' election-night ', source: 'newsletter' },
    });
    assert.deepEqual(link.utm, { campaign: 'election-night', source: 'newsletter' });
    assert.equal(
      await location(link.code),
      'https://example.com/story?utm_medium=print&utm_campaign=election-night&utm_source=newsletter',
    );
    // The serving store holds the values too: a fresh resolver (empty LRU) answers the same from Redis.
    const [row] = await h.db.sql<{ campaign: string }[]>`
      SELECT utm_campaign AS campaign FROM links WHERE code = ${link.code}`;
    assert.equal(row?.campaign, 'election-night');
    const stored = await h.deps.servingStore?.get(link.code);
    assert.deepEqual(stored?.utm, { campaign: 'election-night', source: 'newsletter' });

    const plain = await create({ url: 'https://example.com/plain' });
    assert.equal(plain.utm, undefined);
    assert.equal(
      await location(plain.code),
      'https://example.com/plain?utm_source=lifeline&utm_medium=social',
    );
  });

  test('PATCH is a merge patch: a value sets, null clears, absent keys stay; the redirect follows', async () => {
    const link = await create({
      url: 'https://example.com/patched',
      utm: { campaign: 'a', medium: 'email' },
    });
    let now = await patch(link.code, { utm: { source: 'بريد', campaign: null }, reason: 'retag' });
    assert.deepEqual(now.utm, { source: 'بريد', medium: 'email' });
    assert.equal(
      await location(link.code),
      'https://example.com/patched?utm_source=%D8%A8%D8%B1%D9%8A%D8%AF&utm_medium=email',
    );
    const [entry] = await h.db.sql<{ before: unknown; after: unknown; reason: string }[]>`
      SELECT before, after, reason FROM audit_log WHERE code = ${link.code} AND action = 'link.updated'`;
    assert.deepEqual(entry, {
      before: { utm: { campaign: 'a', medium: 'email' } },
      after: { utm: { source: 'بريد', medium: 'email' } },
      reason: 'retag',
    });
    now = await patch(link.code, { utm: null });
    assert.equal(now.utm, undefined);
    assert.equal(
      await location(link.code),
      'https://example.com/patched?utm_source=lifeline&utm_medium=social',
    );
    // The same values again change nothing (no new version).
    const version = async () =>
      (await h.db.sql<{ v: number }[]>`SELECT version AS v FROM links WHERE code = ${link.code}`)[0]!.v;
    const before = await version();
    await patch(link.code, { utm: { campaign: null } });
    assert.equal(await version(), before);
  });

  test('bad values are 422s naming the field; nothing is written', async () => {
    for (const [utm, path] of [
      [{ campaign: '' }, 'utm.campaign'],
      [{ source: 'x'.repeat(101) }, 'utm.source'],
      [{ medium: 'a\nb' }, 'utm.medium'],
      [{ term: 'x' }, 'utm.term'],
      ['campaign', 'utm'],
    ] as const) {
      const res = await h.api('/api/v1/links', {
        method: 'POST',
        json: { url: 'https://example.com/bad-utm', utm },
      });
      await expectFieldProblem(res, 422, path);
    }
    const [count] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM links WHERE target_url = 'https://example.com/bad-utm'`;
    assert.equal(count?.n, 0);
  });

  test('UTM values are options of the dedupe key: same values, same link; other values, another link', async () => {
    const a = await create({ url: 'https://example.com/dedupe', utm: { campaign: 'x' } });
    const b = await create({ url: 'https://example.com/dedupe', utm: { campaign: 'x' } }, 200);
    assert.equal(b.code, a.code);
    const c = await create({ url: 'https://example.com/dedupe', utm: { campaign: 'y' } });
    assert.notEqual(c.code, a.code);
    const d = await create({ url: 'https://example.com/dedupe' });
    assert.notEqual(d.code, a.code);
  });

  test('the batch endpoint takes them per item', async () => {
    const res = await h.api('/api/v1/links/batch', {
      method: 'POST',
      json: {
        links: [{ url: 'https://example.com/b1', utm: { medium: 'sms' } }, { url: 'https://example.com/b2' }],
      },
    });
    assert.equal(res.status, 200);
    const { results } = (await res.json()) as { results: { status: number; link: Link }[] };
    assert.deepEqual(results[0]?.link.utm, { medium: 'sms' });
    assert.equal(results[1]?.link.utm, undefined);
    assert.equal(
      await location(results[0]!.link.code),
      'https://example.com/b1?utm_medium=sms&utm_source=lifeline',
    );
  });
});
