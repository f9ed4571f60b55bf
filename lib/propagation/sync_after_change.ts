// Propagation: carrying a committed change of a link in Postgres (the truth) to every copy of the link. The
// copies are the serving store and each web instance's LRU (the in-house copies), Bitly's bitlink, the CDN's
// cached answers, and the expiry sweeper's knowledge of the link's date (ADR 0091). One path carries every change (ADR 0004, ADR 0024): a single
// change goes to its link's workflow `sync:{code}`, a bulk change to the sync queue's drainer; each pass re-reads
// Postgres and brings every copy in line, so a pass carries no diff and the newest state wins.
//
// One word per copy, in every file of lib/propagation: *refresh* the in-house copies (re-read Postgres, write
// the serving store under a version guard, announce the code on the invalidation bus so every LRU drops it),
// *sync to Bitly*, *purge* the CDN, *ensure* the expiry timer (now: tell the one sweeper the date). "sync" in
// workflow and activity names (`sync:{code}`, syncToBitly, syncLinkBatch, ensureExpiryTimer) and "replica" in
// older text mean propagation and copy: workflow histories record those names, so they stay.
//
// This file is the way in: a writer calls syncAfterChange (one link) or kickSyncQueueInBackground (a batch it
// queued) once its transaction has committed.
import type { LinkResolver } from '../redirect/link_resolver.ts';
import type { Logger } from '../shared/logger.ts';
import type { LinkSyncRequester } from '../temporal/link_sync.ts';
import type { WorkflowGateway } from '../temporal/workflow_gateway.ts';

/** The web tier's own refresh after a change waits this long at most (the `sync:{code}` pass refreshes again). */
const REFRESH_WAIT_MS = 1_000;

/**
 * Brings caches up to date at once, from the request that made the change: this instance's LRU, the serving
 * store and (through the bus) every other instance, even when Temporal is down. Best effort and bounded; the
 * sync workflow's activity refreshes again, with retries.
 */
async function refreshNow(deps: { logger: Logger; resolver?: LinkResolver }, code: string): Promise<void> {
  if (!deps.resolver) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      deps.resolver.refresh(code),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, REFRESH_WAIT_MS);
      }),
    ]);
  } catch (err) {
    deps.logger.warn({ err, code }, 'link changed; refreshing caches now failed (the sync workflow retries)');
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether the copies were told about a change: `accepted` (the sync workflow has it), `deferred` (Temporal
 * could not take it; reconciliation repairs), or `queued` (a batch: queued for the sync queue's drainer).
 */
export type SyncState = 'accepted' | 'deferred' | 'queued';

/**
 * Tells the link's sync workflow that Postgres changed, after the change committed. Postgres is the truth,
 * so a Temporal outage does not undo or fail the change: it is reported as `deferred`, logged, and the
 * copies catch up at the next reconciliation (caches also expire on their own TTL).
 */
export async function syncAfterChange(
  deps: { workflows: LinkSyncRequester; logger: Logger; resolver?: LinkResolver },
  code: string,
  reason: string,
): Promise<'accepted' | 'deferred'> {
  await refreshNow(deps, code);
  try {
    await deps.workflows.syncLink(code, reason);
    return 'accepted';
  } catch (err) {
    deps.logger.error(
      { err, code, reason },
      'link changed but its sync could not be started; reconciliation will repair replicas',
    );
    return 'deferred';
  }
}

const inFlight = new WeakMap<WorkflowGateway, Set<Promise<void>>>();

/**
 * Wakes the sync-queue drainer after a bulk change queued its codes in link_sync_queue (in the change's own
 * transaction, ADR 0024), without holding the response: one signalWithStart for the whole batch, where one
 * signal per link used to cost a Temporal round trip each (and a workflow each). The links are already in
 * Postgres, which every resolver reads on a miss, and the rows are durable: a kick lost to a Temporal outage
 * only delays them until the next kick (any bulk change, a backfill step, the worker's start).
 * drainBackgroundSyncs waits for the kick on shutdown.
 */
export function kickSyncQueueInBackground(
  deps: { workflows: WorkflowGateway; logger: Logger },
  codes: readonly string[],
  reason: string,
): void {
  if (codes.length === 0) return;
  const kick = deps.workflows.kickSyncQueue(reason).then(
    () => undefined,
    (err: unknown) =>
      deps.logger.error(
        { err, queued: codes.length, reason },
        'links queued for sync, but the drainer could not be woken; the next kick or the worker start drains them',
      ),
  );
  const set = inFlight.get(deps.workflows) ?? new Set<Promise<void>>();
  inFlight.set(deps.workflows, set);
  set.add(kick);
  kick.finally(() => set.delete(kick));
}

/** Waits for background sync-queue kicks of this gateway to finish (graceful shutdown). */
export async function drainBackgroundSyncs(workflows: WorkflowGateway): Promise<void> {
  await Promise.all([...(inFlight.get(workflows) ?? [])]);
}
