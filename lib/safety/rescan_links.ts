// The safety re-scan: every destination re-checked on a schedule, in chunks, with progress that survives a crash;
// a changed verdict is stored, audited and queued for the sync queue's drainer in one transaction (a listing can
// change thousands of links at once: one batch pass for them, not a workflow each, ADR 0024). Also the
// publish-time scan of one link, whose change goes to the link's own sync workflow.

import { refreshAfterChange } from '../propagation/refresh_after_change.ts';
import { refreshLinks } from '../propagation/refresh_links.ts';
import type { LinkResolver } from '../redirect/link_resolver.ts';
import { forEachConcurrently } from '../shared/concurrency.ts';
import { PermanentFailure } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { type TaskContext, throwIfCancelled } from '../shared/task_context.ts';
import {
  listCodesAuditedSince,
  listLinksToRescan,
  type RescanCursor,
  type RescanSummary,
  summarizeRescan,
  touchSafetyCheckedAt,
} from '../stores/link_lifecycle_store.ts';
import type { SafetyVerdict } from '../stores/link_rows.ts';
import { getLinkByCode } from '../stores/link_store.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import { updateOpsRunReport } from '../stores/ops_run_store.ts';
import { countReportsByCode } from '../stores/report_store.ts';
import type { Sql } from '../stores/sql.ts';
import type { LinkSyncRequester, SyncQueueKicker } from '../temporal/link_sync.ts';
import { applyScanResult, type SafetyChange, withReaderReports } from './apply_scan_result.ts';
import type { SafetyScanner } from './safety_scanner.ts';
import { combineScanResults, linkDestinations, nextSafetyVerdict, type ScanResult } from './scan_result.ts';

export type { RescanCursor, RescanSummary };

export interface RescanDeps {
  sql: Sql;
  logger: Logger;
  safety: SafetyScanner;
  resolver: LinkResolver;
  sync: LinkSyncRequester;
  queue: SyncQueueKicker;
}

/** Links one Safe Browsing call (and one blocklist query) covers. */
export const RESCAN_CHUNK_SIZE = 500;
/**
 * Windows with nothing due one call walks before it returns to the workflow (a million index entries, about
 * ten seconds at 10,000,000 links): a scoped re-scan over a large archive still reports its progress.
 */
const EMPTY_WINDOWS_PER_CALL = 50;
/** Verdict changes stored and signalled at once (each a transaction and a signal; the pool has 10). */
const CHANGE_CONCURRENCY = 8;

/** What one re-scan call counted. */
export interface RescanCounts {
  scanned: number;
  changed: number;
  blocked: number;
  warned: number;
  cleared: number;
  /** Checked by local rules only: Safe Browsing did not answer. */
  unverified: number;
  /** Skipped because the link was edited during the scan (its edit scans the new target). */
  conflicts: number;
}

export interface RescanStepInput {
  /** The run's workflow ID: ops_runs key and audit reason. */
  runId: string;
  /** When the run started: links verified since then are not scanned again (epoch ms). */
  startedAtMs: number;
  cursor: RescanCursor;
  /** Only targets containing this (lower-cased) text: a blocklist change re-checks what it can affect. */
  contains?: string;
  /** Links to scan in this call before returning to the workflow. */
  maxLinks: number;
  /** Links the run scanned before this call (for the progress shown in ops_runs). */
  scannedBefore: number;
}

export function emptyRescanCounts(): RescanCounts {
  return { scanned: 0, changed: 0, blocked: 0, warned: 0, cleared: 0, unverified: 0, conflicts: 0 };
}

/** The audit reason of a re-scan's changes: how its own changes are found again. */
function rescanAuditReason(runId: string): string {
  return `re-scan ${runId}`;
}

function logChange(deps: RescanDeps, change: SafetyChange, runId: string): void {
  deps.logger.warn(
    {
      code: change.code,
      before: change.before.safety,
      after: change.after.safety,
      reason: change.after.reason,
      runId,
    },
    'safety verdict changed',
  );
}

/** Logs a stored change and refreshes the in-house copies; the link's sync workflow is told unless it was queued. */
async function announce(
  deps: RescanDeps,
  change: SafetyChange,
  runId: string,
  queued = false,
): Promise<void> {
  logChange(deps, change, runId);
  await refreshAfterChange(deps, change.code);
  if (!queued)
    await deps.sync.syncLink(change.code, `safety ${change.before.safety} → ${change.after.safety}`);
}

/**
 * Scans one link's destination and stores a changed verdict (audited, caches refreshed, the sync workflow
 * told). For the publish workflow: called after minting, before activating, and after a new permalink. With
 * `queueSync` a changed verdict of a live link is queued for the sync queue's drainer in its own transaction
 * instead (the caller wakes the drainer: ADR 0098).
 */
export async function scanLinkSafety(
  deps: RescanDeps,
  input: { code: string; runId: string; queueSync?: boolean },
): Promise<{ safety: SafetyVerdict; changed: boolean }> {
  const row = await getLinkByCode(deps.sql, input.code);
  if (!row) throw new PermanentFailure(`no link ${input.code}`);
  const reports = (await countReportsByCode(deps.sql, [row.code])).get(row.code) ?? 0;
  const destinations = linkDestinations(row);
  const scanned =
    destinations.length === 1
      ? await deps.safety.scan(row.targetUrl)
      : combineScanResults(await deps.safety.scanMany(destinations));
  const result = withReaderReports(scanned, reports, {
    trusted: deps.safety.isTrusted?.(row.targetUrl) ?? false,
  });
  const now = new Date();
  const queued = input.queueSync === true && row.status !== 'pending';
  const change = await applyScanResult(deps.sql, row, result, {
    actor: 'system:scan',
    reason: `scan ${input.runId}`,
    now,
    ...(queued ? { queueSync: true } : {}),
  });
  if (change === 'conflict') throw new Error(`link ${row.code} changed during its scan; scanning again`);
  if (change === null && result.complete) await touchSafetyCheckedAt(deps.sql, [row.code], now);
  // A pending link is being published: its publish workflow writes the replicas (and must be the one to
  // reach Bitly first); only the serving store needs the new verdict now.
  if (change && row.status === 'pending') await deps.resolver.refresh(row.code);
  else if (change) await announce(deps, change, input.runId, queued);
  return { safety: change ? change.after.safety : row.safety, changed: change !== null };
}

/**
 * Re-scans up to `maxLinks` links from `cursor` in chunks of 500 (one blocklist query and one Safe Browsing
 * call each), heartbeating the cursor after every chunk so a retry after a crash resumes there. Changed
 * verdicts are stored, audited and queued for sync (one transaction each) and logged; after each chunk its
 * changed links' in-house copies are refreshed together and the drainer is woken once.
 */
export async function rescanLinks(
  deps: RescanDeps,
  input: RescanStepInput,
  context: TaskContext,
): Promise<{ cursor: RescanCursor; counts: RescanCounts; done: boolean }> {
  const reason = rescanAuditReason(input.runId);
  const resumed = context.resumed as { cursor: RescanCursor; counts: RescanCounts } | undefined;
  let cursor = resumed?.cursor ?? input.cursor;
  const counts = resumed?.counts ?? emptyRescanCounts();
  const startedAt = new Date(input.startedAtMs);
  if (resumed) deps.logger.info({ runId: input.runId, cursor }, 're-scan resumed from its heartbeat');
  if (context.attempt > 1) {
    // Each change was queued with its verdict, but a crash before the chunk's refresh and kick leaves the
    // in-house copies stale and the drainer asleep, and the link is not scanned again by this run: every
    // change the run recorded is queued (a no-op but for a new generation) and refreshed once more.
    const recorded = await listCodesAuditedSince(deps.sql, {
      action: 'link.safety_changed',
      reason,
      since: startedAt,
    });
    await enqueueLinkSyncs(deps.sql, recorded, reason);
    await announceChunk(deps, recorded, reason);
  }

  let emptyWindows = 0;
  while (counts.scanned < input.maxLinks && emptyWindows < EMPTY_WINDOWS_PER_CALL) {
    throwIfCancelled(context);
    const page = await listLinksToRescan(deps.sql, {
      cursor,
      startedAt,
      contains: input.contains,
      limit: Math.min(RESCAN_CHUNK_SIZE, input.maxLinks - counts.scanned),
    });
    const links = page.links;
    if (links.length === 0) {
      // A window with nothing due (a scoped re-scan, or the sweep after a whole pass): on past it.
      if (!page.end) {
        cursor = page.next;
        emptyWindows++;
      } else if (cursor.phase === 'sweep') return { cursor, counts, done: true };
      else cursor = { phase: 'sweep', lastClickedAt: null, code: '' };
      context.heartbeat({ cursor, counts });
      continue;
    }
    const now = new Date();
    // Each link's url and routing rule targets, scanned in one call, then judged together per link.
    const destinations = links.map(linkDestinations);
    const [flat, reports] = await Promise.all([
      deps.safety.scanMany(destinations.flat()),
      countReportsByCode(
        deps.sql,
        links.map((l) => l.code),
      ),
    ]);
    let at = 0;
    const results = destinations.map((own) => {
      const from = at;
      at += own.length;
      return combineScanResults(flat.slice(from, at));
    });
    const unchanged: string[] = [];
    const candidates: { link: (typeof links)[number]; result: ScanResult }[] = [];
    for (const [i, link] of links.entries()) {
      const result = withReaderReports(results[i]!, reports.get(link.code) ?? 0, {
        trusted: deps.safety.isTrusted?.(link.targetUrl) ?? false,
      });
      if (!result.complete) counts.unverified++;
      if (nextSafetyVerdict(link.safety, result) !== link.safety) candidates.push({ link, result });
      else if (result.complete) unchanged.push(link.code);
    }
    // Until the chunk is done, heartbeats keep the last committed position: a retry redoes this chunk.
    const committed = { cursor, counts: { ...counts } };
    const changed: string[] = [];
    await forEachConcurrently(candidates, CHANGE_CONCURRENCY, async ({ link, result }) => {
      context.heartbeat(committed);
      const change = await applyScanResult(deps.sql, link, result, {
        actor: 'system:rescan',
        reason,
        now,
        queueSync: true,
      });
      if (change === 'conflict') counts.conflicts++;
      else if (change !== null) {
        counts.changed++;
        if (change.after.safety === 'blocked') counts.blocked++;
        else if (change.after.safety === 'warn') counts.warned++;
        else counts.cleared++;
        logChange(deps, change, input.runId);
        changed.push(change.code);
      }
    });
    await announceChunk(deps, changed, reason);
    await touchSafetyCheckedAt(deps.sql, unchanged, now);
    counts.scanned += links.length;
    cursor = page.next;
    context.heartbeat({ cursor, counts });
  }
  await updateOpsRunReport(deps.sql, input.runId, { cursor, scanned: input.scannedBefore + counts.scanned });
  return { cursor, counts, done: false };
}

/**
 * After a chunk's verdicts committed (each queued for sync with it): the in-house copies of the changed links are
 * refreshed in one pass, so readers meet the new verdict at once (best effort, as after a single change: the
 * drainer refreshes again), and the drainer is woken once for all of them.
 */
async function announceChunk(deps: RescanDeps, codes: readonly string[], reason: string): Promise<void> {
  if (codes.length === 0) return;
  try {
    await refreshLinks(deps.resolver, codes);
  } catch (error) {
    deps.logger.warn(
      { err: error, changed: codes.length },
      'cache refresh after a re-scan chunk failed; the sync queue drainer refreshes them',
    );
  }
  await deps.queue.kickSyncQueue(reason);
}

/** A run's final counts, read from Postgres (exact even after crashes and retries). */
export async function summarizeRescanRun(
  deps: { sql: Sql },
  input: { runId: string; startedAtMs: number; contains?: string },
): Promise<RescanSummary> {
  return summarizeRescan(deps.sql, {
    startedAt: new Date(input.startedAtMs),
    reason: rescanAuditReason(input.runId),
    contains: input.contains,
  });
}
