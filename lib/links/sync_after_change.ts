import type { LinkResolver } from '../redirect/link_resolver.ts';
import type { Logger } from '../shared/logger.ts';
import type { WorkflowGateway } from '../temporal/workflow_gateway.ts';

/** The web tier's own refresh after a change waits this long at most (the sync workflow refreshes again). */
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
 * Whether replicas were told about a change: `accepted` (the sync workflow has it), `deferred` (Temporal
 * could not take it; reconciliation repairs), or `queued` (signals are being sent after the response).
 */
export type SyncState = 'accepted' | 'deferred' | 'queued';

/**
 * Tells the link's sync workflow that Postgres changed, after the change committed. Postgres is the truth,
 * so a Temporal outage does not undo or fail the change: it is reported as `deferred`, logged, and the
 * replicas catch up at the next reconciliation (caches also expire on their own TTL).
 */
export async function syncAfterChange(
  deps: { workflows: WorkflowGateway; logger: Logger; resolver?: LinkResolver },
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

/** Signals in flight at once for a batch: enough to overlap round trips, few enough to be polite. */
const BACKGROUND_SYNC_CONCURRENCY = 32;
const inFlight = new WeakMap<WorkflowGateway, Set<Promise<void>>>();

/**
 * Signals the sync workflow of many new links without holding the response: one signal per link costs a
 * Temporal round trip (measured ~17 ms each on the dev server under load, so 1,000 would hold a batch
 * response for many seconds). The links are already in Postgres, which every resolver reads on a miss;
 * a signal lost to a crash is repaired by reconciliation. drainBackgroundSyncs waits for them on shutdown.
 */
export function syncInBackground(
  deps: { workflows: WorkflowGateway; logger: Logger; resolver?: LinkResolver },
  codes: string[],
  reason: string,
): void {
  if (codes.length === 0) return;
  let next = 0;
  let deferred = 0;
  const worker = async () => {
    while (next < codes.length) {
      const code = codes[next++]!;
      if ((await syncAfterChange(deps, code, reason)) === 'deferred') {
        deferred++;
        // Temporal is down: stop here rather than wait out a deadline per link.
        deferred += codes.length - next;
        next = codes.length;
      }
    }
  };
  const all = Promise.all(
    Array.from({ length: Math.min(BACKGROUND_SYNC_CONCURRENCY, codes.length) }, worker),
  ).then(() => {
    if (deferred > 0)
      deps.logger.error({ deferred, total: codes.length, reason }, 'batch sync deferred to reconciliation');
  });
  const set = inFlight.get(deps.workflows) ?? new Set<Promise<void>>();
  inFlight.set(deps.workflows, set);
  set.add(all);
  all.finally(() => set.delete(all));
}

/** Waits for background sync signals of this gateway to finish (graceful shutdown). */
export async function drainBackgroundSyncs(workflows: WorkflowGateway): Promise<void> {
  await Promise.all([...(inFlight.get(workflows) ?? [])]);
}
