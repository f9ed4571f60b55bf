import { refreshLinks } from '../propagation/refresh_links.ts';
import type { ServingRecord } from '../redirect/serving_record.ts';
import { toServingRecord } from '../redirect/serving_record.ts';
import { forEachConcurrently } from '../shared/concurrency.ts';
import type { TaskContext } from '../shared/task_context.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { insertMarks, listLinksAfter, updateMarksRepaired } from '../stores/reconcile_store.ts';
import {
  POSTGRES_CHUNK,
  type ReconcileDeps,
  type ReconcileStepInput,
  type ReconcileStepResult,
} from './reconcile_run.ts';

/** The statuses whose serving records the leg compares (live links, deleted ones left out). */
const SERVED_STATUSES = ['active', 'expired', 'gone', 'blocked'] as const;

/** Deletes in flight at once (each is one command; the Redis client pipelines them). */
const SERVING_DELETE_CONCURRENCY = 64;

/** How a serving record differs from Postgres, or null when it answers the same. */
export function getServingDrift(row: LinkRow, stored: ServingRecord | null): 'missing' | 'stale' | null {
  if (!stored) return 'missing';
  const expected = toServingRecord(row);
  const same =
    stored.url === expected.url &&
    stored.status === expected.status &&
    stored.safety === expected.safety &&
    stored.redirectStatus === expected.redirectStatus &&
    stored.expiresAt === expected.expiresAt &&
    stored.expiredUrl === expected.expiredUrl &&
    stored.utm?.campaign === expected.utm?.campaign &&
    stored.utm?.source === expected.utm?.source &&
    stored.utm?.medium === expected.utm?.medium;
  return same ? null : 'stale';
}

/**
 * The serving-store leg of reconciliation: each link's record in the store must be what Postgres says (missing
 * or stale otherwise); a repair writes it through the resolver (which also tells web instances to drop their
 * copies) and reads it back. Skipped when no serving store is configured.
 */
export async function reconcileServingStore(
  deps: ReconcileDeps,
  input: ReconcileStepInput,
  context: TaskContext,
): Promise<ReconcileStepResult> {
  const store = deps.servingStore;
  if (!store) return { position: { phase: 'expiry', cursor: '' }, read: 0 };
  const resumed = context.resumed as { cursor: string; read: number } | undefined;
  let cursor = resumed?.cursor ?? input.position.cursor ?? '';
  let read = resumed?.read ?? 0;
  const readAfter = (after: string, limit: number) => {
    const rows = listLinksAfter(deps.sql, { cursor: after, limit, statuses: SERVED_STATUSES });
    rows.catch(() => {}); // a read ahead that is never awaited (the step failed first) is not unhandled
    return rows;
  };
  let next = readAfter(cursor, Math.min(POSTGRES_CHUNK, input.budget - read));
  while (read < input.budget) {
    const rows = await next;
    if (rows.length === 0) return { position: { phase: 'expiry', cursor: '' }, read };
    // The next chunk is read from Postgres while this one is compared with the store.
    const ahead = Math.min(POSTGRES_CHUNK, input.budget - read - rows.length);
    if (ahead > 0) next = readAfter(rows.at(-1)!.code, ahead);
    const stored = await store.getMany(rows.map((r) => r.code));
    const marks = rows.map((row, i) => ({ code: row.code, drift: getServingDrift(row, stored[i] ?? null) }));
    await insertMarks(
      deps.sql,
      input.runId,
      'serving',
      marks.filter((m) => m.drift !== null),
    );
    const drifted = marks.filter((m) => m.drift !== null).map((m) => m.code);
    if (input.repair && drifted.length > 0) {
      // A stale record may claim a newer version than Postgres (a restore, a hand edit), which a versioned write
      // would keep: it goes first. Then the chunk's drifted codes are refreshed together (one Postgres read,
      // pipelined writes and announcements), so refilling a lost store runs at the store's pace, not one
      // round trip per link.
      const stale = marks.filter((m) => m.drift === 'stale').map((m) => m.code);
      await forEachConcurrently(stale, SERVING_DELETE_CONCURRENCY, async (code) => {
        await store.delete?.(code);
      });
      await refreshLinks(deps.resolver, drifted);
      const after = await store.getMany(drifted);
      const byCode = new Map(rows.map((r) => [r.code, r]));
      await updateMarksRepaired(
        deps.sql,
        input.runId,
        'serving',
        drifted.filter((code, i) => getServingDrift(byCode.get(code)!, after[i] ?? null) === null),
      );
    }
    read += rows.length;
    cursor = rows.at(-1)!.code;
    context.heartbeat({ cursor, read });
  }
  return { position: { phase: 'serving', cursor }, read };
}
