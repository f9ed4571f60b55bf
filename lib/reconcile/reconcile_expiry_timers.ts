import type { TaskContext } from '../shared/task_context.ts';
import { getNextExpiry } from '../stores/link_lifecycle_store.ts';
import { insertMarks, listOverdueExpiries, updateMarksRepaired } from '../stores/reconcile_store.ts';
import type { ReconcileDeps, ReconcileStepInput, ReconcileStepResult } from './reconcile_run.ts';

/** A link this long past its expiry and still active is drift (a sweep normally takes well under a second). */
export const OVERDUE_GRACE_MS = 60_000;

/**
 * The expiry leg of reconciliation (ADR 0091): the one sweeper runs and knows the earliest expiry. Links still
 * active a minute past their date are drift (`missing`: their expiry was not carried out; at most `budget` of
 * them are named per run). Repair is one signalWithStart of the sweeper with the earliest date Postgres holds:
 * it starts if it was lost (Temporal restored from an old backup, a namespace reset) and sweeps what is due at
 * once. A sweeper that runs is only described, never signalled, so its history does not grow (unless links are
 * overdue). The activity keeps its name: reconcileLinksWorkflow histories record it.
 */
export async function reconcileExpiryTimers(
  deps: ReconcileDeps,
  input: ReconcileStepInput,
  context: TaskContext,
): Promise<ReconcileStepResult> {
  const next = await getNextExpiry(deps.sql);
  if (next === null) return { position: { phase: 'wordpress', cursor: null }, read: 0 };
  const overdue = await listOverdueExpiries(deps.sql, { graceMs: OVERDUE_GRACE_MS, limit: input.budget });
  const running = await deps.sweeper.isRunning();
  context.heartbeat({ overdue: overdue.length, running });
  if (!running || overdue.length > 0) {
    deps.logger.warn(
      { sweeperRunning: running, overdue: overdue.length, nextDueAt: new Date(next.atMs) },
      'expiry sweeper behind or missing',
    );
  }
  const missing = overdue.map((row) => row.code);
  await insertMarks(
    deps.sql,
    input.runId,
    'expiry',
    missing.map((code) => ({ code, drift: 'missing' as const })),
  );
  if (input.repair && (!running || overdue.length > 0)) {
    await deps.sweeper.expiresAt(next.atMs);
    await updateMarksRepaired(deps.sql, input.runId, 'expiry', missing);
  }
  return { position: { phase: 'wordpress', cursor: null }, read: overdue.length };
}
