import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../../devkit/fakes/bitly_fake.ts';
import {
  BITLY_DISCARDED_TAG,
  BITLY_OWN_TAG,
  type BitlyProvider,
  createBitlyProvider,
} from '../../../lib/vendors/bitly.ts';
import { holdsBackHalf, ProviderError } from '../../../lib/vendors/short_link_provider.ts';

let fake: BitlyFake;
let bitly: BitlyProvider;
before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
});
after(async () => {
  await fake.stop();
});
beforeEach(() => {
  fake.reset();
  bitly = createBitlyProvider(
    { token: fake.token, domain: 'SHO.rt', groupGuid: fake.groupGuid, apiBaseUrl: fake.url },
    { timeoutMs: 300, rateLimitRetryMs: 1234, quotaRetryMs: 99_000 },
  );
});

async function rejection(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ProviderError, String(error));
    return error;
  }
  throw new Error('expected a ProviderError');
}

describe('Bitly provider against the fake', () => {
  test('creates with our back-half on the branded domain, with the documented request', async () => {
    const made = await bitly.create({
      code: 'Ab3-x_',
      longUrl: 'https://news.example/a/%d8%b9/',
      title: 'عاجل',
    });
    assert.ok(holdsBackHalf(made, 'sho.rt', 'Ab3-x_'));
    assert.equal(made.longUrl, 'https://news.example/a/%d8%b9/');
    assert.equal(made.group, fake.groupGuid);
    const [request] = fake.requestsTo('POST', '/bitlinks');
    assert.deepEqual(request!.body, {
      long_url: 'https://news.example/a/%d8%b9/',
      domain: 'sho.rt',
      group_guid: fake.groupGuid,
      keyword: 'Ab3-x_',
      force_new_link: true,
      tags: [BITLY_OWN_TAG],
      title: 'عاجل',
    });
    assert.equal(request!.status, 201);
    // The id has no scheme and keeps its slash; the keyword reaches the same link.
    assert.match(made.vendorId, /^sho\.rt\/[A-Za-z0-9]+$/);
    assert.equal((await bitly.findByCode('Ab3-x_'))?.vendorId, made.vendorId);
    assert.equal((await bitly.get(made.vendorId))?.longUrl, made.longUrl);
  });

  test('back-halves are case-sensitive: AbCdE and abcde are different links', async () => {
    const upper = await bitly.create({ code: 'AbCdE', longUrl: 'https://a.example/' });
    const lower = await bitly.create({ code: 'abcde', longUrl: 'https://b.example/' });
    assert.notEqual(upper.vendorId, lower.vendorId);
    assert.equal((await bitly.findByCode('AbCdE'))?.longUrl, 'https://a.example/');
    assert.equal((await bitly.findByCode('abcde'))?.longUrl, 'https://b.example/');
    assert.equal(await bitly.findByCode('ABCDE'), null);
  });

  test('a taken back-half: 409 in conflict mode, a wrong link in silent mode (the caller must check)', async () => {
    fake.seed({ keyword: 'taken1', longUrl: 'https://theirs.example/', group: 'Bother' });
    const error = await rejection(bitly.create({ code: 'taken1', longUrl: 'https://ours.example/' }));
    assert.equal(error.kind, 'conflict');
    assert.equal(error.details.status, 409);

    fake.takenKeyword = 'silent-random';
    const made = await bitly.create({ code: 'taken1', longUrl: 'https://ours.example/' });
    assert.equal(fake.requestsTo('POST', '/bitlinks').at(-1)!.status, 201);
    assert.equal(holdsBackHalf(made, 'sho.rt', 'taken1'), false);
    assert.equal(fake.linkByKeyword('taken1')?.longUrl, 'https://theirs.example/');
  });

  test('the branded-domain quota fallback to bit.ly is visible as a foreign domain', async () => {
    fake.bsdQuotaFallback = true;
    const made = await bitly.create({ code: 'quota1', longUrl: 'https://ours.example/q' });
    assert.match(made.vendorId, /^bit\.ly\//);
    assert.equal(holdsBackHalf(made, 'sho.rt', 'quota1'), false);
  });

  test('rate limits (429 and legacy 403), quotas, 5xx, timeouts and drops are classified for retry', async () => {
    fake.failNext({
      path: '/bitlinks',
      status: 429,
      body: { message: 'RATE_LIMIT_EXCEEDED', resource: 'bitlinks', description: 'x' },
    });
    let e = await rejection(bitly.create({ code: 'rl0001', longUrl: 'https://x.example/' }));
    assert.equal(e.kind, 'rate_limited');
    assert.equal(e.details.retryAfterMs, 1234);
    assert.ok(e.retryable);

    fake.failNext({
      path: '/bitlinks',
      status: 403,
      message: 'RATE_LIMIT_EXCEEDED',
      headers: { 'X-Ratelimit-Reason': 'minute' },
    });
    e = await rejection(bitly.create({ code: 'rl0002', longUrl: 'https://x.example/' }));
    assert.equal(e.kind, 'rate_limited');

    fake.failNext({ path: '/bitlinks', status: 429, message: 'MONTHLY_BSD_ENCODE_LIMIT_REACHED' });
    e = await rejection(bitly.create({ code: 'rl0003', longUrl: 'https://x.example/' }));
    assert.equal(e.kind, 'quota_exceeded');
    assert.equal(e.details.retryAfterMs, 99_000);

    fake.failNext({
      path: '/bitlinks',
      status: 429,
      message: 'RATE_LIMIT_EXCEEDED',
      headers: { 'Retry-After': '7' },
    });
    e = await rejection(bitly.create({ code: 'rl0004', longUrl: 'https://x.example/' }));
    assert.equal(e.details.retryAfterMs, 7000);

    for (const failure of [
      { status: 503, message: 'TEMPORARILY_UNAVAILABLE' },
      { hang: true },
      { drop: true },
    ]) {
      fake.failNext({ path: '/bitlinks', ...failure });
      e = await rejection(bitly.create({ code: 'tr0001', longUrl: 'https://x.example/' }));
      assert.equal(e.kind, 'unavailable', JSON.stringify(failure));
      assert.ok(e.retryable);
    }
    // None of the failed attempts made a link.
    assert.equal(fake.listLinks().length, 0);
  });

  test('bad requests and bad credentials are not retryable, and never leak the token', async () => {
    let e = await rejection(bitly.create({ code: 'bad001', longUrl: 'notaurl' }));
    assert.equal(e.kind, 'rejected');
    assert.equal(e.details.code, 'INVALID_ARG_LONG_URL');
    assert.equal(e.retryable, false);
    const wrong = createBitlyProvider({
      token: 'nope',
      domain: 'sho.rt',
      groupGuid: fake.groupGuid,
      apiBaseUrl: fake.url,
    });
    e = await rejection(wrong.create({ code: 'bad002', longUrl: 'https://x.example/' }));
    assert.equal(e.kind, 'rejected');
    assert.equal(e.details.status, 403);
    assert.ok(!e.message.includes(fake.token));
  });

  test('retargets with PATCH; when the plan refuses it, moves the keyword to a new bitlink', async () => {
    const made = await bitly.create({ code: 'move01', longUrl: 'https://news.example/old/' });
    const patched = await bitly.updateTarget(made.vendorId, 'move01', 'https://news.example/new/');
    assert.equal(patched.vendorId, made.vendorId);
    assert.equal(fake.linkByKeyword('move01')?.longUrl, 'https://news.example/new/');

    for (const mode of ['upgrade-required', 'forbidden'] as const) {
      fake.patchLongUrl = mode;
      const before = fake.linkByKeyword('move01')!;
      const target = `https://news.example/${mode}/`;
      const moved = await bitly.updateTarget(before.id, 'move01', target);
      assert.notEqual(moved.vendorId, before.id, mode);
      assert.ok(holdsBackHalf(moved, 'sho.rt', 'move01'));
      assert.equal(fake.linkByKeyword('move01')?.longUrl, target);
      // The replaced bitlink is archived and tagged, so nobody mistakes it for a live link.
      const old = fake.listLinks().find((l) => l.id === before.id)!;
      assert.equal(old.archived, true);
      assert.ok(old.tags.includes(BITLY_DISCARDED_TAG));
    }
  });

  test('falls back to shorten + custom_bitlinks when the plan refuses keyword on create', async () => {
    fake.keywordOnCreate = 'upgrade-required';
    const made = await bitly.create({ code: 'twoStp', longUrl: 'https://news.example/2/' });
    assert.ok(holdsBackHalf(made, 'sho.rt', 'twoStp'));
    assert.equal(fake.linkByKeyword('twoStp')?.id, made.vendorId);
  });

  test('archives and restores; reads clicks; 404 is null', async () => {
    const made = await bitly.create({ code: 'arch01', longUrl: 'https://news.example/arch/' });
    assert.equal((await bitly.setArchived(made.vendorId, true)).archived, true);
    assert.equal(fake.linkByKeyword('arch01')?.archived, true);
    assert.equal((await bitly.setArchived(made.vendorId, false)).archived, false);
    fake.setClicks('arch01', 42);
    assert.deepEqual(await bitly.getClicks(made.vendorId), { total: 42 });
    assert.equal(await bitly.get('sho.rt/nothere'), null);
    assert.equal(await bitly.findByCode('nothere'), null);
  });

  test('pages through the group (search_after), including archived links, and only our group', async () => {
    for (let i = 0; i < 23; i++)
      fake.seed({ longUrl: `https://news.example/${i}`, keyword: `seed${i}`, archived: i % 5 === 0 });
    fake.seed({ longUrl: 'https://other.example/', group: 'Bother', keyword: 'other1' });
    const seen: string[] = [];
    for await (const link of bitly.iterateLinks({ size: 10 })) seen.push(link.longUrl);
    assert.equal(seen.length, 23);
    assert.equal(new Set(seen).size, 23);
    assert.equal(seen[0], 'https://news.example/22');
    const active = await bitly.listLinks({ size: 100, archived: 'off' });
    assert.equal(active.links.length, 18);
    assert.equal(active.nextCursor, null);
  });

  test('never has more than 5 requests in flight', async () => {
    fake.maxConcurrent = 5;
    fake.latencyMs = 30;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        bitly.create({ code: `conc${i}`, longUrl: `https://c.example/${i}` }),
      ),
    );
    assert.equal(fake.stats.concurrencyRejections, 0);
    assert.equal(fake.listLinks().length, 20);
  });
});

describe('Bitly clicks per day against the fake', () => {
  test('clicks per day for a code: N days ending at unit_reference, oldest first, empty days as 0', async () => {
    const made = await bitly.create({ code: 'days01', longUrl: 'https://news.example/days/' });
    fake.seedDailyClicks('days01', { '2026-02-20': 9, '2026-03-01': 3, '2026-03-03': 5 });
    const expected = {
      vendorId: 'sho.rt/days01',
      unitReference: '2026-03-03T18:00:00+0000',
      days: [
        { date: '2026-03-01', clicks: 3 },
        { date: '2026-03-02', clicks: 0 },
        { date: '2026-03-03', clicks: 5 },
      ],
    };
    const unitReference = new Date('2026-03-03T18:00:00Z');
    assert.deepEqual(await bitly.getClicksByDay('days01', { days: 3, unitReference }), expected);
    const [request] = fake.requestsTo('GET', '/bitlinks/sho.rt/days01/clicks');
    assert.equal(request!.status, 200);
    // By the hash id the same link answers the same days.
    const byId = await bitly.getClicksByDay(made.vendorId, { days: 3, unitReference });
    assert.deepEqual(byId?.days, expected.days);
    assert.equal(byId?.vendorId, made.vendorId);
  });

  test("the query is Bitly's documented one, and the fake answers the documented shapes", async () => {
    await bitly.create({ code: 'days02', longUrl: 'https://news.example/days2/' });
    fake.seedDailyClicks('days02', { '2026-01-30': 2, '2026-01-31': 7 });
    await bitly.getClicksByDay('days02', { days: 2, unitReference: new Date('2026-01-31T00:00:00Z') });
    const arrival = fake.arrivals.find((a) => a.path === '/bitlinks/sho.rt/days02/clicks');
    assert.deepEqual(Object.fromEntries(new URLSearchParams(arrival!.query)), {
      unit: 'day',
      units: '2',
      unit_reference: '2026-01-31T00:00:00+0000',
    });
    const headers = { Authorization: `Bearer ${fake.token}` };
    const clicks = await (
      await fetch(
        `${fake.url}/v4/bitlinks/sho.rt/days02/clicks?unit=day&units=2&unit_reference=2026-01-31T10:00:00%2B0000`,
        { headers },
      )
    ).json();
    assert.deepEqual(clicks, {
      unit_reference: '2026-01-31T10:00:00+0000',
      units: 2,
      unit: 'day',
      link_clicks: [
        { date: '2026-01-31T00:00:00+0000', clicks: 7 },
        { date: '2026-01-30T00:00:00+0000', clicks: 2 },
      ],
    });
    const summary = await (
      await fetch(
        `${fake.url}/v4/bitlinks/sho.rt/days02/clicks/summary?unit=day&units=-1&unit_reference=2026-01-31T10:00:00%2B0000`,
        { headers },
      )
    ).json();
    assert.deepEqual(summary, {
      unit_reference: '2026-01-31T10:00:00+0000',
      total_clicks: 9,
      units: -1,
      unit: 'day',
    });
    const bad = await fetch(`${fake.url}/v4/bitlinks/sho.rt/days02/clicks?unit=day&units=0`, { headers });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { message: string }).message, 'INVALID_ARG_UNITS');
  });

  test("the fake counts its own redirects on today's UTC day; the summary and the days agree", async () => {
    const made = await bitly.create({ code: 'days03', longUrl: 'https://news.example/days3/' });
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${fake.url}/days03`, { redirect: 'manual' });
      assert.equal(res.status, 301);
      assert.equal(res.headers.get('location'), 'https://news.example/days3/');
    }
    const today = new Date().toISOString().slice(0, 10);
    const perDay = await bitly.getClicksByDay('days03', { days: 1 });
    assert.deepEqual(perDay?.days, [{ date: today, clicks: 2 }]);
    assert.deepEqual(await bitly.getClicks(made.vendorId), { total: 2 });
    assert.equal((await fetch(`${fake.url}/nothere`, { redirect: 'manual' })).status, 404);
  });

  test('404 is null; bad arguments are rejected before any request', async () => {
    assert.equal(await bitly.getClicksByDay('nolink', { days: 7 }), null);
    const before = fake.requests.length;
    for (const days of [0, 366, 1.5, Number.NaN]) {
      const e = await rejection(bitly.getClicksByDay('days01', { days }));
      assert.equal(e.kind, 'rejected');
    }
    assert.equal((await rejection(bitly.getClicksByDay('bad code!', { days: 1 }))).kind, 'rejected');
    assert.equal(
      (await rejection(bitly.getClicksByDay('ok', { days: 1, unitReference: new Date('x') }))).kind,
      'rejected',
    );
    assert.equal(fake.requests.length, before);
  });

  test('rate-limited and failing like every other endpoint (429, legacy 403, 5xx)', async () => {
    await bitly.create({ code: 'days04', longUrl: 'https://news.example/days4/' });
    fake.perMinuteLimit = 1;
    assert.ok(await bitly.getClicksByDay('days04', { days: 1 }));
    let e = await rejection(bitly.getClicksByDay('days04', { days: 1 }));
    assert.deepEqual(
      [e.kind, e.details.status, e.details.retryAfterMs, e.retryable],
      ['rate_limited', 429, 1234, true],
    );
    fake.rateLimitStyle = '403';
    e = await rejection(bitly.getClicksByDay('days04', { days: 1 }));
    assert.deepEqual([e.kind, e.details.status], ['rate_limited', 403]);
    fake.perMinuteLimit = 0;
    fake.failNext({
      path: '/bitlinks/sho.rt/days04/clicks',
      status: 503,
      message: 'TEMPORARILY_UNAVAILABLE',
    });
    e = await rejection(bitly.getClicksByDay('days04', { days: 1 }));
    assert.deepEqual([e.kind, e.retryable], ['unavailable', true]);
  });
});
