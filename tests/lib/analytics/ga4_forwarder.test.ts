import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type Ga4Fake, startGa4Fake, validateMeasurement } from '../../../devkit/fakes/ga4_fake.ts';
import type { ForwardedClick } from '../../../lib/analytics/ga4_event.ts';
import {
  createGa4Forwarder,
  type Ga4Forwarder,
  type Ga4ForwarderOptions,
} from '../../../lib/analytics/ga4_forwarder.ts';

const HOUR = 3_600_000;
let fake: Ga4Fake;
const open: Ga4Forwarder[] = [];
before(async () => {
  fake = await startGa4Fake();
});
after(async () => {
  await Promise.all(open.map((f) => f.close()));
  await fake.stop();
});
beforeEach(() => fake.reset());

function forwarder(overrides: Partial<Ga4ForwarderOptions> = {}) {
  const f = createGa4Forwarder({
    measurementId: 'G-TEST12345',
    apiSecret: 'mp-secret-xyz',
    endpoint: fake.endpoint,
    flushIntervalMs: 3_600_000,
    baseDelayMs: 5,
    maxDelayMs: 20,
    // The forwarder's own default; no test here waits on it. A shorter one turned a busy machine's slow answer
    // into a resend, counted twice (a lost answer is resent: docs/OPERATIONS.md, "GA4").
    timeoutMs: 5_000,
    ...overrides,
  });
  open.push(f);
  return f;
}

function click(i: number, overrides: Partial<ForwardedClick> = {}): ForwardedClick {
  return {
    code: `c${i}`,
    kind: 'human',
    destination: `https://news.example/story/${i}?utm_source=newsletter&utm_medium=email&utm_campaign=spring`,
    country: 'PL',
    referrerHost: 't.co',
    atMs: Date.now() - 1000,
    ...overrides,
  };
}

/** Waits until `check` holds (polling), failing after `ms`. */
async function eventually(check: () => boolean, ms = 2000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Every /mp/collect payload earned zero validation messages from the fake's validator. */
function assertAllValid() {
  const collect = fake.collected.filter((c) => c.endpoint === 'collect');
  assert.ok(collect.length > 0);
  for (const c of collect) assert.deepEqual(c.validationMessages, [], c.raw);
}

describe('GA4 forwarder against the Measurement Protocol fake', () => {
  test('60 clicks are 3 requests of at most 25 events, every payload valid, params as designed', async () => {
    const f = forwarder();
    const at = Date.now() - 5 * 60_000;
    for (let i = 0; i < 60; i++) assert.equal(f.record(click(i, { atMs: at + i })), true);
    assert.equal(fake.collected.length, 0, 'nothing is sent per click');
    await f.flush();
    const requests = fake.collected.filter((c) => c.endpoint === 'collect');
    assert.deepEqual(
      requests.map((r) => (r.body as { events: unknown[] }).events.length),
      [25, 25, 10],
    );
    assert.ok(requests.every((r) => r.measurementId === 'G-TEST12345' && r.apiSecret === 'mp-secret-xyz'));
    assertAllValid();
    const events = fake.collectedEvents();
    assert.equal(events.length, 60);
    assert.deepEqual(events[7], {
      name: 'short_link_click',
      params: {
        link_code: 'c7',
        kind: 'human',
        link_host: 'news.example',
        campaign: 'spring',
        source: 'newsletter',
        medium: 'email',
        country: 'PL',
        referrer_host: 't.co',
      },
      timestamp_micros: (at + 7) * 1000,
    });
    assert.deepEqual(f.stats, { ...f.stats, queued: 60, sent: 60, dropped_full: 0, retried: 0 });
  });

  test('the interval flushes on its own, and a backlog of flushAtEvents starts a flush early', async () => {
    const timed = forwarder({ flushIntervalMs: 30 });
    timed.record(click(1));
    await eventually(() => fake.collectedEvents().length === 1);
    fake.reset();
    const early = forwarder({ flushAtEvents: 50 });
    for (let i = 0; i < 50; i++) early.record(click(i));
    await eventually(() => fake.collectedEvents().length === 50);
    assertAllValid();
  });

  test('the queue is bounded: beyond maxQueue clicks are dropped and counted', async () => {
    const counted: Record<string, number> = {};
    const f = forwarder({
      maxQueue: 50,
      flushAtEvents: 1000,
      metrics: { count: (o, n) => (counted[o] = (counted[o] ?? 0) + n) },
    });
    let accepted = 0;
    for (let i = 0; i < 80; i++) if (f.record(click(i))) accepted++;
    assert.equal(accepted, 50);
    assert.equal(f.pending, 50);
    assert.equal(f.stats.dropped_full, 30);
    // The redirect path only bumps a number: the counters hear of it at the next flush.
    assert.equal(counted.dropped_full, undefined);
    await f.flush();
    assert.equal(fake.collectedEvents().length, 50);
    assert.deepEqual(counted, { queued: 50, dropped_full: 30, sent: 50 });
  });

  test('clicks older than 72 h (on arrival or while queued) are dropped and counted, never sent', async () => {
    let now = Date.now();
    const f = forwarder({ now: () => now });
    f.record(click(1, { atMs: now - 73 * HOUR }));
    f.record(click(2, { atMs: now - 71 * HOUR }));
    f.record(click(3, { atMs: now - 60_000 }));
    now += 2 * HOUR; // click 2 ages past the limit while the CDN... while GA4 is unreachable, say
    await f.flush();
    assert.deepEqual(
      fake.collectedEvents().map((e) => e.params.link_code),
      ['c3'],
    );
    assert.equal(f.stats.dropped_stale, 2);
  });

  test('a 503 and a dropped connection are retried; the events arrive once', async () => {
    fake.failNext({ answer: { status: 503, body: 'unavailable' } });
    fake.failNext({ drop: true });
    const f = forwarder();
    for (let i = 0; i < 10; i++) f.record(click(i));
    await f.flush();
    assert.deepEqual(
      fake.requests.map((r) => r.status),
      [503, 0, 204],
    );
    assert.equal(fake.collectedEvents().length, 10);
    assert.equal(f.stats.retried, 2);
    assert.equal(f.stats.sent, 10);
  });

  test('GA4 unreachable for a while: nothing is lost, the batch waits for the next flush', async () => {
    fake.failNext({ times: 3, answer: { status: 502, body: 'bad gateway' } });
    const f = forwarder({ maxAttempts: 3 });
    for (let i = 0; i < 30; i++) f.record(click(i));
    await f.flush();
    assert.equal(fake.collectedEvents().length, 0);
    assert.equal(f.pending, 30);
    await f.flush();
    assert.deepEqual(
      fake.collectedEvents().map((e) => e.params.link_code),
      Array.from({ length: 30 }, (_, i) => `c${i}`),
    );
    assertAllValid();
  });

  test('a 4xx refusal (wrong endpoint) drops that batch and counts it', async () => {
    const f = forwarder({ endpoint: `${fake.endpoint}/wrong` });
    for (let i = 0; i < 3; i++) f.record(click(i));
    await f.flush();
    assert.equal(f.stats.dropped_rejected, 3);
    assert.equal(f.pending, 0);
  });

  test('close() sends what waits, then refuses new clicks (counted)', async () => {
    const f = forwarder();
    for (let i = 0; i < 7; i++) f.record(click(i));
    await f.close();
    assert.equal(fake.collectedEvents().length, 7);
    assert.equal(f.record(click(8)), false);
    assert.equal(f.stats.dropped_closed, 1);
  });

  test('no IP, user agent or other query data ever leaves; client_id is fresh per request', async () => {
    const f = forwarder();
    const ip = '203.0.113.77';
    const userAgent = 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0 UniqueAgent';
    for (let i = 0; i < 30; i++) {
      f.record({
        ...click(i, {
          destination: `https://news.example/a?email=reader@example.org&token=s3cr3t&utm_source=x${i}`,
        }),
        ip,
        userAgent,
        headers: { 'x-forwarded-for': ip },
      } as ForwardedClick);
    }
    await f.flush();
    const wire = fake.collected.map((c) => c.raw).join('\n');
    for (const secret of [
      ip,
      '203.0.113',
      userAgent,
      'Firefox',
      'reader@example.org',
      's3cr3t',
      'email',
      'token',
    ]) {
      assert.ok(!wire.includes(secret), `payload contains ${secret}`);
    }
    const clientIds = fake.collected.map((c) => (c.body as { client_id: string }).client_id);
    assert.equal(clientIds.length, 2);
    assert.notEqual(clientIds[0], clientIds[1]);
    assert.ok(clientIds.every((id) => /^\d+\.\d+$/.test(id)));
    assertAllValid();
  });

  test('awkward input still makes valid events: long UTM values, no host, unknown country, odd referrer', async () => {
    const f = forwarder();
    f.record(click(1, { destination: `https://x.example/?utm_campaign=${'é'.repeat(150)}&utm_source=%20` }));
    f.record(click(2, { destination: 'not a url', country: 'XXL', referrerHost: 'bad host!' }));
    f.record(click(3, { kind: 'qr', code: 'a'.repeat(120) }));
    await f.flush();
    assertAllValid();
    const [first, second, third] = fake.collectedEvents();
    assert.equal((first!.params.campaign as string).length, 100);
    assert.equal(first!.params.source, undefined);
    assert.deepEqual(second!.params, { link_code: 'c2', kind: 'human' });
    assert.equal(third!.params.kind, 'qr');
    assert.equal((third!.params.link_code as string).length, 100);
  });

  test('only human clicks (and QR scans unless turned off) are forwarded', async () => {
    const f = forwarder({ includeQr: false });
    for (const kind of ['bot', 'preview', 'head', 'qr']) assert.equal(f.record(click(1, { kind })), false);
    assert.equal(f.record(click(2)), true);
    assert.equal(f.pending, 1);
  });

  test('configuration mistakes are refused with a clear error', () => {
    assert.throws(() => forwarder({ measurementId: 'UA-1234-1' }), /measurement id/);
    assert.throws(() => forwarder({ apiSecret: '' }), /API secret/);
    assert.throws(() => forwarder({ eventName: 'session_start' }), /reserved/);
  });
});

describe("the fake's validation server", () => {
  const query = new URLSearchParams({ measurement_id: 'G-TEST12345', api_secret: 's' });
  const now = Date.now();
  const validate = (body: unknown, q = query) => validateMeasurement(q, JSON.stringify(body), now);
  const codes = (body: unknown, q = query) =>
    validate(body, q).map((m) => `${m.fieldPath}:${m.validationCode}`);
  const event = { name: 'short_link_click', params: { link_code: 'a' } };

  test('answers the documented shape, [] for a valid payload', async () => {
    assert.deepEqual(validate({ client_id: '1.2', events: [event] }), []);
    const res = await fetch(`${fake.endpoint}/debug/mp/collect?${query}`, {
      method: 'POST',
      body: JSON.stringify({ client_id: '1.2', events: [{ name: '_badEventName' }] }),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      validationMessages: [
        {
          fieldPath: 'events',
          description:
            'Event at index: [0] has invalid name [_badEventName]. Names must start with an alphabetic character.',
          validationCode: 'NAME_INVALID',
        },
      ],
    });
    const collect = await fetch(`${fake.endpoint}/mp/collect`, { method: 'POST', body: 'garbage' });
    assert.equal(collect.status, 204);
    assert.equal(await collect.text(), '');
  });

  test('flags each rule with its documented code', () => {
    assert.deepEqual(
      codes({ client_id: '1.2', events: [event] }, new URLSearchParams({ measurement_id: 'G-X' })),
      ['api_secret:VALUE_REQUIRED'],
    );
    assert.deepEqual(codes({ events: [event] }), ['client_id:VALUE_REQUIRED']);
    assert.deepEqual(codes({ client_id: '1', events: [] }), ['events:VALUE_REQUIRED']);
    assert.deepEqual(codes({ client_id: '1', events: Array(26).fill(event) }), [
      'events:EXCEEDED_MAX_ENTITIES',
    ]);
    assert.deepEqual(codes({ client_id: '1', events: [{ name: 'session_start' }] }), [
      'events:NAME_RESERVED',
    ]);
    assert.deepEqual(codes({ client_id: '1', events: [{ name: 'video_play' }] }), ['events:NAME_RESERVED']);
    assert.deepEqual(codes({ client_id: '1', events: [{ name: 'a'.repeat(41) }] }), ['events:NAME_INVALID']);
    assert.deepEqual(codes({ client_id: '1', events: [{ name: 'ok', params: { ga_x: 'v' } }] }), [
      'events.params:NAME_RESERVED',
    ]);
    assert.deepEqual(codes({ client_id: '1', events: [{ name: 'ok', params: { 'bad-name': 'v' } }] }), [
      'events.params:NAME_INVALID',
    ]);
    assert.deepEqual(codes({ client_id: '1', events: [{ name: 'ok', params: { p: 'v'.repeat(101) } }] }), [
      'events.params:VALUE_OUT_OF_BOUNDS',
    ]);
    assert.deepEqual(codes({ client_id: '1', events: [{ name: 'ok', params: { p: { nested: 1 } } }] }), [
      'events.params:VALUE_INVALID',
    ]);
    const params = Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`p${i}`, 'v']));
    assert.deepEqual(codes({ client_id: '1', events: [{ name: 'ok', params }] }), [
      'events.params:EXCEEDED_MAX_ENTITIES',
    ]);
    assert.deepEqual(
      codes({ client_id: '1', events: [{ ...event, timestamp_micros: (now - 73 * HOUR) * 1000 }] }),
      ['events[0].timestamp_micros:VALUE_INVALID'],
    );
    assert.deepEqual(codes({ client_id: '1', consent: { ad_user_data: 'MAYBE' }, events: [event] }), [
      'consent.ad_user_data:VALUE_INVALID',
    ]);
  });
});
