import { type SyncState, syncAfterChange } from '../propagation/sync_after_change.ts';
import type { SafetyScanner } from '../safety/safety_scanner.ts';
import { scanChangedTargets } from '../safety/scan_new_targets.ts';
import { NotFoundError, PreconditionFailedError, ValidationError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import type { Logger } from '../shared/logger.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { getLinkByCode, getLinkByCodeForUpdate, type LinkChanges, updateLink } from '../stores/link_store.ts';
import type { Sql } from '../stores/sql.ts';
import { linkEventData, recordWebhookEvent } from '../stores/webhook_outbox_store.ts';
import { type CanonicalTargetPolicy, targetRuleProblem } from '../targets/target_rule.ts';
import type { LinkSyncRequester } from '../temporal/link_sync.ts';
import { ruleTargetProblems } from './create_link.ts';
import { getDedupeKey } from './dedupe_key.ts';
import type { CreateLinkInput, UpdateLinkInput } from './link.ts';
import { assertMayChangePostLink } from './post_link_rules.ts';
import { sameRules, toStoredRules } from './routing_rules.ts';

export interface EditLinkDeps {
  sql: Sql;
  targetPolicy: CanonicalTargetPolicy;
  /** Scans a new destination or fallback (blocked → 422; the verdict of a new url is stored with it). */
  safety?: SafetyScanner;
  /** Carries the edit to every copy (the web tier's gateway, or an activity's client). */
  workflows: LinkSyncRequester;
  logger: Logger;
  now?: () => Date;
}

export interface EditLinkResult {
  link: LinkRow;
  /** False when the input matched the link already: nothing was written, audited or synced. */
  changed: boolean;
  /** Null when nothing changed. */
  sync: SyncState | null;
}

type Snapshot = Record<string, unknown>;

/** UTM values as the audit log and the dedupe key hold them: set keys only, null when none is set. */
function compactUtm(utm: {
  campaign: string | null;
  source: string | null;
  medium: string | null;
}): { campaign?: string; source?: string; medium?: string } | null {
  const out = Object.fromEntries(Object.entries(utm).filter(([, v]) => v !== null)) as {
    campaign?: string;
    source?: string;
    medium?: string;
  };
  return Object.keys(out).length > 0 ? out : null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const sameTags = (a: string[], b: string[]) => a.length === b.length && a.every((t, i) => t === b[i]);

/**
 * Applies an edit (retarget, title, expiry, fallback, redirect status, tags, UTM, status active|gone) in one transaction
 * with its audit entry (actor, before, after, reason), then tells the sync workflow so caches, the serving
 * store, vendors and the expiry sweeper follow. `expectedVersion` (If-Match) refuses to overwrite someone
 * else's newer edit.
 */
export async function editLink(
  deps: EditLinkDeps,
  code: string,
  input: UpdateLinkInput,
  actor: string,
  options: { expectedVersion?: number; mayManagePostLinks?: boolean } = {},
): Promise<EditLinkResult> {
  const targetErrors: { path: string; message: string }[] = [];
  for (const [path, value] of [
    ['url', input.url],
    ['expiredUrl', input.expiredUrl],
  ] as const) {
    const problem = value ? targetRuleProblem(value, deps.targetPolicy) : null;
    if (problem) targetErrors.push({ path, message: problem });
  }
  targetErrors.push(...ruleTargetProblems(input.rules, deps.targetPolicy));
  if (targetErrors.length > 0) throw new ValidationError(targetErrors, 'The target is not allowed.');
  const now = deps.now?.() ?? new Date();
  // A change of the url or the rules rescans the link's whole destination set (its url and every rule target):
  // the verdict covers them together (ADR 0080). What is read here is compared again under the row lock below.
  const current =
    deps.safety && (input.url !== undefined || input.rules !== undefined)
      ? await getLinkByCode(deps.sql, code)
      : null;
  const scannedUrl = input.url ?? current?.targetUrl;
  const scannedRules =
    input.rules !== undefined ? toStoredRules(input.rules) : (current?.routingRules ?? null);
  // Outside the transaction: the scan may call Safe Browsing.
  const scanned = deps.safety
    ? await scanChangedTargets(
        deps.safety,
        { url: scannedUrl, expiredUrl: input.expiredUrl, rules: scannedRules },
        now,
      )
    : null;
  const result = await deps.sql.begin(async (tx) => {
    const row = await getLinkByCodeForUpdate(tx, code);
    if (!row || row.deletedAt) throw new NotFoundError(`No link ${code}.`);
    // WordPress decides where a post-bound link sends readers; only administrators may override it. Only
    // fields that differ count, so a form or client sending the stored values back is not refused.
    const differs = <T>(value: T | undefined, stored: T) =>
      value !== undefined && value !== stored ? value : undefined;
    assertMayChangePostLink(
      row,
      {
        url: differs(input.url, row.targetUrl),
        status: differs(input.status, row.status),
        expiresAt:
          input.expiresAt === undefined
            ? undefined
            : differs(iso(input.expiresAt === null ? null : new Date(input.expiresAt)), iso(row.expiresAt)),
        expiredUrl: differs(input.expiredUrl, row.expiredUrl),
        redirectStatus: differs(input.redirectStatus, row.redirectStatus),
        rules:
          input.rules === undefined || sameRules(toStoredRules(input.rules), row.routingRules)
            ? undefined
            : input.rules,
      },
      options.mayManagePostLinks === true,
    );
    if (options.expectedVersion !== undefined && options.expectedVersion !== row.version) {
      throw new PreconditionFailedError(
        `The link changed since version ${options.expectedVersion} (it is now at ${row.version}); reload and retry.`,
      );
    }
    const changes: LinkChanges = {};
    const before: Snapshot = {};
    const after: Snapshot = {};
    const errors: { path: string; message: string }[] = [];

    const nextRules = input.rules === undefined ? row.routingRules : toStoredRules(input.rules);
    const rulesChanged = input.rules !== undefined && !sameRules(nextRules, row.routingRules);
    if (rulesChanged) {
      changes.routingRules = nextRules;
      before.rules = row.routingRules;
      after.rules = nextRules;
    }
    const urlChanged = input.url !== undefined && input.url !== row.targetUrl;
    if (urlChanged) {
      changes.targetUrl = input.url;
      before.url = row.targetUrl;
      after.url = input.url;
    }
    // The scan covered the destinations the link will have (unless another edit came between the read and the lock).
    const scanCovers =
      scanned !== null && (input.url ?? row.targetUrl) === scannedUrl && sameRules(nextRules, scannedRules);
    if (urlChanged || (rulesChanged && scanCovers)) {
      if (scanned && scanCovers) {
        // The new destination's own verdict (the old one was about the old destination).
        changes.safety = scanned.safety;
        changes.safetyReason = scanned.safetyReason;
        changes.safetyCheckedAt = scanned.safetyCheckedAt;
        if (scanned.safety !== row.safety) {
          before.safety = row.safety;
          after.safety = scanned.safety;
        }
      } else if (row.safety !== 'blocked' && row.safety !== 'unknown') {
        // The verdict was about the old destination; a block stays until a scan clears the new one.
        changes.safety = 'unknown';
        changes.safetyReason = null;
        changes.safetyCheckedAt = null;
        before.safety = row.safety;
        after.safety = 'unknown';
      }
    }
    let expiresAt = row.expiresAt;
    if (input.expiresAt !== undefined) {
      const next = input.expiresAt === null ? null : new Date(input.expiresAt);
      if (next && next.getTime() <= now.getTime()) {
        errors.push({ path: 'expiresAt', message: fieldProblem('future') });
      } else if (iso(next) !== iso(row.expiresAt)) {
        changes.expiresAt = next;
        before.expiresAt = iso(row.expiresAt);
        after.expiresAt = iso(next);
        expiresAt = next;
      }
    }
    if (input.expiredUrl !== undefined && input.expiredUrl !== row.expiredUrl) {
      changes.expiredUrl = input.expiredUrl;
      before.expiredUrl = row.expiredUrl;
      after.expiredUrl = input.expiredUrl;
    }
    if (input.redirectStatus !== undefined && input.redirectStatus !== row.redirectStatus) {
      changes.redirectStatus = input.redirectStatus;
      before.redirectStatus = row.redirectStatus;
      after.redirectStatus = input.redirectStatus;
    }
    if (input.title !== undefined && input.title !== row.title) {
      changes.title = input.title;
      before.title = row.title;
      after.title = input.title;
    }
    if (input.tags !== undefined) {
      const tags = [...new Set(input.tags)];
      if (!sameTags(tags, row.tags)) {
        changes.tags = tags;
        before.tags = row.tags;
        after.tags = tags;
      }
    }
    let utm = { campaign: row.utmCampaign, source: row.utmSource, medium: row.utmMedium };
    if (input.utm !== undefined) {
      // A merge patch: a value sets, null clears, an absent key stays; `utm: null` clears all three.
      const patch = input.utm;
      const pick = (key: 'campaign' | 'source' | 'medium') =>
        patch === null ? null : patch[key] === undefined ? utm[key] : (patch[key] ?? null);
      const next = { campaign: pick('campaign'), source: pick('source'), medium: pick('medium') };
      if (next.campaign !== utm.campaign || next.source !== utm.source || next.medium !== utm.medium) {
        changes.utmCampaign = next.campaign;
        changes.utmSource = next.source;
        changes.utmMedium = next.medium;
        before.utm = compactUtm(utm);
        after.utm = compactUtm(next);
        utm = next;
      }
    }
    // Moving the expiry of an expired link into the future (or clearing it) brings the link back.
    let status = input.status;
    if (status === undefined && row.status === 'expired' && changes.expiresAt !== undefined)
      status = 'active';
    if (status !== undefined && status !== row.status) {
      if (status === 'active' && row.status === 'blocked') {
        errors.push({
          path: 'status',
          message: fieldProblem('stillBlocked'),
        });
      } else if (status === 'active' && row.status === 'pending') {
        errors.push({ path: 'status', message: fieldProblem('stillMinting') });
      } else if (status === 'active' && expiresAt && expiresAt.getTime() <= now.getTime()) {
        errors.push({
          path: 'expiresAt',
          message: fieldProblem('expiryPast'),
        });
      } else {
        changes.status = status;
        before.status = row.status;
        after.status = status;
      }
    }
    if (errors.length > 0) throw new ValidationError(errors);
    if (Object.keys(changes).length === 0) return { link: row, changed: false };

    if (row.dedupeKey !== null) {
      // Keep "same owner + same url + same options" pointing at what the link now is.
      const expiredUrl = changes.expiredUrl !== undefined ? changes.expiredUrl : row.expiredUrl;
      const redirectStatus =
        changes.redirectStatus !== undefined ? changes.redirectStatus : row.redirectStatus;
      const title = changes.title !== undefined ? changes.title : row.title;
      const ownUtm = compactUtm(utm);
      changes.dedupeKey = await getDedupeKey(
        {
          url: changes.targetUrl ?? row.targetUrl,
          ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
          ...(expiredUrl ? { expiredUrl } : {}),
          ...(redirectStatus ? { redirectStatus: redirectStatus as CreateLinkInput['redirectStatus'] } : {}),
          tags: changes.tags ?? row.tags,
          ...(row.site !== null && row.postId !== null ? { site: row.site, postId: row.postId } : {}),
          ...(title !== null ? { title } : {}),
          ...(ownUtm ? { utm: ownUtm } : {}),
          ...(nextRules ? { rules: nextRules } : {}),
        },
        row.domain,
      );
    }
    const link = await updateLink(tx, code, changes);
    if (!link) throw new NotFoundError(`No link ${code}.`);
    const action =
      'url' in after || 'rules' in after
        ? 'link.retargeted'
        : Object.keys(after).join() === 'status'
          ? 'link.status_changed'
          : 'link.updated';
    await insertAuditEntry(tx, { code, actor, action, before, after, reason: input.reason || null });
    await recordWebhookEvent(tx, 'link.updated', { ...linkEventData(link), changed: Object.keys(after) });
    return { link, changed: true, action };
  });
  if (!result.changed) return { link: result.link, changed: false, sync: null };
  const sync = await syncAfterChange(deps, code, `${result.action} by ${actor}`);
  return { link: result.link, changed: true, sync };
}
