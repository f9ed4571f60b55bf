// The scheduled checks' work on real Postgres against loopback sites: seeding (new links due at once, old ones
// spread, a retarget resets), the two-check rule on an injected clock (explicit timestamps, no waiting a day),
// excluded hosts, the read other code uses, and the metrics.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type DestinationSites, startDestinationSites } from '../../../devkit/fakes/destination_sites.ts';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { checkDueDestinations } from '../../../lib/destinations/check_due_destinations.ts';
import {
  createDestinationCheckDeps,
  type DestinationCheckDeps,
} from '../../../lib/destinations/destination_check_deps.ts';
import {
  CONFIRM_AFTER_MS,
  DAY_MS,
  nextDestinationState,
} from '../../../lib/destinations/destination_verdict.ts';
import { seedDestinationStates } from '../../../lib/destinations/seed_destination_states.ts';
import { parseConfig } from '../../../lib/shared/config.ts';
import { createLogger } from '../../../lib/shared/logger.ts';
import { createMetrics, registerDestinationMetrics } from '../../../lib/shared/metrics.ts';
import { runOnce } from '../../../lib/shared/task_context.ts';
import {
  getDestinationOverview,
  getDestinationState,
  listDestinationStatesByVerdict,
} from '../../../lib/stores/destination_state_store.ts';

let db: TestDatabase;
let sites: DestinationSites;
let deps: DestinationCheckDeps;
let clockMs = Date.now();
const counted: string[] = [];
const metrics = createMetrics();
const destinationMetrics = registerDestinationMetrics(metrics.registry, () => getDestinationOverview(db.sql));

before(async () => {
  db = await createTestDatabase();
  sites = await startDestinationSites();
  sites.set('ok.test', { kind: 'page', paths: ['/story'], title: 'The story' });
  sites.set('gone404.test', { kind: 'status', status: 404 });
  sites.set('moved.test', { kind: 'redirects', hops: 1 });
  sites.set('excluded.test', { kind: 'page' });
  const config = parseConfig({
    DATABASE_URL: db.url,
    OUTGOING_ALLOWED_PRIVATE: '127.0.0.0/8',
    DESTINATION_CHECK_HOST_RATE: '50',
    DESTINATION_CHECK_EXCLUDED_HOSTS: 'excluded.test',
    LOG_LEVEL: 'silent',
  });
  deps = createDestinationCheckDeps(config, {
    sql: db.sql,
    logger: createLogger({ level: 'silent', name: 'test' }),
    lookup: sites.lookup(),
    resolveNs: async () => ['ns1.example-dns.net'],
    now: () => new Date(clockMs),
    countCheck: (outcome) => {
      counted.push(outcome);
      destinationMetrics.countCheck(outcome);
    },
  });
  const url = (host: string, path: string) => sites.url(host, path);
  await db.sql`
    INSERT INTO links (code, target_url, status, origin, owner, created_at) VALUES
      ('dc-ok', ${url('ok.test', '/story')}, 'active', 'api', 'test', now()),
      ('dc-gone', ${url('gone404.test', '/old')}, 'active', 'api', 'test', now()),
      ('dc-moved', ${url('moved.test', '/hop0')}, 'active', 'ui', 'test', now()),
      ('dc-excl', ${url('excluded.test', '/x')}, 'active', 'api', 'test', now()),
      ('dc-old', ${url('ok.test', '/story')}, 'active', 'import', 'test', now() - interval '2 days'),
      ('dc-pend', ${url('ok.test', '/story')}, 'pending', 'wordpress', 'test', now())`;
});
after(async () => {
  await sites.close();
  await db.drop();
});

/** Codes the checks handed to acting on a verdict, in order. */
const acted: string[] = [];
const run = () =>
  checkDueDestinations(deps, { maxChecks: 100 }, runOnce(), async (code) => {
    acted.push(code);
  });
const state = async (code: string) => (await getDestinationState(db.sql, code))!;

describe('the two-check rule (pure)', () => {
  const t0 = new Date('2026-12-01T10:00:00Z');
  const week = 7 * DAY_MS;
  test('one failure is suspect and is checked again a day later; two a day apart are dead or moved', () => {
    const first = nextDestinationState({ verdict: 'ok', failures: 0, firstFailedAt: null }, 'gone', t0, week);
    assert.deepEqual(first, {
      verdict: 'suspect',
      verdictChanged: true,
      failures: 1,
      firstFailedAt: t0,
      nextCheckAt: new Date(t0.getTime() + CONFIRM_AFTER_MS),
    });
    const soon = nextDestinationState(first, 'gone', new Date(t0.getTime() + 3_600_000), week);
    assert.deepEqual([soon.verdict, soon.failures, soon.verdictChanged], ['suspect', 2, false]);
    assert.equal(soon.nextCheckAt.getTime(), t0.getTime() + CONFIRM_AFTER_MS);
    const dayLater = new Date(t0.getTime() + DAY_MS);
    const dead = nextDestinationState(soon, 'unreachable', dayLater, week);
    assert.deepEqual([dead.verdict, dead.verdictChanged], ['dead', true]);
    assert.equal(dead.nextCheckAt.getTime(), dayLater.getTime() + week);
    assert.equal(nextDestinationState(first, 'moved', dayLater, week).verdict, 'moved');
    // A good check in between clears everything.
    const ok = nextDestinationState(first, 'ok', dayLater, week);
    assert.deepEqual([ok.verdict, ok.failures, ok.firstFailedAt], ['ok', 0, null]);
    assert.equal(
      nextDestinationState(ok, 'gone', new Date(dayLater.getTime() + DAY_MS), week).verdict,
      'suspect',
    );
  });
});

describe('checkDueDestinations', () => {
  test('seeding: active links only; new ones due now, old ones spread over the interval', async () => {
    assert.equal((await seedDestinationStates(deps)).seeded, 5);
    assert.equal((await seedDestinationStates(deps)).seeded, 0, 'a second seeding finds nothing');
    assert.equal(await getDestinationState(db.sql, 'dc-pend'), null);
    const fresh = await state('dc-ok');
    assert.deepEqual(
      [fresh.verdict, fresh.host, fresh.current, fresh.checks],
      ['unchecked', 'ok.test', true, 0],
    );
    assert.ok(fresh.nextCheckAt.getTime() <= Date.now() + 1000);
    const old = await state('dc-old');
    assert.ok(old.nextCheckAt.getTime() <= Date.now() + deps.settings.intervalMs);
    const overview = await getDestinationOverview(db.sql);
    assert.equal(overview.byVerdict.unchecked, 5);
    assert.ok(overview.oldestDueAgeSeconds >= 0);
  });

  test('first check: outcomes recorded, failures suspect, the title read (and given to an untitled link), an excluded host skipped', async () => {
    // The old link's spread due time is pushed out of the way, so this run checks exactly the new links.
    await db.sql`UPDATE destination_states SET next_check_at = now() + interval '3 days' WHERE code = 'dc-old'`;
    clockMs = Date.now() + 1_000;
    const { counts, more } = await run();
    assert.equal(more, false);
    assert.deepEqual(counts, { checked: 3, skipped: 1, byOutcome: { ok: 1, gone: 1, moved: 1 } });
    const ok = await state('dc-ok');
    assert.deepEqual(
      [ok.outcome, ok.verdict, ok.httpStatus, ok.pageTitle, ok.checks],
      ['ok', 'ok', 200, 'The story', 1],
    );
    assert.equal(ok.nextCheckAt.getTime(), clockMs + deps.settings.intervalMs);
    // Crawl on create: the link had no title, so it takes the page's, audited as the checks' change.
    const titles = await db.sql<{ code: string; title: string | null }[]>`
      SELECT code, title FROM links WHERE code IN ('dc-ok', 'dc-gone') ORDER BY code`;
    assert.deepEqual(
      titles.map((r) => [r.code, r.title]),
      [
        ['dc-gone', null],
        ['dc-ok', 'The story'],
      ],
    );
    const audit = await db.sql<{ actor: string; after: { title: string } }[]>`
      SELECT actor, after FROM audit_log WHERE code = 'dc-ok' AND action = 'link.updated'`;
    assert.deepEqual(
      audit.map((a) => [a.actor, a.after.title]),
      [['system:destination-checks', 'The story']],
    );
    const gone = await state('dc-gone');
    assert.deepEqual([gone.outcome, gone.verdict, gone.failures], ['gone', 'suspect', 1]);
    assert.equal(gone.firstFailedAt?.getTime(), clockMs);
    assert.equal(gone.nextCheckAt.getTime(), clockMs + CONFIRM_AFTER_MS);
    const moved = await state('dc-moved');
    assert.deepEqual(
      [moved.outcome, moved.verdict, moved.finalUrl],
      ['moved', 'suspect', sites.url('moved.test', '/hop1')],
    );
    assert.deepEqual(
      moved.chain.map((h) => h.status),
      [301, 200],
    );
    const excluded = await state('dc-excl');
    assert.deepEqual([excluded.outcome, excluded.verdict, excluded.checks], [null, 'unchecked', 0]);
    assert.ok(!sites.requests.some((r) => r.host === 'excluded.test'), 'an excluded host is never asked');
    assert.equal((await run()).counts.checked, 0, 'nothing is due until the clock moves');
  });

  test('a second failure within the day stays suspect; after a day it is dead (or moved); recovery clears it', async () => {
    const t0 = clockMs;
    clockMs = t0 + 2 * 3_600_000;
    await db.sql`UPDATE destination_states SET next_check_at = ${new Date(t0)} WHERE code IN ('dc-gone', 'dc-moved')`;
    acted.length = 0;
    await run();
    assert.deepEqual([(await state('dc-gone')).verdict, (await state('dc-gone')).failures], ['suspect', 2]);
    assert.equal(acted.length, 0, 'nothing acts on suspect');
    assert.equal((await listDestinationStatesByVerdict(db.sql, 'dead', { limit: 10 })).length, 0);

    clockMs = t0 + CONFIRM_AFTER_MS;
    const { counts } = await run();
    assert.deepEqual(counts.byOutcome, { gone: 1, moved: 1 });
    assert.deepEqual(acted.toSorted(), ['dc-gone', 'dc-moved'], 'dead and moved are acted on');
    const dead = await state('dc-gone');
    assert.deepEqual([dead.verdict, dead.failures, dead.verdictAt?.getTime()], ['dead', 3, clockMs]);
    assert.equal((await state('dc-moved')).verdict, 'moved');
    assert.deepEqual(
      (await listDestinationStatesByVerdict(db.sql, 'dead', { limit: 10 })).map((s) => s.code),
      ['dc-gone'],
    );
    const overview = await getDestinationOverview(db.sql);
    assert.deepEqual([overview.byVerdict.dead, overview.byVerdict.moved], [1, 1]);

    sites.set('gone404.test', { kind: 'page', paths: ['/old'] });
    clockMs += deps.settings.intervalMs;
    acted.length = 0;
    await run();
    assert.ok(acted.includes('dc-gone'), 'ok after dead is acted on (a fallback to lift)');
    assert.ok(!acted.includes('dc-ok'), 'ok after ok is not');
    const back = await state('dc-gone');
    assert.deepEqual([back.verdict, back.failures, back.firstFailedAt], ['ok', 0, null]);
  });

  test('a retarget resets the row at the next seeding; the metrics count checks and verdicts', async () => {
    await db.sql`UPDATE links SET target_url = ${sites.url('ok.test', '/story')} WHERE code = 'dc-moved'`;
    assert.equal((await state('dc-moved')).current, false);
    assert.equal((await seedDestinationStates(deps)).seeded, 1);
    const reset = await state('dc-moved');
    assert.deepEqual(
      [reset.verdict, reset.outcome, reset.failures, reset.chain, reset.current],
      ['unchecked', null, 0, [], true],
    );
    const text = await metrics.registry.metrics();
    assert.match(text, /^lifeline_destination_checks_total\{outcome="gone"\} 3$/m);
    assert.match(text, /^lifeline_destination_checks_total\{outcome="skipped"\} \d+$/m);
    assert.match(text, /^lifeline_destination_verdicts\{verdict="unchecked"\} 2$/m);
    assert.match(text, /^lifeline_destination_check_queue_age_seconds \d/m);
    assert.ok(counted.length >= 8);
  });
});
