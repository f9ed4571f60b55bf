// The moderation queue of reader reports: which links readers reported and why, and what a
// moderator decides — dismiss (the reports are unfounded: the soft-block is lifted), confirm (they are right:
// the link is blocked, 451) or ignore (seen, no action: the link stays as it is). Every decision is audited and
// reaches caches and vendors like any other change. Moderators are administrators (UI role `admin`, API scope
// `admin`).

import { z } from 'zod';
import { refreshAfterChange } from '../propagation/refresh_after_change.ts';
import { syncAfterChange } from '../propagation/sync_after_change.ts';
import type { LinkResolver } from '../redirect/link_resolver.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../shared/errors.ts';
import { shortUrlOfKey } from '../shared/link_key.ts';
import type { Logger } from '../shared/logger.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import type { LinkRow, SafetyVerdict } from '../stores/link_rows.ts';
import { getLinkByCode, updateLink } from '../stores/link_store.ts';
import {
  countReportsByCode,
  listOpenReportsByOwner,
  listReportQueue,
  listReports,
  REPORT_STATUSES,
  type ReportQueueRow,
  type ReportRow,
  type ReportStatus,
  updateReportStatus,
} from '../stores/report_store.ts';
import type { Db, Sql } from '../stores/sql.ts';
import type { WorkflowGateway } from '../temporal/workflow_gateway.ts';
import { withReaderReports } from './apply_scan_result.ts';
import type { SafetyScanner } from './safety_scanner.ts';
import { describeScanResult, type ScanResult, toScanResult, worseVerdict } from './scan_result.ts';

export { REPORT_STATUSES, type ReportStatus };

/** What a moderator can decide about a link's reports. */
export const REPORT_ACTIONS = ['dismiss', 'confirm', 'ignore'] as const;
export type ReportAction = (typeof REPORT_ACTIONS)[number];

/** Which reports each decision takes, and what they become. */
const TRANSITIONS: Record<ReportAction, { from: ReportStatus[]; to: ReportStatus }> = {
  // Dismissing also takes back a confirmation or an "ignore": the link is cleared of every report.
  dismiss: { from: ['open', 'ignored', 'confirmed'], to: 'dismissed' },
  confirm: { from: ['open', 'ignored'], to: 'confirmed' },
  ignore: { from: ['open'], to: 'ignored' },
};

/** POST /api/v1/reports/{code}/resolve body (and the queue page's forms). */
export const resolveReportsInputSchema = z.strictObject({
  action: z.enum(REPORT_ACTIONS),
  note: z.string().trim().max(500, 'must be at most 500 characters').optional(),
});
export type ResolveReportsInput = z.infer<typeof resolveReportsInputSchema>;

/** GET /api/v1/reports query. */
export const reportQueueQuerySchema = z.strictObject({
  status: z.enum(REPORT_STATUSES).default('open'),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(200).optional(),
});
export type ReportQueueQuery = z.infer<typeof reportQueueQuerySchema>;

/** One link in the queue, as the API returns it. */
export const reportQueueItemSchema = z.object({
  code: z.string(),
  shortUrl: z.string(),
  url: z.string(),
  title: z.string().optional(),
  status: z.string(),
  safety: z.string(),
  owner: z.string(),
  /** Reports of the link in the status listed (open, by default). */
  reports: z.number().int(),
  totalReports: z.number().int(),
  reasons: z.array(z.object({ reason: z.string(), count: z.number().int() })),
  firstReportedAt: z.string(),
  lastReportedAt: z.string(),
});
export type ReportQueueItem = z.infer<typeof reportQueueItemSchema>;

/** A report as the API shows it (the reporter stays anonymous: not even the hash is shown). */
export interface ReportView {
  reason: string | null;
  status: ReportStatus;
  createdAt: string;
  resolvedAt?: string;
  resolvedBy?: string;
  note?: string;
}

function toQueueItem(row: ReportQueueRow, shortBaseUrl: string): ReportQueueItem {
  return {
    code: row.code,
    shortUrl: shortUrlOfKey({ shortBaseUrl }, row.code),
    url: row.targetUrl,
    ...(row.title ? { title: row.title } : {}),
    status: row.status,
    safety: row.safety,
    owner: row.owner,
    reports: row.openReports,
    totalReports: row.totalReports,
    reasons: row.reasons,
    firstReportedAt: new Date(row.firstReportedAt).toISOString(),
    lastReportedAt: new Date(row.lastReportedAt).toISOString(),
  };
}

function toReportView(row: ReportRow): ReportView {
  return {
    reason: row.reason,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    ...(row.resolvedAt ? { resolvedAt: row.resolvedAt.toISOString() } : {}),
    ...(row.resolvedBy ? { resolvedBy: row.resolvedBy } : {}),
    ...(row.resolutionNote ? { note: row.resolutionNote } : {}),
  };
}

function encodeCursor(row: ReportQueueItem): string {
  return btoa(JSON.stringify([row.lastReportedAt, row.code]))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

function decodeCursor(cursor: string): { lastReportedAt: Date; code: string } {
  try {
    const [at, code] = z
      .tuple([z.iso.datetime(), z.string().max(100)])
      .parse(JSON.parse(atob(cursor.replace(/-/g, '+').replace(/_/g, '/'))));
    return { lastReportedAt: new Date(at), code };
  } catch {
    throw new BadRequestError('The cursor is not one this server issued.', [
      { path: 'cursor', message: 'is not a cursor this server issued' },
    ]);
  }
}

/** One page of the queue: links with reports in `status` (open by default), most recently reported first. */
export async function listReportQueuePage(
  db: Db,
  shortBaseUrl: string,
  query: ReportQueueQuery,
): Promise<{ items: ReportQueueItem[]; nextCursor: string | null }> {
  const rows = await listReportQueue(db, {
    status: query.status,
    limit: query.limit + 1,
    ...(query.cursor ? { cursor: decodeCursor(query.cursor) } : {}),
  });
  const items = rows.slice(0, query.limit).map((r) => toQueueItem(r, shortBaseUrl));
  return {
    items,
    nextCursor: rows.length > query.limit && items.length > 0 ? encodeCursor(items.at(-1)!) : null,
  };
}

/** A link's reports, every state, oldest first; 404 for no such link. */
export async function getLinkReports(
  db: Db,
  shortBaseUrl: string,
  code: string,
): Promise<{
  code: string;
  shortUrl: string;
  url: string;
  status: string;
  safety: string;
  owner: string;
  reports: ReportView[];
}> {
  const link = await getLinkByCode(db, code);
  if (!link || link.deletedAt) throw new NotFoundError(`No link ${code}.`);
  return {
    code: link.code,
    shortUrl: shortUrlOfKey({ shortBaseUrl }, link.code),
    url: link.targetUrl,
    status: link.status,
    safety: link.safety,
    owner: link.owner,
    reports: (await listReports(db, code)).map(toReportView),
  };
}

/** Open reports of a link, for the notice on its page (count and reasons, newest first). */
export async function getOpenReportSummary(
  db: Db,
  code: string,
): Promise<{ open: number; reasons: string[] }> {
  const open = (await listReports(db, code)).filter((r) => r.status === 'open');
  return {
    open: open.length,
    reasons: [
      ...new Set(
        open
          .map((r) => r.reason ?? '')
          .filter(Boolean)
          .reverse(),
      ),
    ].slice(0, 5),
  };
}

/**
 * An editor's links (`owner`: `user:<id>`) that readers reported and nobody has reviewed yet, with their open
 * reports, most recently reported first (at most six: the links list's notice names five).
 */
export function listOwnReportedLinks(
  db: Db,
  owner: string,
): Promise<{ code: string; openReports: number }[]> {
  return listOpenReportsByOwner(db, owner, 6);
}

export interface ModerationDeps {
  sql: Sql;
  resolver: LinkResolver;
  workflows: WorkflowGateway;
  logger: Logger;
  /** Re-scans a destination whose reports are dismissed (the verdict it gets without them). */
  safety: SafetyScanner;
}

export interface ResolveReportsResult {
  code: string;
  action: ReportAction;
  /** Reports the decision took. */
  resolved: number;
  safety: SafetyVerdict;
  status: string;
}

/**
 * Applies a moderator's decision to a link's reports, audited (`reports.dismissed|confirmed|ignored`), then the
 * verdict that follows: confirm blocks the link (451) for as long as a confirmed report stands; dismiss lifts
 * what the reports caused and gives the link the verdict of a fresh scan without them (`unknown` at best when
 * Safe Browsing cannot answer); ignore changes nothing but the queue. A changed verdict is audited
 * (`link.safety_changed`), caches are refreshed and the sync workflow told. 409 when there is nothing to decide.
 */
export async function resolveReports(
  deps: ModerationDeps,
  input: { code: string; action: ReportAction; note?: string | undefined; actor: string },
): Promise<ResolveReportsResult> {
  const link = await getLinkByCode(deps.sql, input.code);
  if (!link || link.deletedAt) throw new NotFoundError(`No link ${input.code}.`);
  const transition = TRANSITIONS[input.action];
  const note = input.note || null;
  const resolved = await deps.sql.begin(async (tx) => {
    const n = await updateReportStatus(tx, {
      code: link.code,
      from: transition.from,
      to: transition.to,
      by: input.actor,
      note,
    });
    if (n === 0) {
      throw new ConflictError(
        `${link.code} has no ${transition.from.join(' or ')} reports to ${input.action}.`,
      );
    }
    await insertAuditEntry(tx, {
      code: link.code,
      actor: input.actor,
      action: `reports.${transition.to}`,
      after: { reports: n, action: input.action },
      reason: note,
    });
    return n;
  });

  let safety = link.safety;
  if (input.action !== 'ignore') {
    const counts = (await countReportsByCode(deps.sql, [link.code])).get(link.code) ?? {
      standing: 0,
      confirmed: 0,
    };
    const trusted = deps.safety.isTrusted?.(link.targetUrl) ?? false;
    const scan: ScanResult =
      input.action === 'confirm'
        ? toScanResult(link.targetUrl, [], true)
        : await deps.safety.scan(link.targetUrl);
    const result = withReaderReports(scan, counts, { trusted });
    // A scan that could not ask Safe Browsing may not call the link clean: `unknown` at best.
    const next: SafetyVerdict = result.complete
      ? result.verdict
      : worseVerdict<SafetyVerdict>('unknown', result.verdict);
    safety = await applyModeratedVerdict(deps, link, next, describeScanResult(result), {
      actor: input.actor,
      reason: `reports ${transition.to}${note ? `: ${note}` : ''}`,
      checked: result.complete,
    });
  }
  const after = await getLinkByCode(deps.sql, link.code);
  deps.logger.info(
    { code: link.code, action: input.action, reports: resolved, actor: input.actor, safety },
    'reader reports resolved',
  );
  return { code: link.code, action: input.action, resolved, safety, status: after?.status ?? link.status };
}

/** Stores a verdict decided by moderation when it differs (version-guarded, audited), then refreshes and syncs. */
async function applyModeratedVerdict(
  deps: ModerationDeps,
  link: LinkRow,
  safety: SafetyVerdict,
  reason: string | null,
  options: { actor: string; reason: string; checked: boolean },
): Promise<SafetyVerdict> {
  let current = link;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (current.safety === safety) return safety;
    const changed = await deps.sql.begin(async (tx) => {
      const updated = await updateLink(
        tx,
        current.code,
        { safety, safetyReason: reason, ...(options.checked ? { safetyCheckedAt: new Date() } : {}) },
        current.version,
      );
      if (!updated) return false;
      await insertAuditEntry(tx, {
        code: current.code,
        actor: options.actor,
        action: 'link.safety_changed',
        before: { safety: current.safety, reason: current.safetyReason },
        after: { safety, reason },
        reason: options.reason,
      });
      return true;
    });
    if (changed) {
      await refreshAfterChange(deps, current.code);
      await syncAfterChange(deps, current.code, `safety ${current.safety} → ${safety} (${options.reason})`);
      return safety;
    }
    const fresh = await getLinkByCode(deps.sql, current.code);
    if (!fresh) throw new NotFoundError(`No link ${current.code}.`);
    current = fresh;
  }
  throw new ConflictError(`${link.code} kept changing; try again.`);
}
