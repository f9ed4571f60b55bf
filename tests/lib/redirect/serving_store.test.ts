import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';
import { Redis } from '@upstash/redis';
import { startUpstashFake, type UpstashFake } from '../../../devkit/fakes/upstash_fake.ts';
import { eventually } from '../../../devkit/harness/harness.ts';
import { createRedisServingStore } from '../../../lib/redirect/redis_serving_store.ts';
import { type ServingRecord, servingRecordSchema } from '../../../lib/redirect/serving_record.ts';
import {
  decodeServingRecord,
  encodeServingRecord,
  type ServingStore,
  servingKey,
} from '../../../lib/redirect/serving_store.ts';
import { createUpstashServingStore } from '../../../lib/redirect/upstash_serving_store.ts';

const REDIS_URL = process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function record(code: string, version: number, overrides: Partial<ServingRecord> = {}): ServingRecord {
  return {
    code,
    url: `https://example.com/${code}/v${version}?q=ü&x=%2F`,
    status: 'active',
    safety: 'clean',
    redirectStatus: null,
    expiresAt: null,
    expiredUrl: null,
    version,
    ...overrides,
  };
}

describe('serving record encoding', () => {
  test('round-trips every field, byte-exact; unreadable values are misses', () => {
    const r = record('abc', 7, {
      url: 'https://例え.jp/パス?a=%E2%9C%93',
      status: 'expired',
      safety: 'warn',
      redirectStatus: 307,
      expiresAt: 1_700_000_000_000,
      expiredUrl: 'https://example.com/gone',
    });
    const raw = encodeServingRecord(r);
    assert.ok(raw.startsWith('7|'));
    assert.deepEqual(decodeServingRecord('abc', raw), r);
    for (const bad of [null, '', 'x|[]', '7|{', '7|["u","nonsense","clean",null,null,null]', '7'])
      assert.equal(decodeServingRecord('abc', bad), null, String(bad));
  });

  test("a link's own UTM values round-trip; records written before them still decode, without them", () => {
    const withUtm = record('utm1', 3, { utm: { campaign: 'حملة', medium: 'email' } });
    const raw = encodeServingRecord(withUtm);
    assert.ok(raw.endsWith(',["حملة",null,"email"]]'), raw);
    assert.deepEqual(decodeServingRecord('utm1', raw), withUtm);
    // Without UTM values the stored form is exactly the six-element one older versions wrote and read.
    const plain = record('utm2', 4);
    assert.equal(
      encodeServingRecord(plain),
      `4|${JSON.stringify([plain.url, 'active', 'clean', null, null, null])}`,
    );
    assert.deepEqual(decodeServingRecord('utm2', encodeServingRecord(plain)), plain);
    for (const bad of [
      '4|["u","active","clean",null,null,null,"x"]',
      '4|["u","active","clean",null,null,null,[1,2]]',
    ])
      assert.equal(decodeServingRecord('utm3', bad), null, bad);
  });

  test("the decoder gives servingRecordSchema's verdict on every field variant (it checks by hand)", () => {
    const base: unknown[] = ['https://example.com/a', 'active', 'clean', null, null, null];
    const variants: Record<number, unknown[]> = {
      0: ['', 'x'.repeat(2048), 'x'.repeat(2049), 1, null, ['u'], { u: 1 }],
      1: ['pending', 'active', 'expired', 'gone', 'blocked', 'ACTIVE', '', null, 1],
      2: ['unknown', 'clean', 'warn', 'blocked', 'bad', null, 0],
      3: [null, 301, 302, 307, 308, 300, 303, '301', 301.5, true],
      4: [null, 0, 1_700_000_000_000, -5, 1.5, '1', Number.MAX_SAFE_INTEGER, 2 ** 60, true],
      5: [null, 'https://example.com/f', 'y'.repeat(2049), 3, ['f']],
      6: [
        undefined,
        null,
        ['a', null, null],
        [null, null, null],
        ['', null, null],
        [1, null, null],
        ['a', 'b'],
        'x',
        {},
      ],
    };
    let checked = 0;
    for (const version of ['0', '7', '-1', '1.5', 'x', '9007199254740993']) {
      for (const [at, values] of Object.entries(variants)) {
        for (const value of values) {
          const fields = [...base];
          if (Number(at) === 6) {
            if (value !== undefined) fields.push(value);
          } else fields[Number(at)] = value;
          const raw = `${version}|${JSON.stringify(fields)}`;
          const [url, status, safety, redirectStatus, expiresAt, expiredUrl, utmField] = fields;
          let utm: unknown;
          let utmReadable = true;
          if (Array.isArray(utmField) && utmField.length === 3) {
            const keys = ['campaign', 'source', 'medium'] as const;
            const entries = keys.flatMap((key, i) => {
              const v = utmField[i];
              if (typeof v === 'string' && v !== '') return [[key, v] as const];
              if (v !== null) utmReadable = false;
              return [];
            });
            utm = entries.length > 0 ? Object.fromEntries(entries) : undefined;
          } else if (utmField !== undefined && utmField !== null) utmReadable = false;
          const parsed = servingRecordSchema.safeParse({
            code: 'c0de',
            url,
            status,
            safety,
            redirectStatus,
            expiresAt,
            expiredUrl,
            ...(utm ? { utm } : {}),
            version: Number(version),
          });
          const expected = utmReadable && parsed.success ? parsed.data : null;
          assert.deepEqual(decodeServingRecord('c0de', raw), expected, raw);
          checked++;
        }
      }
    }
    assert.ok(checked > 300, `checked ${checked}`);
  });
});

let fake: UpstashFake;
before(async () => {
  fake = await startUpstashFake({ redisUrl: REDIS_URL, token: `tok_${randomUUID()}` });
});
after(async () => {
  await fake.stop();
});

const implementations: [string, (prefix: string) => Promise<ServingStore>][] = [
  [
    'Redis (TCP)',
    async (prefix) => {
      const store = createRedisServingStore({ url: REDIS_URL, keyPrefix: prefix });
      await eventually(async () => ((await store.get('probe')) === null ? true : undefined));
      return store;
    },
  ],
  [
    'Upstash (REST, against the fake)',
    async (prefix) => createUpstashServingStore({ url: fake.url, token: fake.token, keyPrefix: prefix }),
  ],
];

for (const [name, open] of implementations) {
  describe(`ServingStore contract: ${name}`, () => {
    let store: ServingStore;
    let prefix: string;
    before(async () => {
      // A unique prefix: the shared Redis is never flushed.
      prefix = `lltest:${randomUUID()}:`;
      store = await open(prefix);
    });
    after(async () => {
      await store.close();
    });

    test('get of a missing code is null; put then get round-trips the record', async () => {
      assert.equal(await store.get('missing'), null);
      const r = record('one', 1, { redirectStatus: 302, expiresAt: 1_800_000_000_000 });
      assert.equal(await store.put(r), true);
      assert.deepEqual(await store.get('one'), r);
    });

    test('versioned writes: an older version never overwrites a newer one; equal or newer does', async () => {
      assert.equal(await store.put(record('ver', 5)), true);
      assert.equal(await store.put(record('ver', 4)), false);
      assert.equal((await store.get('ver'))?.version, 5);
      assert.equal(await store.put(record('ver', 5, { url: 'https://example.com/same' })), true);
      assert.equal((await store.get('ver'))?.url, 'https://example.com/same');
      assert.equal(await store.put(record('ver', 12)), true, 'compared as numbers, not strings');
      assert.equal(await store.put(record('ver', 9)), false);
      assert.equal((await store.get('ver'))?.version, 12);
    });

    test('concurrent writes of many versions settle on the newest', async () => {
      const versions = Array.from({ length: 40 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
      await Promise.all(versions.map((v) => store.put(record('race', v))));
      assert.equal((await store.get('race'))?.version, 40);
    });

    test('getMany answers in order with nulls; delete drops a record (then any version may be written)', async () => {
      await store.put(record('m1', 1));
      await store.put(record('m2', 3));
      const got = await store.getMany(['m1', 'nope', 'm2']);
      assert.deepEqual(
        got.map((r) => r?.version ?? null),
        [1, null, 3],
      );
      assert.deepEqual(await store.getMany([]), []);
      await store.delete('m2');
      assert.equal(await store.get('m2'), null);
      assert.equal(await store.put(record('m2', 1)), true);
    });

    test('records live under {prefix}link:{code}, compactly', async () => {
      const probe = createClient({ url: REDIS_URL });
      await probe.connect();
      try {
        await store.put(record('compact', 2));
        const raw = (await probe.get(servingKey(prefix, 'compact'))) ?? '';
        assert.ok(raw.startsWith('2|["https://example.com/compact/v2'), raw);
        assert.ok(raw.length < 120, `${raw.length} bytes`);
      } finally {
        await probe.close();
      }
    });
  });
}

describe('the Upstash fake speaks what @upstash/redis expects', () => {
  test('a wrong token is 401; pipelines and transactions work; errors come back as errors', async () => {
    const wrong = new Redis({ url: fake.url, token: 'wrong', retry: false, enableTelemetry: false });
    await assert.rejects(wrong.get('x'), /Unauthorized/);
    const redis = new Redis({ url: fake.url, token: fake.token, retry: false, enableTelemetry: false });
    const key = `lltest:${randomUUID()}:k`;
    const p = redis.pipeline();
    p.set(key, 'ü value');
    p.get(key);
    p.incr(`${key}:n`);
    assert.deepEqual(await p.exec(), ['OK', 'ü value', 1]);
    const m = redis.multi();
    m.incr(`${key}:n`);
    m.get(key);
    assert.deepEqual(await m.exec(), [2, 'ü value']);
    await assert.rejects(redis.incr(key), /not an integer/);
    await redis.del(key, `${key}:n`);
  });
});
