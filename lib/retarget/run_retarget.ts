// The worker side of a mass retarget (workflows/retarget_links.ts): plan (the dry run: every link the rule
// matches, with its new target checked by the same rules as every other way in; nothing changes), apply in
// batches (one statement per batch changes links, writes the audit log with each previous target and marks the
// plan; the serving store and caches follow in one batch refresh), then let Bitly follow through its rate limit.

import { queueArchiveCopies } from '../archive/archive_queue.ts';
import { refreshLinks } from '../propagation/refresh_links.ts';
import { syncToBitly } from '../propagation/sync_to_bitly.ts';
import type { LinkResolver } from '../redirect/link_resolver.ts';
import type { SafetyScanner } from '../safety/safety_scanner.ts';
import { describeScanResult, nextSafetyVerdict } from '../safety/scan_result.ts';
import { forEachConcurrently } from '../shared/concurrency.ts';
import { PermanentFailure, TransientFailure } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { type TaskContext, throwIfCancelled } from '../shared/task_context.ts';
import {
  applyRetargetChanges,
  countRetargetChanges,
  findPlannedCodeAt,
  getRetargetRun,
  insertRetargetChanges,
  listAppliedChanges,
  listBitlyPendingChanges,
  listCsvMatches,
  listLinksForRetarget,
  listRetargetChanges,
  type PlannedChange,
  type RetargetRunStatus,
  type RetargetScope,
  updateBitlySynced,
  updateRetargetRun,
} from '../stores/retarget_store.ts';
import type { Sql } from '../stores/sql.ts';
import { newTargetProblem, toCanonicalTarget } from '../targets/new_target_problem.ts';
import type { CanonicalTargetPolicy } from '../targets/target_rule.ts';
import { recordVendorCollision } from '../vendors/record_vendor_collision.ts';
import type { VendorDeps } from '../vendors/vendor_deps.ts';
import { compileRule, type RetargetRule } from './retarget_rule.ts';

export interface RetargetRunDeps {
  sql: Sql;
  logger: Logger;
  resolver: LinkResolver;
  safety: SafetyScanner;
  targetPolicy: CanonicalTargetPolicy;
  vendors?: VendorDeps | undefined;
  /** ARCHIVE_MODE is not off: each applied retarget is queued for the new destination's copy (ADR 0076). */
  archiveCopies?: boolean | undefined;
}

/** Links read per planning step. */
const PLAN_CHUNK = 5_000;
/** How many before/after pairs the dry run shows. */
const SAMPLE_SIZE = 20;
/** Links Bitly follows per activity call; calls in flight (Bitly allows 5 connections per IP). */
const BITLY_CHUNK = 200;
const BITLY_CONCURRENCY = 4;
/** Transactions a batch is applied in side by side (splitIntoLanes). */
const APPLY_LANES = 2;

async function requireRun(sql: Sql, runId: string) {
  const run = await getRetargetRun(sql, runId);
  if (!run) throw new PermanentFailure(`no retarget run ${runId}`);
  return run;
}

/**
 * One planning step: the next chunk of links (by code) the rule is tried on, recorded as planned or invalid
 * changes. Returns the cursor and whether planning is done. Idempotent (a chunk planned again keeps its plan).
 */
export async function planRetargetStep(
  deps: RetargetRunDeps,
  input: { runId: string; cursor: string },
  context: TaskContext,
): Promise<{ cursor: string; done: boolean; read: number }> {
  const run = await requireRun(deps.sql, input.runId);
  const rule = run.rule as RetargetRule | { type: 'undo'; of: string } | { type: 'csv'; rows: number };
  const scope = run.scope as RetargetScope;
  let candidates: { code: string; beforeUrl: string; afterUrl: string }[];
  let read: number;
  let last: string | undefined;
  if (rule.type === 'undo') {
    const rows = await listAppliedChanges(deps.sql, {
      runId: rule.of,
      cursor: input.cursor,
      limit: PLAN_CHUNK,
    });
    candidates = rows.map((r) => ({ code: r.code, beforeUrl: r.afterUrl, afterUrl: r.beforeUrl }));
    read = rows.length;
    last = rows.at(-1)?.code;
  } else if (rule.type === 'csv') {
    const rows = await listCsvMatches(deps.sql, {
      runId: run.id,
      cursor: input.cursor,
      limit: PLAN_CHUNK,
      scope,
    });
    candidates = rows.map((r) => ({ code: r.code, beforeUrl: r.targetUrl, afterUrl: r.newUrl }));
    read = rows.length;
    last = rows.at(-1)?.code;
  } else {
    const rewriter = compileRule(rule);
    const rows = await listLinksForRetarget(deps.sql, { cursor: input.cursor, limit: PLAN_CHUNK, scope });
    candidates = [];
    for (const row of rows) {
      // The rewritten URL in canonical form (what would be stored); newTargetProblem refuses one with none.
      const rewritten = rewriter.rewrite(row.targetUrl);
      const after = rewritten === null ? null : toCanonicalTarget(rewritten);
      if (after !== null && after !== row.targetUrl)
        candidates.push({ code: row.code, beforeUrl: row.targetUrl, afterUrl: after });
    }
    read = rows.length;
    last = rows.at(-1)?.code;
  }
  throwIfCancelled(context);
  const changes: PlannedChange[] = [];
  const checkable: typeof candidates = [];
  for (const c of candidates) {
    const problem = newTargetProblem(c.afterUrl, deps.targetPolicy);
    if (problem)
      changes.push({
        ...c,
        state: 'invalid',
        problem: `the new target ${problem}`,
        safety: null,
        safetyReason: null,
      });
    else checkable.push(c);
  }
  // New destinations are scanned like any other (an undo's old targets too: verdicts change).
  const scans = checkable.length > 0 ? await deps.safety.scanMany(checkable.map((c) => c.afterUrl)) : [];
  for (const [i, c] of checkable.entries()) {
    const scan = scans[i]!;
    if (scan.verdict === 'blocked') {
      changes.push({
        ...c,
        state: 'invalid',
        problem: `the new target is blocked: ${describeScanResult(scan)}`,
        safety: null,
        safetyReason: null,
      });
    } else {
      changes.push({
        ...c,
        state: 'planned',
        problem: null,
        safety: nextSafetyVerdict('unknown', scan),
        safetyReason: describeScanResult(scan),
      });
    }
  }
  await insertRetargetChanges(deps.sql, run.id, changes);
  context.heartbeat({ cursor: last });
  return { cursor: last ?? input.cursor, done: read < PLAN_CHUNK, read };
}

/** Ends the dry run: counts and a sample of before → after on the run; it now waits for approval. */
export async function finishRetargetPlan(deps: RetargetRunDeps, input: { runId: string }) {
  const counts = await countRetargetChanges(deps.sql, input.runId);
  const sample = await listRetargetChanges(deps.sql, {
    runId: input.runId,
    state: 'planned',
    cursor: '',
    limit: SAMPLE_SIZE,
  });
  const invalidSample = await listRetargetChanges(deps.sql, {
    runId: input.runId,
    state: 'invalid',
    cursor: '',
    limit: SAMPLE_SIZE,
  });
  const report = {
    planned: counts.byState.planned ?? 0,
    invalid: counts.byState.invalid ?? 0,
    sample: sample.map((s) => ({ code: s.code, before: s.beforeUrl, after: s.afterUrl })),
    invalidSample: invalidSample.map((s) => ({
      code: s.code,
      before: s.beforeUrl,
      after: s.afterUrl,
      problem: s.problem,
    })),
    plannedAt: new Date().toISOString(),
  };
  await updateRetargetRun(deps.sql, input.runId, { status: 'planned', report, from: ['planning'] });
  return { planned: report.planned, invalid: report.invalid };
}

/** Moves a run to a status (approval, pause, resume, the end), merging `report`. */
export async function setRetargetStatus(
  deps: RetargetRunDeps,
  input: { runId: string; status: RetargetRunStatus; approvedBy?: string; report?: Record<string, unknown> },
): Promise<void> {
  const counts = await countRetargetChanges(deps.sql, input.runId);
  await updateRetargetRun(deps.sql, input.runId, {
    status: input.status,
    ...(input.approvedBy ? { approvedBy: input.approvedBy } : {}),
    report: { ...input.report, changes: counts.byState, bitlyPending: counts.bitlyPending },
  });
  deps.logger.info(
    { runId: input.runId, status: input.status, changes: counts.byState },
    'retarget run status',
  );
}

/**
 * Applies the next `batchSize` planned changes after `cursor` (one statement), then refreshes the serving store
 * and every instance's cache for them in one batch. Returns what it did, the new cursor and whether the plan is
 * done (a retry with the same cursor finds the applied rows no longer planned).
 *
 * A retry (`attempt` > 1) first refreshes the changes already applied after the cursor: an attempt that died
 * between its commit and its refresh left those links' serving records on the old target, and the apply below
 * no longer sees them (they are not planned any more).
 */
export async function applyRetargetBatch(
  deps: RetargetRunDeps,
  input: { runId: string; batchSize: number; cursor?: string },
  context: Pick<TaskContext, 'attempt'> = { attempt: 1 },
): Promise<{ applied: number; skipped: number; cursor: string; done: boolean }> {
  const run = await requireRun(deps.sql, input.runId);
  const reason = run.kind === 'undo' ? `undo of retarget ${run.undoOf} (${run.id})` : `retarget ${run.id}`;
  const after = input.cursor ?? '';
  if (context.attempt > 1) {
    const earlier = await listAppliedChanges(deps.sql, {
      runId: run.id,
      cursor: after,
      limit: input.batchSize,
    });
    await refreshLinks(
      deps.resolver,
      earlier.map((c) => c.code),
    );
  }
  const started = performance.now();
  const lanes = await splitIntoLanes(deps.sql, run.id, after, input.batchSize);
  const results = await Promise.all(
    lanes.map((lane) =>
      deps.sql.begin(async (tx) => {
        const applied = await applyRetargetChanges(tx, {
          runId: run.id,
          after: lane.after,
          limit: lane.limit,
          actor: run.approvedBy ?? run.requestedBy,
          reason,
        });
        await queueArchiveCopies(tx, deps, applied.applied, reason);
        return applied;
      }),
    ),
  );
  const committed = performance.now();
  const applied = results.flatMap((r) => r.applied);
  const skipped = results.reduce((n, r) => n + r.skipped, 0);
  const seen = results.reduce((n, r) => n + r.seen, 0);
  const last = results.findLast((r) => r.last !== null)?.last ?? null;
  await refreshLinks(deps.resolver, applied);
  deps.logger.info(
    {
      runId: run.id,
      applied: applied.length,
      skipped,
      lanes: lanes.length,
      postgresMs: Math.round(committed - started),
      servingStoreMs: Math.round(performance.now() - committed),
    },
    'retarget batch applied',
  );
  return { applied: applied.length, skipped, cursor: last ?? after, done: seen < input.batchSize };
}

/**
 * A batch's planned changes split by code into up to APPLY_LANES consecutive runs of equal size, each applied in
 * a transaction of its own at the same time: Postgres spends a batch's time on one core, inserting the new
 * target's trigram entries into the URL and search-text indexes (measured at 10M links: 2.2 s of CPU for 5,000
 * links, all in shared buffers), so lanes use the other cores. The lanes touch disjoint links. One that commits
 * while another fails is covered by the retry: it refreshes what is applied after the cursor and applies what is
 * still planned.
 */
async function splitIntoLanes(
  sql: Sql,
  runId: string,
  after: string,
  batchSize: number,
): Promise<{ after: string; limit: number }[]> {
  const per = Math.ceil(batchSize / APPLY_LANES);
  const lanes = [{ after, limit: per }];
  for (let i = 1; i < APPLY_LANES && i * per < batchSize; i++) {
    // The last code of the previous lane: this lane starts after it.
    const boundary = await findPlannedCodeAt(sql, { runId, after, offset: i * per - 1 });
    if (boundary === null) break;
    lanes.push({ after: boundary, limit: Math.min(per, batchSize - i * per) });
  }
  return lanes;
}

/**
 * Bitly follows the applied changes, a chunk per call, through the provider's concurrency limit and its rate
 * limits (a rate-limited link is waited out here and tried again, so the run never skips one). Links the
 * vendor refuses are recorded on the link (vendors[]) and counted; reconciliation takes them up later.
 */
export async function followRetargetOnBitly(
  deps: RetargetRunDeps,
  input: { runId: string; cursor: string },
  context: TaskContext,
): Promise<{ cursor: string; done: boolean; synced: number; refused: number }> {
  if (!deps.vendors?.bitly) return { cursor: input.cursor, done: true, synced: 0, refused: 0 };
  const codes = await listBitlyPendingChanges(deps.sql, {
    runId: input.runId,
    cursor: input.cursor,
    limit: BITLY_CHUNK,
  });
  let synced = 0;
  let refused = 0;
  const done: string[] = [];
  const inner: TaskContext = { ...context, heartbeat: () => context.heartbeat({ cursor: input.cursor }) };
  await forEachConcurrently(codes, BITLY_CONCURRENCY, async (code) => {
    for (;;) {
      throwIfCancelled(context);
      try {
        const result = await syncToBitly(deps, { code }, inner);
        if (result.outcome === 'mismatch') {
          await recordVendorCollision(deps, { code, vendor: 'bitly', detail: result.detail });
          refused++;
        } else if (result.outcome === 'rejected') refused++;
        else synced++;
        done.push(code);
        return;
      } catch (error) {
        if (!(error instanceof TransientFailure)) throw error;
        // Bitly's rate limit or an outage: wait as long as it says, then the same link again.
        await context.sleep(Math.min(error.retryAfterMs ?? 1_000, 60_000));
      }
    }
  });
  await updateBitlySynced(deps.sql, input.runId, done);
  context.heartbeat({ cursor: codes.at(-1) ?? input.cursor });
  return { cursor: codes.at(-1) ?? input.cursor, done: codes.length < BITLY_CHUNK, synced, refused };
}
