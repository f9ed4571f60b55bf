// Asking for a mass retarget, reviewing it and steering it (the API's and the UI's side): a run is recorded,
// then its workflow (`retarget:{id}`) plans it as a dry run and waits for an admin's approval (with
// RETARGET_REQUIRES_SECOND_ADMIN, another admin's than the one who asked; each approval and refusal audited);
// approve, pause, resume and cancel are signals to it; an undo is a new run planning the reverse of an earlier one.
import { getRetargetWorkflowId, type RetargetStatus } from '../../workflows/contract.ts';
import { randomToken } from '../shared/crypto.ts';
import {
  AppError,
  ConflictError,
  type FieldError,
  NotFoundError,
  ValidationError,
} from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import {
  countRetargetChanges,
  getRetargetRun,
  insertRetargetPairs,
  insertRetargetRun,
  listRetargetChanges,
  listRetargetRuns,
  type RetargetRunRow,
  type RetargetRunStatus,
  updateRetargetRun,
} from '../stores/retarget_store.ts';
import { isUniqueViolation, type Sql } from '../stores/sql.ts';
import { newTargetProblem, toCanonicalTarget } from '../targets/new_target_problem.ts';
import type { CanonicalTargetPolicy } from '../targets/target_rule.ts';
import {
  CSV_SLICE,
  parseRetargetCsvInSlices,
  type RetargetRequest,
  yieldToEventLoop,
} from './retarget_rule.ts';

export type { RetargetRunRow };

/** The workflow side the web tier talks to (lib/temporal/adoption_gateway.ts). */
export interface RetargetSteering {
  startRetarget(input: { runId: string }): Promise<{ workflowId: string }>;
  signalRetarget(runId: string, action: 'approve' | 'pause' | 'resume' | 'cancel', by: string): Promise<void>;
  describeRetarget(runId: string): Promise<RetargetStatus | null>;
}

export interface RetargetDeps {
  sql: Sql;
  targetPolicy: CanonicalTargetPolicy;
  adoption: RetargetSteering;
  /** RETARGET_REQUIRES_SECOND_ADMIN: the one who asked for a run may not approve it. */
  config?: { retarget: { requiresSecondAdmin: boolean } };
}

const newRunId = () => `rt_${randomToken(12)}`;

/** Records a retarget run and starts its workflow (which plans it as a dry run, then waits for approval). */
export async function requestRetarget(
  deps: RetargetDeps,
  input: RetargetRequest,
  requestedBy: string,
): Promise<RetargetRunRow> {
  const errors: FieldError[] = [];
  let pairs: { oldUrl: string; newUrl: string }[] = [];
  if (input.rule.type === 'csv') {
    // This runs in the web process, which serves redirects too: in slices, the event loop handed back between.
    const parsed = await parseRetargetCsvInSlices(input.rule.csv);
    for (const p of parsed.problems)
      errors.push({
        path: 'rule.csv',
        message: fieldProblem('csvLine', { line: p.line, problem: p.message }),
      });
    // Stored targets are canonical: an old URL is matched, and a new one stored, in that form.
    for (const [i, pair] of parsed.pairs.entries()) {
      if (errors.length >= 20) break; // refused anyway; at most 20 are listed
      if (i > 0 && i % CSV_SLICE === 0) await yieldToEventLoop();
      pair.oldUrl = toCanonicalTarget(pair.oldUrl);
      pair.newUrl = toCanonicalTarget(pair.newUrl);
      const problem = newTargetProblem(pair.newUrl, deps.targetPolicy);
      if (problem)
        errors.push({ path: 'rule.csv', message: fieldProblem('csvRowTarget', { row: i + 1, problem }) });
    }
    pairs = parsed.pairs;
  } else if (input.rule.type === 'prefix') {
    if (input.rule.from === input.rule.to)
      errors.push({ path: 'rule.to', message: fieldProblem('sameAsFrom') });
  }
  if (errors.length > 0) throw new ValidationError(errors.slice(0, 20), 'The retarget rule is not valid.');
  const id = newRunId();
  // The CSV's text is not kept with the run (its pairs are): the run's rule says how many rows it had.
  const rule = input.rule.type === 'csv' ? { type: 'csv', rows: pairs.length } : input.rule;
  const run = await deps.sql.begin(async (tx) => {
    const row = await insertRetargetRun(tx, {
      id,
      kind: 'retarget',
      undoOf: null,
      rule,
      scope: input.scope ?? {},
      workflowId: getRetargetWorkflowId(id),
      requestedBy,
    });
    await insertRetargetPairs(tx, id, pairs);
    return row;
  });
  await startOrFail(deps, run);
  return run;
}

/** A new run that puts back every target an earlier run changed (planned, then approved like any run). */
export async function requestRetargetUndo(
  deps: RetargetDeps,
  runId: string,
  requestedBy: string,
): Promise<RetargetRunRow> {
  const original = await getRetargetRun(deps.sql, runId);
  if (!original) throw new NotFoundError(`No retarget run ${runId}.`);
  if (original.kind === 'undo')
    throw new ConflictError('An undo cannot be undone; start a new retarget instead.');
  if (!['finished', 'cancelled', 'failed', 'paused'].includes(original.status)) {
    throw new ConflictError(
      `Run ${runId} is ${original.status}; undo it once it has stopped (cancel or let it finish).`,
    );
  }
  const id = newRunId();
  let run: RetargetRunRow;
  try {
    run = await insertRetargetRun(deps.sql, {
      id,
      kind: 'undo',
      undoOf: runId,
      rule: { type: 'undo', of: runId },
      scope: {},
      workflowId: getRetargetWorkflowId(id),
      requestedBy,
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new ConflictError(`Run ${runId} already has an undo run.`);
    throw error;
  }
  await startOrFail(deps, run);
  return run;
}

async function startOrFail(deps: RetargetDeps, run: RetargetRunRow): Promise<void> {
  try {
    await deps.adoption.startRetarget({ runId: run.id });
  } catch (error) {
    await updateRetargetRun(deps.sql, run.id, {
      status: 'failed',
      report: { error: 'the workflow could not be started; ask again' },
    });
    throw error;
  }
}

/** From which statuses each action is allowed. */
const ALLOWED: Record<'approve' | 'pause' | 'resume' | 'cancel', RetargetRunStatus[]> = {
  approve: ['planned'],
  pause: ['running'],
  resume: ['paused'],
  cancel: ['planning', 'planned', 'running', 'paused'],
};

/** Approves, pauses, resumes or cancels a run (a signal to its workflow); 409 when its status does not allow it. */
export async function steerRetarget(
  deps: RetargetDeps,
  runId: string,
  action: 'approve' | 'pause' | 'resume' | 'cancel',
  by: string,
): Promise<RetargetRunRow> {
  const run = await getRetargetRun(deps.sql, runId);
  if (!run) throw new NotFoundError(`No retarget run ${runId}.`);
  if (!ALLOWED[action].includes(run.status)) {
    throw new ConflictError(
      `Run ${runId} is ${run.status}: it cannot be ${action === 'approve' ? 'approved' : `${action}d`} now.`,
    );
  }
  if (action === 'approve' && requiresSecondAdmin(deps)) {
    const audit = { runId, requestedBy: run.requestedBy };
    if (by === run.requestedBy) {
      // The refusal is kept: a pattern of self-approvals is worth an operator's look.
      await insertAuditEntry(deps.sql, {
        code: null,
        actor: by,
        action: 'retarget.approval_refused',
        after: audit,
        reason: 'the requester may not approve their own run (RETARGET_REQUIRES_SECOND_ADMIN)',
      });
      throw new AppError(
        403,
        'forbidden',
        'Forbidden',
        fieldProblem('secondAdmin', { run: runId, actor: run.requestedBy }),
      );
    }
    await insertAuditEntry(deps.sql, { code: null, actor: by, action: 'retarget.approved', after: audit });
  }
  await deps.adoption.signalRetarget(runId, action, by);
  return run;
}

/** True when RETARGET_REQUIRES_SECOND_ADMIN is set: a run's approver must not be who asked for it. */
export function requiresSecondAdmin(deps: Pick<RetargetDeps, 'config'>): boolean {
  return deps.config?.retarget.requiresSecondAdmin === true;
}

export async function getRetarget(
  sql: Sql,
  runId: string,
): Promise<RetargetRunRow & { counts: Awaited<ReturnType<typeof countRetargetChanges>> }> {
  const run = await getRetargetRun(sql, runId);
  if (!run) throw new NotFoundError(`No retarget run ${runId}.`);
  return { ...run, counts: await countRetargetChanges(sql, runId) };
}

export const listRetargets = (sql: Sql, limit = 50) => listRetargetRuns(sql, limit);

export async function listChangesOfRetarget(
  sql: Sql,
  runId: string,
  options: { state?: string; cursor?: string; limit: number },
) {
  const items = await listRetargetChanges(sql, {
    runId,
    ...(options.state ? { state: options.state } : {}),
    cursor: options.cursor ?? '',
    limit: options.limit,
  });
  return { items, nextCursor: items.length === options.limit ? items.at(-1)!.code : null };
}

/** A run as the API returns it. */
export function toRetargetJson(
  run: RetargetRunRow & { counts?: Awaited<ReturnType<typeof countRetargetChanges>> },
) {
  return {
    id: run.id,
    kind: run.kind,
    ...(run.undoOf ? { undoOf: run.undoOf } : {}),
    rule: run.rule,
    scope: run.scope,
    status: run.status,
    workflowId: run.workflowId,
    requestedBy: run.requestedBy,
    ...(run.approvedBy ? { approvedBy: run.approvedBy } : {}),
    report: run.report,
    ...(run.counts ? { changes: run.counts.byState, bitlyPending: run.counts.bitlyPending } : {}),
    createdAt: run.createdAt.toISOString(),
    ...(run.approvedAt ? { approvedAt: run.approvedAt.toISOString() } : {}),
    ...(run.finishedAt ? { finishedAt: run.finishedAt.toISOString() } : {}),
    updatedAt: run.updatedAt.toISOString(),
  };
}
