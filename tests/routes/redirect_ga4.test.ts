// GA4 end to end: human clicks (and QR scans) pushed through the real redirect (the app in-process, the LRU and
// its memoised answers included) reach the Measurement Protocol fake as batched events once the click buffer
// has written them, never per request; every payload passes the fake's validator (the rules of Google's
// validation server); bots, previews and HEAD requests never go; nothing identifying a reader leaves.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type Ga4Fake, startGa4Fake } from '../../devkit/fakes/ga4_fake.ts';
import { createHarness, createLinkCode, type Harness } from '../../devkit/harness/harness.ts';

const HUMAN =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 TestReader/42';
const READER_IP = '203.0.113.77';

let fake: Ga4Fake;
let h: Harness;
before(async () => {
  fake = await startGa4Fake();
  h = await createHarness({
    env: {
      GA4_MEASUREMENT_ID: 'G-LIFELINE01',
      GA4_API_SECRET: 'mp-secret-ga4-test',
      GA4_ENDPOINT: fake.endpoint,
      TRUSTED_COUNTRY_HEADER: 'CF-IPCountry',
      TRUSTED_CLIENT_IP_HEADER: 'X-Forwarded-For',
      UTM_PARAMS: 'utm_source=lifeline&utm_medium=social',
    },
  });
});
after(async () => {
  await h.close();
  await fake.stop();
});
beforeEach(() => fake.reset());

function visit(code: string, headers: Record<string, string> = {}, method = 'GET') {
  return h.app.request(`/${code}`, {
    method,
    headers: { 'User-Agent': HUMAN, 'X-Forwarded-For': READER_IP, ...headers },
  });
}

/** Everything written so far reaches the forwarder, and the forwarder has sent what it could. */
async function flushAll() {
  await h.deps.clicks.flush();
  await h.deps.ga4!.flush();
}

async function metric(outcome: string): Promise<number> {
  const m = await h.deps.metrics.ga4Events.get();
  return m.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

type Event = { name: string; params: Record<string, string>; timestamp_micros: number };

describe('GA4 from the click pipeline', () => {
  test('human clicks and QR scans arrive as batches of at most 25 valid events, one per click', async () => {
    const story = await createLinkCode(h, {
      url: 'https://news.example/2026/story',
      utm: { campaign: 'election-night', source: 'newsletter' },
    });
    const other = await createLinkCode(h, { url: 'https://www.example.org/other?utm_medium=print' });
    const sentBefore = await metric('sent');
    for (let i = 0; i < 30; i++) {
      const res = await visit(story, { 'CF-IPCountry': 'de', Referer: 'https://t.co/abc' });
      assert.equal(res.status, 301);
    }
    for (let i = 0; i < 10; i++) assert.equal((await visit(story, { 'CF-IPCountry': 'EG' })).status, 301);
    for (let i = 0; i < 13; i++) assert.equal((await visit(other)).status, 301);
    for (let i = 0; i < 5; i++)
      assert.equal((await visit(`${story}?qr=1`, { 'CF-IPCountry': 'FR' })).status, 301);
    // Not people: never forwarded.
    await visit(story, {}, 'HEAD');
    await visit(story, { 'User-Agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' });
    await visit(story, {
      'User-Agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    });
    await visit(story, { 'User-Agent': '' });

    assert.equal(fake.requests.length, 0, 'a redirect sends nothing to GA4 by itself');
    await flushAll();

    const collect = fake.collected.filter((c) => c.endpoint === 'collect');
    const sizes = collect.map((c) => (c.body as { events: unknown[] }).events.length);
    assert.equal(
      sizes.reduce((a, b) => a + b, 0),
      58,
      'one event per human click or QR scan (40 + 13 + 5)',
    );
    assert.ok(
      sizes.every((n) => n >= 1 && n <= 25),
      `batches of at most 25: ${sizes}`,
    );
    assert.equal(collect.length, Math.ceil(58 / 25), `as few requests as 25-event batches allow: ${sizes}`);
    for (const c of collect) {
      assert.deepEqual(c.validationMessages, [], `valid for GA4's validation server: ${c.raw}`);
      assert.equal(c.measurementId, 'G-LIFELINE01');
      assert.equal(c.apiSecret, 'mp-secret-ga4-test');
    }

    const events = fake.collectedEvents() as Event[];
    assert.ok(events.every((e) => e.name === 'short_link_click'));
    const of = (code: string, kind: string, country?: string) =>
      events.filter(
        (e) =>
          e.params.link_code === code && e.params.kind === kind && (!country || e.params.country === country),
      );
    assert.equal(of(story, 'human', 'DE').length, 30);
    assert.equal(of(story, 'human', 'EG').length, 10);
    assert.equal(of(story, 'qr', 'FR').length, 5);
    assert.equal(of(other, 'human').length, 13);
    // The destination each reader was sent to: host and UTM values, the link's own winning over UTM_PARAMS,
    // the target's own winning over both.
    assert.deepEqual(of(story, 'human', 'DE')[0]!.params, {
      link_code: story,
      kind: 'human',
      link_host: 'news.example',
      campaign: 'election-night',
      source: 'newsletter',
      medium: 'social',
      country: 'DE',
      referrer_host: 't.co',
    });
    assert.deepEqual(of(other, 'human')[0]!.params, {
      link_code: other,
      kind: 'human',
      link_host: 'www.example.org',
      source: 'lifeline',
      medium: 'print',
    });
    // Stamped with the click's time (backdating allowed up to 72 h), never in the future.
    for (const e of events) {
      const ageMs = Date.now() - e.timestamp_micros / 1000;
      assert.ok(ageMs >= 0 && ageMs < 120_000, `timestamp ${e.timestamp_micros}`);
    }
    assert.equal((await metric('sent')) - sentBefore, 58);
  });

  test('nothing that identifies a reader leaves: no IP, no user agent, a fresh client_id per request', async () => {
    const code = await createLinkCode(h, { url: 'https://news.example/privacy' });
    for (let i = 0; i < 30; i++) await visit(code, { 'CF-IPCountry': 'NL' });
    await flushAll();
    const collect = fake.collected.filter((c) => c.endpoint === 'collect');
    assert.equal(collect.length, 2);
    for (const c of collect) {
      assert.ok(!c.raw.includes(READER_IP), 'no IP');
      assert.ok(!c.raw.includes('TestReader') && !c.raw.includes('Chrome'), 'no user agent');
      const body = c.body as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ['client_id', 'consent', 'events']);
      assert.deepEqual(body.consent, { ad_user_data: 'DENIED', ad_personalization: 'DENIED' });
      assert.match(String(body.client_id), /^\d+\.\d+$/);
    }
    assert.notEqual(
      (collect[0]!.body as { client_id: string }).client_id,
      (collect[1]!.body as { client_id: string }).client_id,
    );
  });

  test('GA4 unreachable: redirects and click_counts are unaffected; the events go out at a later flush', async () => {
    const code = await createLinkCode(h, { url: 'https://news.example/outage' });
    // flushAll sends twice (the buffer's written batch, then the explicit flush), three attempts each.
    fake.failNext({ path: '/mp/collect', answer: { status: 503 }, times: 6 });
    for (let i = 0; i < 7; i++) assert.equal((await visit(code)).status, 301);
    await flushAll();
    assert.equal(fake.collected.length, 0, 'every attempt refused');
    assert.equal(fake.requests.length, 6);
    const [row] = await h.db.sql<{ n: number }[]>`
      SELECT sum(clicks)::int AS n FROM click_counts WHERE code = ${code} AND kind = 'human'`;
    assert.equal(row?.n, 7, 'our own count never waits for GA4');
    await h.deps.ga4!.flush();
    assert.equal(fake.collectedEvents().length, 7, 'kept and sent once GA4 answers');
    assert.ok((await metric('retried')) >= 4);
  });
});
