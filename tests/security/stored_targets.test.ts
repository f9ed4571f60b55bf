import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { loadConfig } from '../../boot/load_config.ts';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { reviewStoredTargets, TARGET_REVIEW_SETTING } from '../../lib/links/review_stored_targets.ts';
import { createLayeredResolver } from '../../lib/redirect/layered_resolver.ts';
import { isTamperedRecord, type ServingRecord } from '../../lib/redirect/serving_record.ts';
import type { ServingStore } from '../../lib/redirect/serving_store.ts';
import { ConfigError } from '../../lib/shared/config.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { createMetrics } from '../../lib/shared/metrics.ts';
import { listAuditEntries } from '../../lib/stores/audit_store.ts';
import { getSetting } from '../../lib/stores/settings_store.ts';
import { createCanonicalTargetPolicy } from '../../lib/targets/target_rule.ts';

// Links stored before the one target rule, reviewed once at start-up (ADR 0017); the serving-time re-check's
// alert; configuration that names a bad ALLOWED_TARGET_HOSTS entry.

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.drop();
});

/** A pino logger whose lines are kept, parsed. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger({ level: 'info', destination }), lines };
}

const policy = createCanonicalTargetPolicy({
  allowedTargetHosts: ['news.example'],
  shortBaseUrl: 'https://sho.rt',
});

async function insert(code: string, url: string, expiredUrl: string | null = null) {
  await db.sql`INSERT INTO links (code, target_url, expired_url, status, safety, origin, owner)
               VALUES (${code}, ${url}, ${expiredUrl}, 'active', 'clean', 'api', 'old-version')`;
}

async function target(code: string) {
  const [row] = await db.sql<{ url: string; expiredUrl: string | null; version: number }[]>`
    SELECT target_url AS url, expired_url AS "expiredUrl", version FROM links WHERE code = ${code}`;
  return row!;
}

describe('the stored-target review', () => {
  test('canonicalises what only differs in spelling, reports (never changes) what breaks the rule, once', async () => {
    await insert('Spelt1', 'HTTPS://News.Example./story', 'https://news.example:443/fallback');
    await insert('Fine01', 'https://news.example/already');
    await insert('Slash1', 'https://news.example\\@evil.example/');
    await insert('Elsew1', 'https://evil.example/x');
    await insert('Loop01', 'https://SHO.RT./loop');
    const { logger, lines } = capturingLogger();
    const summary = await reviewStoredTargets(db.sql, policy, logger);
    assert.ok(summary);
    assert.equal(summary.read, 5);
    assert.equal(summary.canonicalised, 3, 'two fields of Spelt1 and the loop');
    assert.equal(summary.refused, 3);
    assert.deepEqual(summary.refusedTargets.map((r) => r.code).sort(), ['Elsew1', 'Loop01', 'Slash1']);

    const spelt1 = await target('Spelt1');
    assert.equal(spelt1.url, 'https://news.example/story');
    assert.equal(spelt1.expiredUrl, 'https://news.example/fallback');
    assert.equal((await target('Fine01')).version, 1, 'a canonical target is not touched');
    assert.equal((await target('Slash1')).url, 'https://news.example\\@evil.example/', 'never changed');
    assert.equal((await target('Elsew1')).url, 'https://evil.example/x');
    assert.equal((await target('Loop01')).url, 'https://sho.rt/loop', 'canonicalised, and still refused');

    const spelt = await listAuditEntries(db.sql, 'Spelt1');
    assert.equal(spelt.filter((a) => a.action === 'link.target_canonicalised').length, 2);
    const refused = await listAuditEntries(db.sql, 'Slash1');
    assert.match(refused.find((a) => a.action === 'link.target_refused')?.reason ?? '', /backslash/);
    assert.ok(
      lines.some((l) => l.alert === 'unservable_target' && l.code === 'Elsew1' && l.level === 'error'),
    );
    assert.ok(lines.some((l) => l.alert === 'unservable_targets' && l.refused === 3));
    assert.equal((await getSetting<{ refused: number }>(db.sql, TARGET_REVIEW_SETTING))?.refused, 3);

    // Done for this rule version and policy: the next start costs one settings read.
    assert.equal(await reviewStoredTargets(db.sql, policy, logger), null);
    // A new policy (the allowlist changed) reviews again.
    const wider = createCanonicalTargetPolicy({
      allowedTargetHosts: ['news.example', 'evil.example'],
      shortBaseUrl: 'https://sho.rt',
    });
    const again = await reviewStoredTargets(db.sql, wider, logger);
    assert.equal(again?.refused, 2, 'evil.example is allowed now; the backslash and the loop still are not');
  });

  test("the migration step reviews under the deployment's settings, so a process starting after it only checks", async () => {
    // Its own database: the review is per database, and the tests above share theirs.
    const own = await createTestDatabase();
    try {
      await own.sql`INSERT INTO links (code, target_url, status, safety, origin, owner) VALUES
        ('Spelt2', 'HTTPS://News.Example./story', 'active', 'clean', 'api', 'old-version'),
        ('Elsew2', 'https://evil.example/y', 'active', 'clean', 'api', 'old-version')`;
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        DATABASE_URL: own.url,
        SHORT_BASE_URL: 'https://sho.rt',
        ALLOWED_TARGET_HOSTS: 'news.example',
      };
      const migrate = () =>
        spawnSync(process.execPath, ['--import', 'tsx', 'scripts/migrate.ts'], {
          cwd: join(import.meta.dirname, '..', '..'),
          encoding: 'utf8',
          env,
        });
      const first = migrate();
      assert.equal(first.status, 0, first.stderr);
      assert.match(
        first.stderr,
        /stored targets: 2 links read, 1 rewritten to their canonical form, 1 refused/,
      );
      assert.match(first.stdout, /"alert":"unservable_target".*"code":"Elsew2"/);
      const [spelt] = await own.sql<
        { url: string }[]
      >`SELECT target_url AS url FROM links WHERE code = 'Spelt2'`;
      assert.equal(spelt?.url, 'https://news.example/story');
      // What web and worker run at start (prepareDatabase), under the same settings: found done, nothing read.
      const { logger } = capturingLogger();
      assert.equal(
        await reviewStoredTargets(own.sql, createCanonicalTargetPolicy(loadConfig(env)), logger),
        null,
      );
      const second = migrate();
      assert.equal(second.status, 0, second.stderr);
      assert.match(second.stderr, /stored targets: already reviewed under this rule and policy/);
    } finally {
      await own.drop();
    }
  });

  test('after the review, canonicalised links redirect and refused ones answer 404 with an alert', async () => {
    const { logger, lines } = capturingLogger();
    const metrics = createMetrics();
    const resolver = createLayeredResolver({
      sql: db.sql,
      metrics,
      logger,
      cacheMax: 100,
      cacheTtlMs: 60_000,
      negativeTtlMs: 1_000,
      storeTimeoutMs: 50,
      postgresConcurrency: 2,
      targetPolicy: policy,
    });
    try {
      assert.equal((await resolver.resolve('Spelt1'))?.url, 'https://news.example/story');
      const refused = await resolver.resolve('Slash1');
      assert.ok(refused && isTamperedRecord(refused), 'a stand-in that answers 404');
      assert.equal(refused.url, '', 'no destination at all');
      await resolver.resolve('Slash1'); // an LRU hit: not checked or logged again
      const alerts = lines.filter((l) => l.alert === 'tampered_target');
      assert.equal(alerts.length, 1);
      assert.equal(alerts[0]!.code, 'Slash1');
      assert.equal(alerts[0]!.layer, 'postgres');
    } finally {
      await resolver.close();
    }
  });

  test('a tampered serving-store record with Postgres down answers 404, never its target', async () => {
    const forged: ServingRecord = {
      code: 'Fine01',
      url: 'https://evil.example/',
      status: 'active',
      safety: 'clean',
      redirectStatus: null,
      expiresAt: null,
      expiredUrl: null,
      version: 99,
    };
    const store: ServingStore = {
      kind: 'redis',
      get: async () => forged,
      getMany: async () => [forged],
      put: async () => true,
      delete: async () => {},
      close: async () => {},
    };
    const dead = postgres('postgres://nobody@127.0.0.1:9/none', { max: 1, connect_timeout: 1 });
    const { logger, lines } = capturingLogger();
    const resolver = createLayeredResolver({
      sql: dead as never,
      logger,
      store,
      cacheMax: 10,
      cacheTtlMs: 60_000,
      negativeTtlMs: 1_000,
      storeTimeoutMs: 200,
      postgresConcurrency: 1,
      postgresTimeoutMs: 2_000,
      targetPolicy: policy,
    });
    try {
      const record = await resolver.resolve('Fine01');
      assert.ok(record && isTamperedRecord(record));
      assert.ok(lines.some((l) => l.alert === 'tampered_target' && l.layer === 'serving_store'));
    } finally {
      await resolver.close();
      await dead.end({ timeout: 1 });
    }
  });
});

describe('configuration', () => {
  test('a bad ALLOWED_TARGET_HOSTS or SAFETY_TRUSTED_HOSTS entry names the variable and stops start-up', () => {
    for (const [variable, value] of [
      ['ALLOWED_TARGET_HOSTS', 'news.example,https://evil.example/'],
      ['ALLOWED_TARGET_HOSTS', 'news.example,ne ws.example'],
      ['ALLOWED_TARGET_HOSTS', 'news.example\\@evil.example'],
      ['SAFETY_TRUSTED_HOSTS', 'news.example,a/b'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [variable]: value }),
        (error: unknown) =>
          error instanceof ConfigError && error.problems.some((p) => p.variable === variable),
        `${variable}=${value}`,
      );
    }
    assert.deepEqual(loadConfig({ ALLOWED_TARGET_HOSTS: 'News.Example., münchen.de' }).allowedTargetHosts, [
      'news.example.',
      'münchen.de',
    ]);
    assert.throws(() => loadConfig({ METRICS_TOKEN: 'short' }), /METRICS_TOKEN/);
  });
});
