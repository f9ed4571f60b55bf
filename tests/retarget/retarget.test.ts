import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { refreshLinks } from '../../lib/propagation/refresh_links.ts';
import { decodeServingRecord } from '../../lib/redirect/serving_store.ts';
import { requestRetarget, requestRetargetUndo, steerRetarget } from '../../lib/retarget/request_retarget.ts';
import { applyRetargetBatch } from '../../lib/retarget/run_retarget.ts';
import { applyRetargetChanges } from '../../lib/stores/retarget_store.ts';

// Mass retargets on real Postgres, Redis and Temporal with the Bitly fake: the dry run changes nothing, an
// approved run changes every link (audit with the previous target, serving store, Bitly), pause / resume /
// cancel, a worker killed mid-run, and the undo restoring every previous target.

const PREFIX = `${uniqueId('lifeline-test')}:`;
const FAST = { bitly: { timeoutMs: 2_000, rateLimitRetryMs: 200 }, retryBaseMs: 50, retryMaxMs: 400 };
let fake: BitlyFake;
let h: Harness;
let redis: ReturnType<typeof createClient>;
let worker: { stop(): Promise<void> } | undefined;

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({
    env: { ...fake.env(), REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: PREFIX },
  });
  worker = await h.startWorker({ vendors: FAST });
  redis = createClient({ url: 'redis://127.0.0.1:6379' });
  await redis.connect();
});
after(async () => {
  await redis?.close();
  await h?.close();
  await fake?.stop();
});

/** Inserts links in one statement (as an import would): `{prefix}{i}` → `{url}{i}/`. */
async function insertLinks(prefix: string, url: string, n: number, extra: { site?: string } = {}) {
  const codes = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  await h.db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner, site, post_id)
    SELECT c, ${url} || i || '/', 'active', 'clean', ${extra.site ? 'wordpress' : 'api'}, 'test',
           ${extra.site ?? null}, CASE WHEN ${extra.site ?? null}::text IS NULL THEN NULL ELSE i + 1 END
    FROM unnest(${h.db.sql.array(codes)}::text[]) WITH ORDINALITY AS t(c, i)`;
  return codes;
}

async function targets(codes: string[]): Promise<Map<string, string>> {
  const rows = await h.db.sql<{ code: string; url: string }[]>`
    SELECT code, target_url AS url FROM links WHERE code = ANY(${h.db.sql.array(codes)}::text[])`;
  return new Map(rows.map((r) => [r.code, r.url]));
}

async function served(code: string): Promise<string | null> {
  return decodeServingRecord(code, await redis.get(`${PREFIX}link:${code}`))?.url ?? null;
}

const adoption = (batchSize?: number) => ({
  ...h.deps.adoption,
  startRetarget: (input: { runId: string }) =>
    h.deps.adoption.startRetarget({ ...input, ...(batchSize ? { batchSize } : {}) }),
});

async function waitStatus(id: string, statuses: string[], timeoutMs = 60_000) {
  return eventually(
    async () => {
      const res = await h.api(`/api/v1/retargets/${id}`);
      const run = (await res.json()) as {
        status: string;
        report: Record<string, unknown>;
        changes?: Record<string, number>;
      };
      return statuses.includes(run.status) ? run : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `run ${id} to be ${statuses.join(' or ')}` },
  );
}

describe('mass retarget', () => {
  test('dry run, approval, batches with the serving store and Bitly following, then an undo restores every target', async () => {
    const codes = await insertLinks('mv', 'https://old.example/news/', 120);
    const others = await insertLinks('stay', 'https://elsewhere.example/', 5);
    // Ten of them already on Bitly (synced before the move).
    for (const code of codes.slice(0, 10)) {
      await h.deps.workflows.syncLink(code, 'test');
      await h.temporal.client.workflow.getHandle(`sync:${code}`).result();
    }
    const before = await targets(codes);

    const res = await h.api('/api/v1/retargets', {
      method: 'POST',
      json: {
        rule: { type: 'prefix', from: 'https://old.example/news/', to: 'https://new.example/stories/' },
      },
    });
    assert.equal(res.status, 202, await res.clone().text());
    const { id } = (await res.json()) as { id: string };
    const planned = await waitStatus(id, ['planned']);
    assert.equal(planned.report.planned, 120);
    assert.equal(planned.report.invalid, 0);
    const sample = planned.report.sample as { code: string; before: string; after: string }[];
    assert.equal(sample.length, 20);
    assert.deepEqual(sample[0], {
      code: sample[0]!.code,
      before: before.get(sample[0]!.code),
      after: before
        .get(sample[0]!.code)!
        .replace('https://old.example/news/', 'https://new.example/stories/'),
    });
    // The dry run changed nothing.
    assert.deepEqual(await targets(codes), before);
    assert.equal(fake.linkByKeyword(codes[0]!)?.longUrl, before.get(codes[0]!));

    const approved = await h.api(`/api/v1/retargets/${id}/approve`, { method: 'POST' });
    assert.equal(approved.status, 202);
    const done = await waitStatus(id, ['finished']);
    assert.deepEqual(done.changes, { applied: 120 });
    await recordHistory('retargetLinksWorkflow-approved', `retarget:${id}`);
    const after = await targets(codes);
    for (const code of codes) {
      const expected = before.get(code)!.replace('https://old.example/news/', 'https://new.example/stories/');
      assert.equal(after.get(code), expected);
      assert.equal(await served(code), expected, `serving store of ${code}`);
      assert.equal(fake.linkByKeyword(code)?.longUrl, expected, `Bitly of ${code}`);
    }
    const redirect = await h.app.request(`/${codes[7]}`);
    assert.equal(redirect.headers.get('Location'), after.get(codes[7]!));
    assert.deepEqual(
      await targets(others),
      new Map(others.map((c, i) => [c, `https://elsewhere.example/${i + 1}/`])),
    );
    const audit = await h.db.sql<{ before: { url: string }; after: { url: string } }[]>`
      SELECT before, after FROM audit_log WHERE action = 'link.retargeted' AND reason = ${`retarget ${id}`}`;
    assert.equal(audit.length, 120, 'one audit entry per change, with the previous target');
    assert.ok(audit.every((a) => a.before.url.startsWith('https://old.example/news/')));

    // The undo: planned, approved, every previous target back (Postgres, serving store, Bitly).
    const undo = (await (await h.api(`/api/v1/retargets/${id}/undo`, { method: 'POST' })).json()) as {
      id: string;
    };
    const undoPlanned = await waitStatus(undo.id, ['planned']);
    assert.equal(undoPlanned.report.planned, 120);
    assert.equal(
      (await h.api(`/api/v1/retargets/${id}/undo`, { method: 'POST' })).status,
      409,
      'one undo per run',
    );
    await h.api(`/api/v1/retargets/${undo.id}/approve`, { method: 'POST' });
    await waitStatus(undo.id, ['finished']);
    assert.deepEqual(await targets(codes), before);
    for (const code of codes) {
      assert.equal(await served(code), before.get(code));
      assert.equal(fake.linkByKeyword(code)?.longUrl, before.get(code));
    }
  });

  test('pause and resume between batches; a worker killed mid-run; cancel; only links still pointing where the plan saw them change', async () => {
    const codes = await insertLinks('pz', 'https://paused.example/a/', 200);
    const run = await requestRetarget(
      { sql: h.db.sql, targetPolicy: h.deps.targetPolicy, adoption: adoption(10) },
      {
        rule: {
          type: 'regex',
          pattern: '^https://paused\\.example/a/(\\d+)/$',
          replacement: 'https://paused.example/b/$1',
        },
      },
      'test',
    );
    await waitStatus(run.id, ['planned']);
    // Changed by an editor after the dry run: the run must not overwrite it.
    await h.db
      .sql`UPDATE links SET target_url = 'https://edited.example/', version = version + 1 WHERE code = ${codes[150]!}`;
    await steerRetarget(
      { sql: h.db.sql, targetPolicy: h.deps.targetPolicy, adoption: h.deps.adoption },
      run.id,
      'approve',
      'test',
    );
    await waitStatus(run.id, ['running']);
    await h.api(`/api/v1/retargets/${run.id}/pause`, { method: 'POST' });
    const paused = await waitStatus(run.id, ['paused']);
    const appliedWhenPaused = paused.changes?.applied ?? 0;
    assert.ok(appliedWhenPaused < 200, `paused part way (${appliedWhenPaused} applied)`);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(
      (await waitStatus(run.id, ['paused'])).changes?.applied ?? 0,
      appliedWhenPaused,
      'nothing moves while paused',
    );
    assert.equal((await h.api(`/api/v1/retargets/${run.id}/approve`, { method: 'POST' })).status, 409);

    // Resumed, and the worker is killed while it applies: its successor finishes, nothing applied twice.
    await h.api(`/api/v1/retargets/${run.id}/resume`, { method: 'POST' });
    await waitStatus(run.id, ['running']);
    await worker!.stop();
    worker = await h.startWorker({ vendors: FAST });
    const done = await waitStatus(run.id, ['finished'], 120_000);
    assert.deepEqual(done.changes, { applied: 199, skipped: 1 });
    await recordHistory('retargetLinksWorkflow-paused-worker-killed', `retarget:${run.id}`);
    const after = await targets(codes);
    assert.equal(after.get(codes[150]!), 'https://edited.example/', 'the editor’s change is kept');
    assert.equal(after.get(codes[3]!), 'https://paused.example/b/4');
    const [audits] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM audit_log WHERE action = 'link.retargeted' AND reason = ${`retarget ${run.id}`}`;
    assert.equal(audits!.n, 199, 'each change audited exactly once');

    // Cancel before approval: nothing changes.
    const cancelled = await requestRetarget(
      { sql: h.db.sql, targetPolicy: h.deps.targetPolicy, adoption: h.deps.adoption },
      { rule: { type: 'prefix', from: 'https://paused.example/b/', to: 'https://never.example/' } },
      'test',
    );
    await waitStatus(cancelled.id, ['planned']);
    await h.api(`/api/v1/retargets/${cancelled.id}/cancel`, { method: 'POST' });
    await waitStatus(cancelled.id, ['cancelled']);
    assert.deepEqual(await targets(codes), after);
  });

  test('a retried batch refreshes the serving records an attempt that died after its commit left on the old target', async () => {
    const codes = await insertLinks('rr', 'https://retry.example/a/', 30);
    await refreshLinks(h.deps.resolver, codes);
    assert.equal(await served(codes[0]!), 'https://retry.example/a/1/');
    const run = await requestRetarget(
      { sql: h.db.sql, targetPolicy: h.deps.targetPolicy, adoption: h.deps.adoption },
      { rule: { type: 'prefix', from: 'https://retry.example/a/', to: 'https://retry.example/b/' } },
      'test',
    );
    await waitStatus(run.id, ['planned']);
    // The first attempt of a batch: its transaction commits, then its worker dies before the refresh.
    await h.db.sql.begin((tx) =>
      applyRetargetChanges(tx, {
        runId: run.id,
        after: '',
        limit: 10,
        actor: 'test',
        reason: `retarget ${run.id}`,
      }),
    );
    const firstBatch = codes.slice().sort().slice(0, 10);
    assert.equal(
      await served(firstBatch[0]!),
      `https://retry.example/a/${codes.indexOf(firstBatch[0]!) + 1}/`,
    );
    // The retry, from the same cursor: its own batch is the next ten, and the first ten are refreshed too.
    const retry = await applyRetargetBatch(
      {
        sql: h.db.sql,
        logger: h.logger,
        resolver: h.deps.resolver,
        safety: h.deps.safety,
        targetPolicy: h.deps.targetPolicy,
      },
      { runId: run.id, batchSize: 10, cursor: '' },
      { attempt: 2 },
    );
    assert.equal(retry.applied, 10);
    for (const code of codes.slice().sort().slice(0, 20)) {
      assert.equal(await served(code), `https://retry.example/b/${codes.indexOf(code) + 1}/`, code);
    }
    await h.api(`/api/v1/retargets/${run.id}/cancel`, { method: 'POST' });
    await waitStatus(run.id, ['cancelled']);
  });

  test('the rule is checked: RE2 refuses backreferences; a catastrophic pattern runs in linear time; bad new targets and CSV rows are named', async () => {
    const backref = await h.api('/api/v1/retargets', {
      method: 'POST',
      json: { rule: { type: 'regex', pattern: '(a)\\1', replacement: 'x' } },
    });
    assert.equal(backref.status, 422);
    assert.match(JSON.stringify(await backref.json()), /backreferences or lookarounds/);

    // (a+)+$ backtracks exponentially in a backtracking engine; RE2 answers in linear time.
    const long = `https://slow.example/${'a'.repeat(1900)}!`;
    await h.db.sql`INSERT INTO links (code, target_url, status, safety, origin, owner)
                   VALUES ('evil1', ${long}, 'active', 'clean', 'api', 'test')`;
    const started = Date.now();
    const evil = await requestRetarget(
      { sql: h.db.sql, targetPolicy: h.deps.targetPolicy, adoption: h.deps.adoption },
      { rule: { type: 'regex', pattern: '(a+)+$', replacement: 'b' } },
      'test',
    );
    const evilPlanned = await waitStatus(evil.id, ['planned']);
    assert.ok(Date.now() - started < 20_000, `planned in ${Date.now() - started} ms`);
    assert.equal(evilPlanned.report.planned, 0);

    // New targets must pass the target rules: the short domain itself, a non-http scheme.
    await insertLinks('bad', 'https://bad.example/x/', 3);
    const loop = await requestRetarget(
      { sql: h.db.sql, targetPolicy: h.deps.targetPolicy, adoption: h.deps.adoption },
      { rule: { type: 'prefix', from: 'https://bad.example/', to: 'http://sho.rt.test/' } },
      'test',
    );
    const loopPlanned = await waitStatus(loop.id, ['planned']);
    assert.equal(loopPlanned.report.invalid, 3);
    assert.match(
      JSON.stringify(loopPlanned.report.invalidSample),
      /must not point at the short domain itself/,
    );

    const csv = await h.api('/api/v1/retargets', {
      method: 'POST',
      json: {
        rule: {
          type: 'csv',
          csv: 'old,new\nhttps://a.example/,https://b.example/\nhttps://c.example/,ftp://x/\nonly-one-field\n',
        },
      },
    });
    assert.equal(csv.status, 422);
    const problem = (await csv.json()) as { errors: { path: string; message: string }[] };
    assert.deepEqual(
      problem.errors.map((e) => e.message),
      ['line 4 must be two fields: old URL,new URL', 'row 2: the new URL must use http or https'],
    );
    // RFC 4180 quoting: a field may hold a line break; problems name the line their row starts on.
    const quotedCsv = await h.api('/api/v1/retargets', {
      method: 'POST',
      json: {
        rule: {
          type: 'csv',
          csv: '"https://a.example/\n1",https://b.example/\n"https://c.example/","https://d.example/"\n"https://e.example/,x\n',
        },
      },
    });
    assert.equal(quotedCsv.status, 422);
    const quotedProblem = (await quotedCsv.json()) as { errors: { path: string; message: string }[] };
    assert.deepEqual(quotedProblem.errors, [
      {
        path: 'rule.csv',
        message: 'line 4 opens a quoted field that is never closed',
        code: 'csvLine',
        args: { line: 4, problem: 'opens a quoted field that is never closed' },
      },
    ]);

    // A CSV rule matches exact old URLs only.
    await insertLinks('csv', 'https://csv.example/p/', 3);
    const csvRun = await requestRetarget(
      { sql: h.db.sql, targetPolicy: h.deps.targetPolicy, adoption: h.deps.adoption },
      {
        rule: {
          type: 'csv',
          csv: 'https://csv.example/p/1/,https://csv.example/q/1/\n"https://csv.example/p/3/","https://csv.example/q/3/"\n',
        },
      },
      'test',
    );
    const csvPlanned = await waitStatus(csvRun.id, ['planned']);
    assert.equal(csvPlanned.report.planned, 2);
    await steerRetarget(
      { sql: h.db.sql, targetPolicy: h.deps.targetPolicy, adoption: h.deps.adoption },
      csvRun.id,
      'approve',
      'test',
    );
    await waitStatus(csvRun.id, ['finished']);
    assert.deepEqual([...(await targets(['csv0', 'csv1', 'csv2'])).entries()].sort(), [
      ['csv0', 'https://csv.example/q/1/'],
      ['csv1', 'https://csv.example/p/2/'],
      ['csv2', 'https://csv.example/q/3/'],
    ]);
    assert.ok(requestRetargetUndo);
  });
});
