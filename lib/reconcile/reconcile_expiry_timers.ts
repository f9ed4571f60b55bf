import { forEachConcurrently } from '../shared/concurrency.ts';
import type { TaskContext } from '../shared/task_context.ts';
import { insertMarks, listExpiringLinksAfter, updateMarksRepaired } from '../stores/reconcile_store.ts';
import {
  POSTGRES_CHUNK,
  type ReconcileDeps,
  type ReconcileStepInput,
  type ReconcileStepResult,
} from './reconcile_run.ts';

/**
 * The expiry leg of reconciliation: every live link with an expiry has its durable timer. One that lost it
 * (Temporal restored from an old backup, a sync deferred while Temporal was down) gets it back, and one already
 * past its date expires at once. Running timers are only described, never signalled, so their histories do
 * not grow.
 */
export async function reconcileExpiryTimers(
  deps: ReconcileDeps,
  input: ReconcileStepInput,
  context: TaskContext,
): Promise<ReconcileStepResult> {
  const resumed = context.resumed as { cursor: string; read: number } | undefined;
  let cursor = resumed?.cursor ?? input.position.cursor ?? '';
  let read = resumed?.read ?? 0;
  while (read < input.budget) {
    const rows = await listExpiringLinksAfter(deps.sql, {
      cursor,
      limit: Math.min(POSTGRES_CHUNK, input.budget - read),
    });
    if (rows.length === 0) return { position: { phase: 'wordpress', cursor: null }, read };
    const missing: string[] = [];
    await forEachConcurrently(rows, 8, async (row) => {
      if (await deps.timers.isRunning(row.code)) return;
      missing.push(row.code);
      if (input.repair) await deps.timers.set(row.code, row.expiresAt.getTime());
    });
    await insertMarks(
      deps.sql,
      input.runId,
      'expiry',
      missing.map((code) => ({ code, drift: 'missing' as const })),
    );
    if (input.repair) await updateMarksRepaired(deps.sql, input.runId, 'expiry', missing);
    read += rows.length;
    cursor = rows.at(-1)!.code;
    context.heartbeat({ cursor, read });
  }
  return { position: { phase: 'expiry', cursor }, read };
}
