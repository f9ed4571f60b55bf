// The safety re-scan (DESIGN.md, "Safety re-scan"): every destination re-checked on a schedule, in chunks, with
// progress that survives a crash; a changed verdict is stored, audited and handed to the link's sync workflow.
// Also the publish-time scan of one link.

import { refreshAfterChange } from '../propagation/refresh_after_change.ts';
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
import { updateOpsRunReport } from '../stores/ops_run_store.ts';
import { countReportsByCode } from '../stores/report_store.ts';
import type { Sql } from '../stores/sql.ts';
import type { LinkSyncRequester } from '../temporal/link_sync.ts';
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
}

/** Links one Safe Browsing call (and one blocklist query) covers. */
export const RESCAN_CHUNK_SIZE = 500;
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

async function announce(deps: RescanDeps, change: SafetyChange, runId: string): Promise<void> {
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
  await refreshAfterChange(deps, change.code);
  await deps.sync.syncLink(change.code, `safety ${change.before.safety} → ${change.after.safety}`);
}

/**
 * Scans one link's destination and stores a changed verdict (audited, caches refreshed, the sync workflow
 * told). For the publish workflow: called after minting, before activating.
 */
export async function scanLinkSafety(
  deps: RescanDeps,
  input: { code: string; runId: string },
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
  const change = await applyScanResult(deps.sql, row, result, {
    actor: 'system:scan',
    reason: `scan ${input.runId}`,
    now,
  });
  if (change === 'conflict') throw new Error(`link ${row.code} changed during its scan; scanning again`);
  if (change === null && result.complete) await touchSafetyCheckedAt(deps.sql, [row.code], now);
  // A pending link is being published: its publish workflow writes the replicas (and must be the one to
  // reach Bitly first); only the serving store needs the new verdict now.
  if (change && row.status === 'pending') await deps.resolver.refresh(row.code);
  else if (change) await announce(deps, change, input.runId);
  return { safety: change ? change.after.safety : row.safety, changed: change !== null };
}

/**
 * Re-scans up to `maxLinks` links from `cursor` in chunks of 500 (one blocklist query and one Safe Browsing
 * call each), heartbeating the cursor after every chunk so a retry after a crash resumes there. Changed
 * verdicts are stored, audited, logged and handed to the sync workflow.
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
    // A crash between storing a verdict and signalling its sync would leave caches stale, and the link
    // is not scanned again by this run: signal every change this run recorded once more (idempotent).
    for (const code of await listCodesAuditedSince(deps.sql, {
      action: 'link.safety_changed',
      reason,
      since: startedAt,
    })) {
      await deps.sync.syncLink(code, reason);
    }
  }

  while (counts.scanned < input.maxLinks) {
    throwIfCancelled(context);
    const links = await listLinksToRescan(deps.sql, {
      cursor,
      startedAt,
      contains: input.contains,
      limit: Math.min(RESCAN_CHUNK_SIZE, input.maxLinks - counts.scanned),
    });
    if (links.length === 0) {
      if (cursor.phase === 'sweep') return { cursor, counts, done: true };
      cursor = { phase: 'sweep', lastClickedAt: null, code: '' };
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
    await forEachConcurrently(candidates, CHANGE_CONCURRENCY, async ({ link, result }) => {
      context.heartbeat(committed);
      const change = await applyScanResult(deps.sql, link, result, { actor: 'system:rescan', reason, now });
      if (change === 'conflict') counts.conflicts++;
      else if (change !== null) {
        counts.changed++;
        if (change.after.safety === 'blocked') counts.blocked++;
        else if (change.after.safety === 'warn') counts.warned++;
        else counts.cleared++;
        await announce(deps, change, input.runId);
      }
    });
    await touchSafetyCheckedAt(deps.sql, unchanged, now);
    counts.scanned += links.length;
    const last = links.at(-1)!;
    cursor =
      cursor.phase === 'sweep'
        ? { phase: 'sweep', lastClickedAt: null, code: last.code }
        : { phase: 'recent', lastClickedAt: last.lastClickedAt?.toISOString() ?? null, code: last.code };
    context.heartbeat({ cursor, counts });
  }
  await updateOpsRunReport(deps.sql, input.runId, { cursor, scanned: input.scannedBefore + counts.scanned });
  return { cursor, counts, done: false };
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
