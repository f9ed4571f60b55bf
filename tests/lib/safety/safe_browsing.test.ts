import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type SafeBrowsingFake,
  startSafeBrowsingFake,
  TEST_MALWARE_URL,
  TEST_PHISHING_URL,
  TEST_UNWANTED_URL,
} from '../../../devkit/fakes/safe_browsing_fake.ts';
import { createSafeBrowsing, parseDurationMs } from '../../../lib/safety/safe_browsing.ts';

let fake: SafeBrowsingFake;
before(async () => {
  fake = await startSafeBrowsingFake();
});
after(async () => {
  await fake.close();
});

function client(overrides: Partial<Parameters<typeof createSafeBrowsing>[0]> = {}) {
  return createSafeBrowsing({ apiKey: fake.apiKey, apiBaseUrl: fake.baseUrl, ...overrides });
}

interface FindResponse {
  matches?: { threat: { url: string }; cacheDuration: string }[];
  error?: { details: { reason: string }[] };
}

async function rawFind(body: unknown, key = fake.apiKey): Promise<{ status: number; json: FindResponse }> {
  const res = await fetch(`${fake.baseUrl}/v4/threatMatches:find?key=${key}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as FindResponse };
}

const validBody = (urls: string[]) => ({
  client: { clientId: 't', clientVersion: '1' },
  threatInfo: {
    threatTypes: ['MALWARE'],
    platformTypes: ['ANY_PLATFORM'],
    threatEntryTypes: ['URL'],
    threatEntries: urls.map((url) => ({ url })),
  },
});

describe('the Safe Browsing fake keeps the contract', () => {
  test('clean is {}, a hit echoes the URL with a cacheDuration', async () => {
    assert.deepEqual((await rawFind(validBody(['https://example.com/']))).json, {});
    const hit = await rawFind(validBody([TEST_MALWARE_URL]));
    assert.equal(hit.json.matches?.[0]?.threat.url, TEST_MALWARE_URL);
    assert.equal(hit.json.matches?.[0]?.cacheDuration, '300s');
  });
  test('errors: bad key 400 API_KEY_INVALID, missing entry type 400, over 500 entries 400', async () => {
    const bad = await rawFind(validBody(['https://example.com/']), 'nope');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error?.details[0]?.reason, 'API_KEY_INVALID');
    const body = validBody(['https://example.com/']);
    body.threatInfo.threatEntryTypes = [];
    assert.equal((await rawFind(body)).status, 400);
    const many = validBody(Array.from({ length: 501 }, (_, i) => `https://e.example/${i}`));
    assert.equal((await rawFind(many)).status, 400);
  });
});

describe('createSafeBrowsing', () => {
  test('parses protobuf durations in both spellings', () => {
    assert.equal(parseDurationMs('300s'), 300_000);
    assert.equal(parseDurationMs('300.000s'), 300_000);
    assert.equal(parseDurationMs('1.5s'), 1_500);
    assert.equal(parseDurationMs('soon'), null);
  });

  test('finds threats, including several lists for one URL, and batches at most 500 URLs per call', async () => {
    fake.requests.length = 0;
    const sb = client();
    const urls = Array.from({ length: 1_100 }, (_, i) => `https://clean.example/${i}`);
    const answer = await sb.lookup([...urls, TEST_MALWARE_URL, TEST_PHISHING_URL, TEST_UNWANTED_URL]);
    assert.deepEqual(
      fake.requests.map((r) => r.entries),
      [500, 500, 103],
    );
    assert.deepEqual(answer.threats.get(TEST_MALWARE_URL), ['MALWARE']);
    assert.deepEqual(answer.threats.get(TEST_PHISHING_URL), ['SOCIAL_ENGINEERING']);
    assert.deepEqual(answer.threats.get(TEST_UNWANTED_URL), ['UNWANTED_SOFTWARE']);
    assert.equal(answer.threats.size, 3);
    assert.equal(answer.unavailable.size, 0);

    fake.addThreat('https://two-lists.example/x', 'MALWARE');
    fake.addThreat('https://two-lists.example/x', 'SOCIAL_ENGINEERING');
    assert.deepEqual(
      (await sb.lookup(['https://two-lists.example/x'])).threats.get('https://two-lists.example/x'),
      ['MALWARE', 'SOCIAL_ENGINEERING'],
    );
    // Host-suffix matching: a listed site covers its pages and subdomains.
    fake.addThreat('evil-site.example/', 'MALWARE');
    assert.ok(
      (await sb.lookup(['https://www.evil-site.example/a/b?c=1'])).threats.has(
        'https://www.evil-site.example/a/b?c=1',
      ),
    );
  });

  test('honours cacheDuration for matches, and never caches a clean answer', async () => {
    let now = 1_000_000;
    const sb = client({ now: () => now });
    fake.cacheDuration = '300.000s';
    fake.requests.length = 0;
    await sb.lookup([TEST_MALWARE_URL, 'https://fine.example/']);
    await sb.lookup([TEST_MALWARE_URL, 'https://fine.example/']);
    assert.deepEqual(
      fake.requests.map((r) => r.urls),
      [[TEST_MALWARE_URL, 'https://fine.example/'], ['https://fine.example/']],
    );
    now += 301_000;
    await sb.lookup([TEST_MALWARE_URL]);
    assert.deepEqual(fake.requests.at(-1)!.urls, [TEST_MALWARE_URL]);
    fake.cacheDuration = '300s';
  });

  test('backs off after a non-200 (no calls until the back-off ends), then recovers', async () => {
    let now = 5_000_000;
    const errors: (number | null)[] = [];
    const sb = client({
      now: () => now,
      random: () => 0,
      backoffBaseMs: 60_000,
      onError: (e) => errors.push(e.status),
    });
    fake.requests.length = 0;
    fake.failNext(503);
    const first = await sb.lookup([
      'https://a.example/',
      ...Array.from({ length: 600 }, (_, i) => `https://b.example/${i}`),
    ]);
    // The first batch failed: it and every later batch are unverified, and only one call was made.
    assert.equal(first.unavailable.size, 601);
    assert.equal(fake.requests.length, 1);
    assert.equal(sb.backoffUntil(), now + 60_000);
    now += 30_000;
    assert.equal((await sb.lookup([TEST_MALWARE_URL])).unavailable.size, 1);
    assert.equal(fake.requests.length, 1);
    // Consecutive failures double the back-off (2^(N-1) * base).
    now += 31_000;
    fake.failNext(429);
    await sb.lookup(['https://a.example/']);
    assert.equal(sb.backoffUntil(), now + 120_000);
    now += 121_000;
    const ok = await sb.lookup([TEST_MALWARE_URL]);
    assert.equal(ok.unavailable.size, 0);
    assert.deepEqual(ok.threats.get(TEST_MALWARE_URL), ['MALWARE']);
    assert.equal(sb.backoffUntil(), null);
    assert.deepEqual(errors, [503, 429]);
  });

  test('a wrong key, a timeout and a forbidden project all count as failures', async () => {
    const wrongKey = createSafeBrowsing({ apiKey: 'wrong', apiBaseUrl: fake.baseUrl, backoffBaseMs: 1 });
    const messages: string[] = [];
    const spy = createSafeBrowsing({
      apiKey: 'wrong',
      apiBaseUrl: fake.baseUrl,
      backoffBaseMs: 1,
      onError: (e) => messages.push(e.message),
    });
    assert.equal((await wrongKey.lookup(['https://x.example/'])).unavailable.size, 1);
    await spy.lookup(['https://x.example/']);
    assert.match(messages[0]!, /INVALID_ARGUMENT: API key not valid/);
    assert.doesNotMatch(messages[0]!, /wrong/);

    const slow = client({ timeoutMs: 200, backoffBaseMs: 1 });
    fake.delayNext(1_000);
    const timedOut: string[] = [];
    const slowSpy = client({ timeoutMs: 200, backoffBaseMs: 1, onError: (e) => timedOut.push(e.message) });
    fake.delayNext(1_000);
    assert.equal((await slow.lookup(['https://x.example/'])).unavailable.size, 1);
    await slowSpy.lookup(['https://x.example/']);
    assert.deepEqual(timedOut, ['timed out']);

    fake.failNext(403);
    assert.equal((await client({ backoffBaseMs: 1 }).lookup(['https://x.example/'])).unavailable.size, 1);
  });
});
