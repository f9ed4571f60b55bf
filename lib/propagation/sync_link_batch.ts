// The batched sync of bulk changes (ADR 0024): codes queued in link_sync_queue (in the transaction of an API batch
// or an archive backfill batch) are synced many at a time by the one drainer workflow (workflows/sync_queue.ts),
// doing what a pass of the per-link `sync:{code}` workflow does — serving store and caches, CDN purge, Bitly
// (create, retarget, archive, with the collision rules of ADR 0008), the expiry sweeper's date — for a whole
// batch at once.

import type { CdnPurger } from '../cdn/cdn_purger.ts';
import type { LinkResolver } from '../redirect/link_resolver.ts';
import { backoffDelay } from '../shared/backoff.ts';
import { forEachConcurrently } from '../shared/concurrency.ts';
import { TransientFailure } from '../shared/errors.ts';
import { type TaskContext, throwIfCancelled } from '../shared/task_context.ts';
import { getLinksByCodes } from '../stores/link_store.ts';
import {
  deferSyncs,
  getQueuedSyncs,
  getSyncQueueHead,
  listDueSyncs,
  type QueuedSync,
  removeSyncedCodes,
} from '../stores/link_sync_queue_store.ts';
import type { Sql } from '../stores/sql.ts';
import type { ExpirySweeper } from '../temporal/expiry_sweeper.ts';
import type { LinkSyncRequester } from '../temporal/link_sync.ts';
import { recordVendorCollision } from '../vendors/record_vendor_collision.ts';
import { sweptExpiry } from './ensure_expiry_timer.ts';
import { purgeLinksFromCdn } from './purge_link.ts';
import { refreshLinks } from './refresh_links.ts';
import { type BitlySyncDeps, syncToBitly } from './sync_to_bitly.ts';

/** How the drainer works through the queue (SYNC_BATCH_SIZE and fixed tuning). */
export interface SyncQueueSettings {
  /** Codes per batch (SYNC_BATCH_SIZE). */
  batchSize: number;
  /** Bitly syncs in flight within a batch; the provider's own limiter still caps Bitly connections at 5. */
  bitlyConcurrency: number;
  /** Failed batches after which a code goes to its own `sync:{code}` workflow (its history says why). */
  maxAttempts: number;
  /** Backoff of a failing code between batches: base doubled per attempt, capped. */
  retryBaseMs: number;
  retryMaxMs: number;
}

export const DEFAULT_SYNC_QUEUE_SETTINGS: SyncQueueSettings = {
  batchSize: 200,
  bitlyConcurrency: 16,
  maxAttempts: 5,
  retryBaseMs: 1_000,
  retryMaxMs: 60_000,
};

/** Temporal round trips besides Bitly (hand-offs to sync:{code}), in flight at once. */
const HANDOFF_CONCURRENCY = 16;
/** Reasons of new links: nothing can be cached at the CDN under a code that did not exist (as sync:{code}). */
const CREATION_REASON = /^link\.created\b/;

/** What the next batch is: its codes (named in the drainer's history) and when to look again. */
export interface SyncBatchTake {
  codes: string[];
  /** Milliseconds until the next backing-off code is due; null: the queue is empty. */
  nextDueInMs: number | null;
}

/** The next due codes, oldest first (a read: rows leave the queue only when their sync is done). */
export async function takeSyncBatch(
  deps: { sql: Sql; syncQueue?: SyncQueueSettings | undefined },
  input: { limit?: number },
): Promise<SyncBatchTake> {
  const limit = input.limit ?? deps.syncQueue?.batchSize ?? DEFAULT_SYNC_QUEUE_SETTINGS.batchSize;
  const codes = await listDueSyncs(deps.sql, limit);
  if (codes.length > 0) return { codes, nextDueInMs: 0 };
  // Nothing due: the first row through the due index says when (a count of the queue on every take read all
  // of it, a million rows behind a rate-limited Bitly; ADR 0088).
  const head = await getSyncQueueHead(deps.sql);
  return { codes, nextDueInMs: head.nextDueInMs };
}

/** What one batch did (the activity's result: in the drainer's history, beside the batch's codes). */
export type SyncBatchReport = {
  /** Codes of the batch still queued when it ran (a retried batch skips what an earlier attempt finished). */
  taken: number;
  /** Codes whose replicas are in step and that left the queue. */
  synced: number;
  /** What Bitly needed, by action (created, adopted, retargeted, unchanged, skipped, disabled…). */
  bitly: Record<string, number>;
  /** Codes whose back-half Bitly will not hold: recorded collisions (as the per-link workflow records them). */
  collisions: string[];
  /** Codes that failed this time and wait for their next attempt. */
  retrying: { code: string; attempts: number; error: string }[];
  /** Codes that failed SYNC_MAX_ATTEMPTS times and were handed to their own `sync:{code}` workflow. */
  handedOff: string[];
  /** The whole queue must wait this long for Bitly (its rate limit, or an outage that failed every link). */
  pause?: { ms: number; why: 'rate-limited' | 'vendor-unavailable'; left: number };
  ms: number;
};

export interface SyncBatchDeps extends BitlySyncDeps {
  /** Writes the serving store and announces the change to every instance (refreshMany: one pass). */
  resolver: LinkResolver;
  cdn?: CdnPurger | undefined;
  /** Each other short domain's purger, by host name (lib/cdn/configured_cdn_purger.ts). */
  cdnByDomain?: ReadonlyMap<string, CdnPurger> | undefined;
  /** The expiry sweeper, told the batch's earliest expiry once (ADR 0091). */
  sweeper: ExpirySweeper;
  /** The per-link workflow, for links that keep failing. */
  sync: LinkSyncRequester;
  syncQueue?: SyncQueueSettings | undefined;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Syncs one batch of queued codes: (1) the serving store and every instance's cache in one pass, (2) the CDN's
 * cached copies in one purge (not for new links) beside (3) Bitly with bounded concurrency through the provider's
 * limiter, exactly as `sync:{code}` does it per link (syncToBitly; a refused back-half is a recorded collision),
 * then (4) tells the expiry sweeper the batch's earliest expiry, once. A code leaves the queue only once all of it is done; one that fails is retried in a
 * later batch with backoff, and after `maxAttempts` goes to its own sync workflow. A Bitly rate limit (or an
 * outage that fails every link of the batch) is not the links' fault: the untried codes stay as they are and
 * the drainer waits. Idempotent: a retry after a crash re-reads the queue and redoes only what is still there.
 */
export async function syncLinkBatch(
  deps: SyncBatchDeps,
  input: { codes: string[] },
  context: TaskContext,
): Promise<SyncBatchReport> {
  const started = Date.now();
  const settings = deps.syncQueue ?? DEFAULT_SYNC_QUEUE_SETTINGS;
  const queued = await getQueuedSyncs(deps.sql, input.codes);
  const items = input.codes.flatMap((code) => {
    const item = queued.get(code);
    return item ? [item] : [];
  });
  const report: SyncBatchReport = {
    taken: items.length,
    synced: 0,
    bitly: {},
    collisions: [],
    retrying: [],
    handedOff: [],
    ms: 0,
  };
  if (items.length === 0) return { ...report, ms: Date.now() - started };
  const codes = items.map((i) => i.code);

  // 1. Our own replicas first (as the per-link pass): a failure here is the store's, not a link's: retried.
  await refreshLinks(deps.resolver, codes);
  context.heartbeat({ step: 'serving-store', codes: codes.length });

  const failures = new Map<string, { error: string; retryAfterMs?: number | undefined }>();
  const fail = (code: string, error: string, retryAfterMs?: number) => {
    if (!failures.has(code)) failures.set(code, { error, retryAfterMs });
  };
  /** Codes not tried because the whole queue must wait (left untouched in the queue). */
  const untried = new Set<string>();
  // Set from inside the concurrent calls below (a holder, so the checks after them see it).
  const hold: { pause: SyncBatchReport['pause'] } = { pause: undefined };
  const pausedMs = () => hold.pause?.ms ?? 0;
  /** Codes whose Bitly call failed because Bitly was unavailable (5xx, timeouts). */
  const vendorUnavailable = new Set<string>();
  let vendorAnswered = 0;

  // 2 and 3. The CDN purge (one call for the batch) beside Bitly, as the per-link pass runs them side by side.
  const toPurge = items.filter((i) => !CREATION_REASON.test(i.reason)).map((i) => i.code);
  const purging = purgeLinksFromCdn(deps, toPurge).then(
    (purged) => {
      for (const r of purged.retry) fail(r.code, r.reason, r.retryAfterMs);
    },
    (error: unknown) => {
      for (const code of toPurge) fail(code, `CDN purge failed: ${messageOf(error)}`);
    },
  );
  let done = 0;
  const bitlying = forEachConcurrently(items, settings.bitlyConcurrency, async (item) => {
    if (hold.pause) {
      untried.add(item.code);
      return;
    }
    throwIfCancelled(context);
    try {
      const result = await syncToBitly(
        deps,
        { code: item.code },
        { ...context, attempt: item.attempts + 1, heartbeat: () => context.heartbeat({ done }) },
      );
      const action = result.outcome === 'synced' ? result.action : result.outcome;
      report.bitly[action] = (report.bitly[action] ?? 0) + 1;
      vendorAnswered++;
      if (result.outcome === 'mismatch') {
        await recordVendorCollision(deps, { code: item.code, vendor: 'bitly', detail: result.detail });
        report.collisions.push(item.code);
      }
    } catch (error) {
      if (error instanceof TransientFailure && error.kind === 'VendorRateLimited') {
        // Bitly says wait: every other link would hear the same. Not this link's fault, not an attempt.
        const ms = error.retryAfterMs ?? settings.retryMaxMs;
        hold.pause = { ms: Math.max(pausedMs(), ms), why: 'rate-limited', left: 0 };
        untried.add(item.code);
        return;
      }
      if (error instanceof TransientFailure && error.kind === 'VendorUnavailable')
        vendorUnavailable.add(item.code);
      fail(item.code, messageOf(error), error instanceof TransientFailure ? error.retryAfterMs : undefined);
    } finally {
      done++;
      context.heartbeat({ done });
    }
  });
  await Promise.all([purging, bitlying]);

  // An outage that failed every Bitly call of the batch (two or more) is the vendor's, not the links': no
  // attempt is counted and the drainer waits, so an hour-long outage does not fan out into per-link workflows.
  if (!hold.pause && vendorAnswered === 0 && vendorUnavailable.size >= 2) {
    const waits = [...vendorUnavailable].map((c) => failures.get(c)?.retryAfterMs ?? settings.retryBaseMs);
    hold.pause = { ms: Math.max(settings.retryBaseMs, ...waits), why: 'vendor-unavailable', left: 0 };
    for (const code of vendorUnavailable) {
      failures.delete(code);
      untried.add(code);
    }
  }

  // 4. The expiry sweeper: one signal with the earliest expiry of the batch's live links (none: nothing to say;
  // a removed or later date needs nothing, the sweeper reads Postgres whenever it wakes).
  const settled = items.filter((i) => !untried.has(i.code) && !failures.has(i.code));
  const rows = await getLinksByCodes(
    deps.sql,
    settled.map((i) => i.code),
  );
  let earliest: number | null = null;
  for (const row of rows.values()) {
    const at = sweptExpiry(row);
    if (at !== null && (earliest === null || at < earliest)) earliest = at;
  }
  if (earliest !== null) {
    try {
      await deps.sweeper.expiresAt(earliest);
    } catch (error) {
      // Not this batch's links' fault, but they must not leave the queue before the sweeper knows their date.
      const dated = settled.filter((i) => {
        const row = rows.get(i.code);
        return row !== undefined && sweptExpiry(row) !== null;
      });
      for (const item of dated) fail(item.code, `expiry sweeper: ${messageOf(error)}`);
    }
  }

  // 5. Settle: done codes leave the queue (at the generation synced); failures back off or go to sync:{code}.
  const finished = items.filter((i) => !untried.has(i.code) && !failures.has(i.code));
  report.synced = await removeSyncedCodes(deps.sql, finished);
  const deferred: { code: string; generation: number; delayMs: number; error: string }[] = [];
  const givenUp: QueuedSync[] = [];
  for (const item of items) {
    const failure = failures.get(item.code);
    if (!failure) continue;
    const attempts = item.attempts + 1;
    if (attempts >= settings.maxAttempts) {
      givenUp.push(item);
      continue;
    }
    deferred.push({
      code: item.code,
      generation: item.generation,
      delayMs: backoffDelay({
        attempt: attempts,
        baseMs: settings.retryBaseMs,
        maxMs: settings.retryMaxMs,
        retryAfterMs: failure.retryAfterMs,
      }),
      error: failure.error,
    });
    report.retrying.push({ code: item.code, attempts, error: failure.error.slice(0, 200) });
  }
  await deferSyncs(deps.sql, deferred);
  await forEachConcurrently(givenUp, HANDOFF_CONCURRENCY, async (item) => {
    const failure = failures.get(item.code)!;
    await deps.sync.syncLink(
      item.code,
      `sync queue gave up after ${item.attempts + 1} failed batches (${item.reason}): ${failure.error}`.slice(
        0,
        500,
      ),
    );
  });
  await removeSyncedCodes(deps.sql, givenUp);
  report.handedOff = givenUp.map((i) => i.code);
  if (hold.pause) report.pause = { ...hold.pause, left: untried.size };
  report.ms = Date.now() - started;
  deps.logger.info(
    {
      taken: report.taken,
      synced: report.synced,
      bitly: report.bitly,
      collisions: report.collisions.length,
      retrying: report.retrying.length,
      handedOff: report.handedOff.length,
      pause: report.pause,
      ms: report.ms,
    },
    'sync queue batch',
  );
  return report;
}
