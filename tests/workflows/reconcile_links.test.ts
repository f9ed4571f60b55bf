import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { startWorkerProcess } from '../../devkit/harness/worker_process.ts';
import { reconcileBitlyPages } from '../../lib/reconcile/reconcile_bitly.ts';
import { runOnce } from '../../lib/shared/task_context.ts';
import { findCodeWindowEnd } from '../../lib/stores/link_store.ts';
import { listUnseenActiveCodes, summarizeMarks, UNSEEN_WINDOW } from '../../lib/stores/reconcile_store.ts';
import { createWorkerDeps } from '../../workers/worker_deps.ts';
import {
  expirySweepQuery,
  getExpirySweepWorkflowId,
  type ReconcileLinksInput,
  type ReconcileReport,
} from '../../workflows/contract.ts';

let fake: BitlyFake;
let h: Harness;
let worker: { stop(): Promise<void> } | undefined;
const FAST = {
  bitly: { timeoutMs: 2_000, rateLimitRetryMs: 300, quotaRetryMs: 300 },
  retryBaseMs: 50,
  retryMaxMs: 400,
  publishWaitMs: 5_000,
};

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({ env: fake.env() });
  worker = await h.startWorker({ vendors: FAST });
});
after(async () => {
  await h.close();
  await fake.stop();
});

interface PlanNode {
  'Relation Name'?: string;
  'Actual Loops'?: number;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

function findNodes(node: PlanNode, match: (n: PlanNode) => boolean): PlanNode[] {
  return [...(match(node) ? [node] : []), ...(node.Plans ?? []).flatMap((p) => findNodes(p, match))];
}

/** A link as Postgres holds it, never synced anywhere (the API would sync it at once). */
async function insertLink(code: string, url: string): Promise<string> {
  await h.db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    VALUES (${code}, ${url}, 'active', 'clean', 'api', 'test')`;
  return code;
}

async function synced(code: string): Promise<void> {
  await h.deps.workflows.syncLink(code, 'test');
  await h.temporal.client.workflow.getHandle(`sync:${code}`).result();
}

async function reconcile(
  input: ReconcileLinksInput,
): Promise<{ workflowId: string; report: ReconcileReport }> {
  const workflowId = uniqueId('reconcile:test');
  const report = (await h.temporal.client.workflow.execute('reconcileLinksWorkflow', {
    taskQueue: h.taskQueue,
    workflowId,
    args: [input],
  })) as ReconcileReport;
  return { workflowId, report };
}

/** A human edits a bitlink in Bitly's UI (here: the same API call). */
async function editOnBitly(code: string, longUrl: string): Promise<void> {
  const link = fake.linkByKeyword(code);
  assert.ok(link);
  const res = await fetch(`${fake.url}/v4/bitlinks/${link.id}`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${fake.env().BITLY_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ long_url: longUrl }),
  });
  assert.equal(res.status, 200, await res.text());
}

describe('reconcileLinksWorkflow (Postgres ↔ Bitly, import)', () => {
  test('reports each kind of drift, repairs it with Postgres winning, imports Bitly-only links', async () => {
    const inSync = await insertLink('InSync1', 'https://news.example/in-sync');
    await synced(inSync);
    const stale = await insertLink('Stale1', 'https://news.example/stale');
    await synced(stale);
    await editOnBitly(stale, 'https://elsewhere.example/edited-by-hand');
    const missing = await insertLink('Missing1', 'https://news.example/missing-on-bitly');
    const collided = await insertLink('Taken-By-Hand', 'https://news.example/ours');
    fake.seed({ keyword: 'Taken-By-Hand', longUrl: 'https://theirs.example/' });
    fake.seed({
      keyword: 'Spring-Sale',
      longUrl: 'https://shop.example/spring?utm_source=x',
      title: 'Made in Bitly',
    });
    fake.seed({ keyword: 'api', longUrl: 'https://shop.example/api' });
    fake.seed({ domain: 'bit.ly', longUrl: 'https://shop.example/random' });
    // A stray the sync archived and tagged (Bitly answered another back-half): never imported.
    fake.seed({ longUrl: 'https://news.example/stray', archived: true, tags: ['lifeline-discarded'] });
    // Made by hand on the branded domain without a custom back-half: shared under its random hash.
    const hashOnly = fake.seed({ longUrl: 'https://shop.example/hash-only' });

    // A check changes nothing and reports everything.
    const check = await reconcile({ repair: false, reason: 'check' });
    assert.deepEqual(check.report.bitly?.drift, {
      stale: 1,
      missing: 1,
      extra: 2,
      collision: 1,
      unimportable: 1,
    });
    assert.deepEqual(check.report.bitly?.repaired, {});
    assert.equal(fake.linkByKeyword(stale)?.longUrl, 'https://elsewhere.example/edited-by-hand');
    assert.equal((await h.app.request('/Spring-Sale')).status, 404);

    // The repair.
    const { workflowId, report } = await reconcile({ reason: 'repair' });
    assert.deepEqual(report.bitly?.drift, { stale: 1, missing: 1, extra: 2, collision: 1, unimportable: 1 });
    assert.deepEqual(report.bitly?.repaired, { stale: 1, missing: 1, extra: 2 });
    assert.equal(report.bitly?.imported, 2);
    assert.equal(
      (await h.app.request(`/${hashOnly.hash}`)).headers.get('Location'),
      'https://shop.example/hash-only',
    );
    assert.deepEqual(report.bitly?.unrepaired.sort(), ['Taken-By-Hand', 'api'].sort());
    assert.equal(report.serving, null, 'no serving store configured here');
    // stale: Bitly points where Postgres says again.
    assert.equal(fake.linkByKeyword(stale)?.longUrl, 'https://news.example/stale');
    // missing: Bitly now holds our code.
    assert.equal(fake.linkByKeyword(missing)?.longUrl, 'https://news.example/missing-on-bitly');
    // extra: imported with its own back-half, and our resolver answers it.
    const imported = (await (await h.api('/api/v1/links/Spring-Sale')).json()) as {
      origin: string;
      url: string;
      status: string;
      safety: string;
      vendors: { name: string; state: string }[];
    };
    assert.deepEqual(
      [imported.origin, imported.url, imported.status, imported.safety],
      ['import', 'https://shop.example/spring?utm_source=x', 'active', 'clean'],
    );
    assert.deepEqual(
      imported.vendors.map((v) => [v.name, v.state]),
      [['bitly', 'synced']],
    );
    const redirect = await h.app.request('/Spring-Sale');
    assert.deepEqual(
      [redirect.status, redirect.headers.get('Location')],
      [301, 'https://shop.example/spring?utm_source=x'],
    );
    // collision: flagged for a human, their link untouched, our code kept.
    assert.equal(fake.linkByKeyword('Taken-By-Hand')?.longUrl, 'https://theirs.example/');
    const [mapping] = await h.db
      .sql`SELECT state FROM vendor_links WHERE code = ${collided} AND vendor = 'bitly'`;
    assert.equal(mapping?.state, 'collision');
    // unimportable: a reserved word is never a code of ours.
    assert.equal((await h.db.sql`SELECT 1 FROM links WHERE code = 'api'`).length, 0);
    // The run is on record.
    const [run] = await h.db.sql`SELECT kind, status, report FROM ops_runs WHERE workflow_id = ${workflowId}`;
    assert.deepEqual([run?.kind, run?.status, run?.report.bitly.imported], ['reconcile', 'succeeded', 2]);
    assert.equal((await h.db.sql`SELECT 1 FROM reconcile_marks WHERE run_id = ${workflowId}`).length, 0);
    await recordHistory('reconcileLinksWorkflow-repaired', workflowId);

    // Afterwards only what needs a human is left.
    const again = await reconcile({ repair: false, reason: 'check again' });
    assert.deepEqual(again.report.bitly?.drift, { collision: 1, unimportable: 1 });
    assert.ok((again.report.bitly?.seen ?? 0) >= 6);
    assert.ok(inSync);
  });

  test('an import of ten thousand Bitly-only links survives the worker being killed: each imported once', async () => {
    await worker?.stop();
    worker = undefined;
    fake.reset(); // only the bulk links below are Bitly-only (the earlier test's links become "missing")
    const total = 10_000;
    for (let i = 0; i < total; i++)
      fake.seed({ keyword: `bulk-${i}`, longUrl: `https://archive.example/${i}` });
    const child = startWorkerProcess({ h, env: fake.env() });
    try {
      await eventually(async () => (child.ready ? true : undefined), {
        timeoutMs: 60_000,
        what: 'the worker process',
      });
      const workflowId = uniqueId('reconcile:test');
      const handle = await h.temporal.client.workflow.start('reconcileLinksWorkflow', {
        taskQueue: h.taskQueue,
        workflowId,
        args: [{ reason: 'bulk import', pagesPerCall: 10, callsPerRun: 4 } satisfies ReconcileLinksInput],
      });
      const importedNow = async () =>
        (await h.db.sql`SELECT count(*)::int AS n FROM links WHERE code LIKE 'bulk-%'`)[0]!.n as number;
      await eventually(async () => ((await importedNow()) >= 2_000 ? true : undefined), {
        timeoutMs: 120_000,
        what: 'part of the import',
      });
      child.process.kill('SIGKILL');
      await new Promise((r) => child.process.once('exit', r));
      const atKill = await importedNow();
      assert.ok(atKill < total, `killed mid-import (${atKill} imported)`);

      worker = await h.startWorker({ vendors: FAST });
      const report = (await handle.result()) as ReconcileReport;
      assert.equal(await importedNow(), total);
      assert.equal(report.bitly?.imported, total);
      assert.equal(report.bitly?.drift.extra, total);
      assert.equal(report.bitly?.repaired.extra, total);
      const [audit] = await h.db.sql`
        SELECT count(*)::int AS entries, count(DISTINCT code)::int AS links FROM audit_log
        WHERE action = 'link.imported' AND code LIKE 'bulk-%'`;
      assert.deepEqual([audit!.entries, audit!.links], [total, total]);
      assert.equal(
        (await h.app.request('/bulk-9999')).headers.get('Location'),
        'https://archive.example/9999',
      );
      assert.notEqual((await handle.describe()).runId, handle.firstExecutionRunId, 'continued as new');
    } finally {
      child.process.kill('SIGKILL');
    }
  });

  test('a lost expiry sweeper is started again with the earliest date; a link past its date expires', async () => {
    // Lost: as after Temporal was restored from an old backup (no sweeper runs for this task queue).
    const sweeper = h.temporal.client.workflow.getHandle(getExpirySweepWorkflowId(h.taskQueue));
    await sweeper.terminate('lost').catch(() => undefined);
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner, expires_at)
      VALUES ('Timer-Lost', 'https://news.example/later', 'active', 'clean', 'api', 'test', now() + interval '1 hour'),
             ('Timer-Late', 'https://news.example/late', 'active', 'clean', 'api', 'test', now() - interval '5 minutes')`;
    const [later] = await h.db.sql`SELECT expires_at FROM links WHERE code = 'Timer-Lost'`;
    const { report } = await reconcile({ reason: 'timers', importExtra: false });
    assert.deepEqual(report.expiry.drift, { missing: 1 }, 'the overdue link');
    assert.deepEqual(report.expiry.repaired, { missing: 1 });
    assert.equal((await sweeper.describe()).status.name, 'RUNNING');
    await eventually(async () => {
      const [row] = await h.db.sql`SELECT status FROM links WHERE code = 'Timer-Late'`;
      return row!.status === 'expired' ? true : undefined;
    });
    // It sleeps until the other link's date (Postgres's, read by its sweep).
    await eventually(async () => {
      const { wakeAtMs } = await sweeper.query(expirySweepQuery);
      return wakeAtMs !== null && Math.abs(wakeAtMs - (later!.expires_at as Date).getTime()) < 5_000
        ? true
        : undefined;
    });
    assert.equal((await h.db.sql`SELECT status FROM links WHERE code = 'Timer-Lost'`)[0]!.status, 'active');
    // A running sweeper with nothing overdue is left alone (described, not signalled).
    const again = await reconcile({ reason: 'timers again', importExtra: false, repair: false });
    assert.deepEqual(again.report.expiry.drift, {});
  });
});

describe('a page of bitlinks processed again (the step retried after a crash)', () => {
  test('a drift repaired before the crash, found in sync on the retry, is counted repaired', async () => {
    const code = await insertLink('Retry-Page', 'https://news.example/retry-page');
    await synced(code);
    await editOnBitly(code, 'https://elsewhere.example/retry-edited');
    const deps = {
      ...createWorkerDeps(h.config, {
        sql: h.db.sql,
        logger: h.logger,
        resolver: h.deps.resolver,
        vendors: FAST,
      }),
      // The expiry sweeper is a workflow's signal; the Bitly leg never uses it.
      sweeper: undefined as never,
    };
    const input = {
      runId: uniqueId('retry-page'),
      startedAtMs: Date.now(),
      position: { phase: 'bitly' as const, cursor: null },
      repair: true,
      importExtra: false,
      budget: 1_000,
    };
    const mark = async () =>
      (
        await h.db.sql<{ drift: string | null; repaired: boolean }[]>`
          SELECT drift, repaired FROM reconcile_marks
          WHERE run_id = ${input.runId} AND side = 'bitly' AND code = ${code}`
      )[0];
    await reconcileBitlyPages(deps, input, runOnce());
    assert.equal(fake.linkByKeyword(code)?.longUrl, 'https://news.example/retry-page');
    assert.deepEqual(await mark(), { drift: 'stale', repaired: true });
    // The crash came after the repair and before it was recorded.
    await h.db
      .sql`UPDATE reconcile_marks SET repaired = false WHERE run_id = ${input.runId} AND code = ${code}`;
    // The retry finds the link in sync, and keeps the drift the first attempt found.
    await reconcileBitlyPages(deps, input, runOnce());
    assert.deepEqual(await mark(), { drift: 'stale', repaired: true });
    const summary = await summarizeMarks(h.db.sql, input.runId, 'bitly');
    assert.ok(!summary.unrepaired.includes(code));
  });
});

describe('the pass over the active links Bitly lacks, window by window', () => {
  test('each statement walks one window; a link Bitly lacks is found past windows where it lacks nothing', async () => {
    // More than two windows of links the pass has nothing to do with (expired), then one active link Bitly lacks.
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      SELECT 'void' || lpad(i::text, 5, '0'), 'https://news.example/old/' || i, 'expired', 'clean', 'api', 'test'
      FROM generate_series(1, ${UNSEEN_WINDOW * 2 + 100}) AS i`;
    await insertLink('voidz', 'https://news.example/past-the-windows');
    // Bounded by a window's end, a statement stops there: nothing in the first 100, the link past the windows.
    const scope = { runId: 'no-run', startedAt: new Date(Date.now() + 60_000) };
    const through = await findCodeWindowEnd(h.db.sql, 'void', 100);
    assert.equal(through, 'void00100');
    assert.deepEqual(await listUnseenActiveCodes(h.db.sql, { ...scope, cursor: 'void', through }), []);
    const last = await listUnseenActiveCodes(h.db.sql, { ...scope, cursor: 'void40100', through: null });
    assert.equal(last[0], 'voidz');

    const { report } = await reconcile({ reason: 'past the windows', repair: true });
    assert.ok((report.bitly?.drift.missing ?? 0) >= 1);
    assert.equal(fake.linkByKeyword('voidz')?.longUrl, 'https://news.example/past-the-windows');
  });

  test("a window's statement reads the run's marks once, and only the window's", async () => {
    // 3,000 active links, and the run's marks for every other one of them: Bitly holds half.
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner, created_at)
      SELECT 'mark' || lpad(i::text, 5, '0'), 'https://news.example/m/' || i, 'active', 'clean', 'api', 'test',
        now() - interval '1 hour'
      FROM generate_series(1, 3000) AS i`;
    const runId = uniqueId('marks-run');
    await h.db.sql`
      INSERT INTO reconcile_marks (run_id, side, code, drift)
      SELECT ${runId}, 'bitly', 'mark' || lpad(i::text, 5, '0'), NULL FROM generate_series(2, 3000, 2) AS i`;
    await h.db.sql`ANALYZE links`;
    await h.db.sql`ANALYZE reconcile_marks`;
    // The statement as the pass sends it, captured from the driver, then explained with its own parameters.
    const sent: { text: string; params: unknown[]; types: number[] }[] = [];
    const spy = postgres(h.db.url, {
      max: 1,
      onnotice: () => {},
      types: {
        bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
      },
      debug: (_connection, text, params, types) =>
        sent.push({ text, params: [...params], types: [...(types as number[])] }),
    });
    try {
      // A parameter array made before the connection knows the array types is sent as text: connect first.
      await spy`SELECT 1`;
      const options = {
        runId,
        startedAt: new Date(),
        cursor: 'mark01000',
        through: await findCodeWindowEnd(h.db.sql, 'mark01000', 500),
      };
      assert.equal(options.through, 'mark01500');
      const unseen = await listUnseenActiveCodes(spy as unknown as typeof h.db.sql, options);
      // Every odd code of the window, nothing outside it.
      assert.equal(unseen.length, 250);
      assert.deepEqual(unseen.slice(0, 3), ['mark01001', 'mark01003', 'mark01005']);
      assert.equal(unseen.at(-1), 'mark01499');
      const statement = sent.find((s) => s.text.includes('reconcile_marks'))!;
      // With the types the parameters were sent with (an array, a timestamp).
      const typed = statement.params.map((value, i) =>
        Array.isArray(value)
          ? spy.array(value, statement.types[i])
          : statement.types[i]
            ? spy.typed(value as never, statement.types[i]!)
            : value,
      );
      const [{ 'QUERY PLAN': plan }] = (await spy.unsafe(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`,
        typed as never[],
      )) as unknown as [{ 'QUERY PLAN': [{ Plan: PlanNode }] }];
      const marks = findNodes(plan[0].Plan, (n) => n['Relation Name'] === 'reconcile_marks');
      assert.equal(marks.length, 1, JSON.stringify(plan));
      // Once per statement, not once per link; and the window's 250 marks, not the run's 1,500.
      assert.equal(marks[0]!['Actual Loops'], 1, 'the marks are read once');
      assert.equal(marks[0]!['Actual Rows'], 250, "the window's marks only");
    } finally {
      await spy.end();
    }
  });
});
