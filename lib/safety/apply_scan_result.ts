import { insertAuditEntry } from '../stores/audit_store.ts';
import type { LinkRow, SafetyVerdict } from '../stores/link_rows.ts';
import { updateLink } from '../stores/link_store.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import type { ReportCounts } from '../stores/report_store.ts';
import type { Sql } from '../stores/sql.ts';
import { recordWebhookEvent } from '../stores/webhook_outbox_store.ts';
import {
  describeScanResult,
  nextSafetyVerdict,
  type ScanFinding,
  type ScanResult,
  toScanResult,
} from './scan_result.ts';

/** Distinct reader reports that soft-block a link to `warn` (POST /{code}/report); a re-scan keeps that floor. */
export const READER_REPORTS_WARN_THRESHOLD = 3;

/** A verdict that changed, as audited and logged. */
export interface SafetyChange {
  code: string;
  before: { safety: SafetyVerdict; reason: string | null };
  after: { safety: SafetyVerdict; reason: string | null };
}

/**
 * Adds the reader-report floors to a scan: a report a moderator confirmed keeps the link `blocked`; enough
 * distinct standing reporters (open or ignored reports) keep it at `warn` at least — unless its destination is
 * on one of the newsroom's own trusted hosts (SAFETY_TRUSTED_HOSTS), which readers can never soft-block (their
 * reports still reach the moderation queue).
 */
export function withReaderReports(
  result: ScanResult,
  reports: number | ReportCounts,
  options: { trusted?: boolean } = {},
): ScanResult {
  const { standing, confirmed } = typeof reports === 'number' ? { standing: reports, confirmed: 0 } : reports;
  const findings: ScanFinding[] = [];
  if (confirmed > 0) {
    findings.push({
      verdict: 'blocked',
      rule: 'reports',
      reason: `reader reports confirmed by a moderator (${confirmed})`,
    });
  }
  if (standing >= READER_REPORTS_WARN_THRESHOLD && !options.trusted) {
    findings.push({ verdict: 'warn', rule: 'reports', reason: `reported by ${standing} readers` });
  }
  if (findings.length === 0) return result;
  return toScanResult(result.url, [...result.findings, ...findings], result.complete);
}

/**
 * Stores a scan's verdict on a link when it differs from the one held, with an audit entry, in one
 * transaction. `link.version` guards against a concurrent edit (a new target is scanned by its own edit):
 * then nothing is written and 'conflict' is returned. Returns null when the verdict is unchanged.
 */
export async function applyScanResult(
  sql: Sql,
  link: Pick<LinkRow, 'code' | 'safety' | 'safetyReason' | 'version'>,
  result: ScanResult,
  options: {
    actor: string;
    reason: string;
    now: Date;
    /** Queue the change for the sync queue's drainer in the same transaction (a re-scan's many changes). */
    queueSync?: boolean;
  },
): Promise<SafetyChange | 'conflict' | null> {
  const safety = nextSafetyVerdict(link.safety, result);
  if (safety === link.safety) return null;
  const reason = describeScanResult(result);
  return sql.begin(async (tx) => {
    const updated = await updateLink(
      tx,
      link.code,
      { safety, safetyReason: reason, ...(result.complete ? { safetyCheckedAt: options.now } : {}) },
      link.version,
    );
    if (!updated) return 'conflict' as const;
    const change: SafetyChange = {
      code: link.code,
      before: { safety: link.safety, reason: link.safetyReason },
      after: { safety, reason },
    };
    await insertAuditEntry(tx, {
      code: link.code,
      actor: options.actor,
      action: 'link.safety_changed',
      before: change.before,
      after: change.after,
      reason: options.reason,
    });
    // Blocked, or soft-blocked (a warning page before the destination): readers no longer go straight through.
    if ((safety === 'blocked' || safety === 'warn') && link.safety !== 'blocked')
      await recordWebhookEvent(tx, 'link.blocked', { code: link.code, safety, reason });
    if (options.queueSync) await enqueueLinkSyncs(tx, [link.code], `safety ${link.safety} → ${safety}`);
    return change;
  });
}
