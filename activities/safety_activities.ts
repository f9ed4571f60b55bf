import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { SafetyVerdict } from '../lib/links/link.ts';
import { applyScanResult, type SafetyChange, withReaderReports } from '../lib/safety/apply_scan_result.ts';
import { nextSafetyVerdict, type ScanResult } from '../lib/safety/scan_result.ts';
import { forEachConcurrently } from '../lib/shared/concurrency.ts';
import {
  countReportsByCode,
  listCodesAuditedSince,
  listLinksToRescan,
  type RescanCursor,
  type RescanSummary,
  summarizeRescan,
  touchSafetyCheckedAt,
} from '../lib/stores/link_lifecycle_store.ts';
import { getLinkByCode } from '../lib/stores/link_store.ts';
import { updateOpsRunReport } from '../lib/stores/ops_run_store.ts';
import { signalLinkSync } from '../lib/temporal/workflow_gateway.ts';
import { type ActivityDeps, refreshCaches } from './deps.ts';

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

export interface RescanLinksInput {
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

/** Safety activities: publish-time scans and the scheduled re-scan. */
export function createSafetyActivities(deps: ActivityDeps) {
  async function announce(change: SafetyChange, runId: string): Promise<void> {
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
    await refreshCaches(deps, change.code);
    const { client, info } = Context.current();
    await signalLinkSync(
      client.workflow,
      info.taskQueue,
      change.code,
      `safety ${change.before.safety} → ${change.after.safety}`,
    );
  }

  return {
    /**
     * Scans one link's destination and stores a changed verdict (audited, caches refreshed through the sync
     * workflow). For the publish workflow: call it after minting, before activating.
     */
    async scanLinkSafety(input: { code: string }): Promise<{ safety: SafetyVerdict; changed: boolean }> {
      const row = await getLinkByCode(deps.sql, input.code);
      if (!row) throw ApplicationFailure.nonRetryable(`no link ${input.code}`, 'BadInput');
      const reports = (await countReportsByCode(deps.sql, [row.code])).get(row.code) ?? 0;
      const result = withReaderReports(await deps.safety.scan(row.targetUrl), reports);
      const now = new Date();
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? 'direct';
      const change = await applyScanResult(deps.sql, row, result, {
        actor: 'system:scan',
        reason: `scan ${workflowId}`,
        now,
      });
      if (change === 'conflict') throw new Error(`link ${row.code} changed during its scan; scanning again`);
      if (change === null && result.complete) await touchSafetyCheckedAt(deps.sql, [row.code], now);
      // A pending link is being published: its publish workflow writes the replicas (and must be the one to
      // reach Bitly first); only the serving store needs the new verdict now.
      if (change && row.status === 'pending') await deps.resolver.refresh(row.code);
      else if (change) await announce(change, workflowId);
      return { safety: change ? change.after.safety : row.safety, changed: change !== null };
    },

    /**
     * Re-scans up to `maxLinks` links from `cursor` in chunks of 500 (one blocklist query and one Safe
     * Browsing call each), heartbeating the cursor after every chunk so a retry after a crash resumes there.
     * Changed verdicts are stored, audited, logged and handed to the sync workflow.
     */
    async rescanLinks(
      input: RescanLinksInput,
    ): Promise<{ cursor: RescanCursor; counts: RescanCounts; done: boolean }> {
      const ctx = Context.current();
      const reason = rescanAuditReason(input.runId);
      const resumed = ctx.info.heartbeatDetails as { cursor: RescanCursor; counts: RescanCounts } | undefined;
      let cursor = resumed?.cursor ?? input.cursor;
      const counts = resumed?.counts ?? emptyRescanCounts();
      const startedAt = new Date(input.startedAtMs);
      if (resumed) deps.logger.info({ runId: input.runId, cursor }, 're-scan resumed from its heartbeat');
      if (ctx.info.attempt > 1) {
        // A crash between storing a verdict and signalling its sync would leave caches stale, and the link
        // is not scanned again by this run: signal every change this run recorded once more (idempotent).
        for (const code of await listCodesAuditedSince(deps.sql, {
          action: 'link.safety_changed',
          reason,
          since: startedAt,
        })) {
          await signalLinkSync(ctx.client.workflow, ctx.info.taskQueue, code, reason);
        }
      }

      while (counts.scanned < input.maxLinks) {
        if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
        const links = await listLinksToRescan(deps.sql, {
          cursor,
          startedAt,
          contains: input.contains,
          limit: Math.min(RESCAN_CHUNK_SIZE, input.maxLinks - counts.scanned),
        });
        if (links.length === 0) {
          if (cursor.phase === 'sweep') return { cursor, counts, done: true };
          cursor = { phase: 'sweep', lastClickedAt: null, code: '' };
          ctx.heartbeat({ cursor, counts });
          continue;
        }
        const now = new Date();
        const [results, reports] = await Promise.all([
          deps.safety.scanMany(links.map((l) => l.targetUrl)),
          countReportsByCode(
            deps.sql,
            links.map((l) => l.code),
          ),
        ]);
        const unchanged: string[] = [];
        const candidates: { link: (typeof links)[number]; result: ScanResult }[] = [];
        for (const [i, link] of links.entries()) {
          const result = withReaderReports(results[i]!, reports.get(link.code) ?? 0);
          if (!result.complete) counts.unverified++;
          if (nextSafetyVerdict(link.safety, result) !== link.safety) candidates.push({ link, result });
          else if (result.complete) unchanged.push(link.code);
        }
        // Until the chunk is done, heartbeats keep the last committed position: a retry redoes this chunk.
        const committed = { cursor, counts: { ...counts } };
        await forEachConcurrently(candidates, CHANGE_CONCURRENCY, async ({ link, result }) => {
          ctx.heartbeat(committed);
          const change = await applyScanResult(deps.sql, link, result, {
            actor: 'system:rescan',
            reason,
            now,
          });
          if (change === 'conflict') counts.conflicts++;
          else if (change !== null) {
            counts.changed++;
            if (change.after.safety === 'blocked') counts.blocked++;
            else if (change.after.safety === 'warn') counts.warned++;
            else counts.cleared++;
            await announce(change, input.runId);
          }
        });
        await touchSafetyCheckedAt(deps.sql, unchanged, now);
        counts.scanned += links.length;
        const last = links.at(-1)!;
        cursor =
          cursor.phase === 'sweep'
            ? { phase: 'sweep', lastClickedAt: null, code: last.code }
            : { phase: 'recent', lastClickedAt: last.lastClickedAt?.toISOString() ?? null, code: last.code };
        ctx.heartbeat({ cursor, counts });
      }
      await updateOpsRunReport(deps.sql, input.runId, {
        cursor,
        scanned: input.scannedBefore + counts.scanned,
      });
      return { cursor, counts, done: false };
    },

    /** The run's final counts, read from Postgres (exact even after crashes and retries). */
    async summarizeRescanRun(input: {
      runId: string;
      startedAtMs: number;
      contains?: string;
    }): Promise<RescanSummary> {
      return summarizeRescan(deps.sql, {
        startedAt: new Date(input.startedAtMs),
        reason: rescanAuditReason(input.runId),
        contains: input.contains,
      });
    },
  };
}

/** The audit reason of a re-scan's changes: how its own changes are found again. */
function rescanAuditReason(runId: string): string {
  return `re-scan ${runId}`;
}
