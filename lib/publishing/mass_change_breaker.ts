// The breaker on mass change by WordPress (ADR 0057): no automatic WordPress path (post events, the WordPress
// leg of reconciliation) retargets or makes gone more than max(share × the site's links, min) of a site's links
// in any hour without an admin's approval. What goes beyond waits in a hold (wordpress_breaker_holds) with its
// counts and a sample; approving applies it (each change only while the link is as it was read), discarding
// forgets it. Restores, new links and re-binds by a post's claim are not mass damage and are not counted.

import { firstSafety } from '../links/new_post_link.ts';
import { refreshLinks } from '../propagation/refresh_links.ts';
import type { LinkResolver } from '../redirect/link_resolver.ts';
import type { SafetyScanner } from '../safety/safety_scanner.ts';
import { ConflictError, NotFoundError } from '../shared/errors.ts';
import { insertAuditEntries } from '../stores/backfill_store.ts';
import {
  countHeldChanges,
  countSiteLinks,
  countWaitingHolds,
  getHold,
  getHoldForUpdate,
  type HeldChangeRow,
  type HoldRow,
  insertHeldChanges,
  insertSpend,
  listHeldChanges,
  listHolds,
  lockSiteBudget,
  sumSpentLastHour,
  updateHeldChangesState,
  updateHoldDecided,
  upsertHold,
} from '../stores/breaker_store.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import type { Db, Sql } from '../stores/sql.ts';
import { type LinkBatchChange, updateLinksBatch } from '../stores/wordpress_reconcile_store.ts';
import { newTargetProblem } from '../targets/new_target_problem.ts';
import type { CanonicalTargetPolicy } from '../targets/target_rule.ts';
import type { SyncQueueKicker } from '../temporal/link_sync.ts';

/** WORDPRESS_BREAKER_SHARE and WORDPRESS_BREAKER_MIN. */
export interface BreakerSettings {
  share: number;
  min: number;
}

export const DEFAULT_BREAKER: BreakerSettings = { share: 0.02, min: 50 };

/** How many of a site's links its WordPress paths may retarget or make gone in an hour. */
export function getBreakerBudget(settings: BreakerSettings, siteLinks: number): number {
  return Math.max(Math.ceil(settings.share * siteLinks), settings.min);
}

export interface BudgetState {
  budget: number;
  siteLinks: number;
  /** What is left of this hour's budget (0 or more). */
  remaining: number;
}

/** Serialises spending of a site's budget within a transaction (post events run in parallel workflows). */
export function lockBudget(tx: Db, site: string): Promise<void> {
  return lockSiteBudget(tx, site);
}

export async function readBudget(
  db: Db,
  site: string,
  settings: BreakerSettings = DEFAULT_BREAKER,
): Promise<BudgetState> {
  const [siteLinks, spent] = await Promise.all([countSiteLinks(db, site), sumSpentLastHour(db, site)]);
  const budget = getBreakerBudget(settings, siteLinks);
  return { budget, siteLinks, remaining: Math.max(0, budget - spent) };
}

/** Counts changes a WordPress path applied against the site's hourly budget. */
export function spendBudget(db: Db, site: string, changes: number): Promise<void> {
  return insertSpend(db, site, changes);
}

/** Puts changes in the run's (or the site's post-event) hold; returns the hold. */
export async function holdChanges(
  db: Db,
  hold: { site: string; source: 'reconcile' | 'events'; runId: string | null; workflowId: string | null },
  budget: BudgetState,
  changes: HeldChangeRow[],
): Promise<HoldRow> {
  const row = await upsertHold(db, { ...hold, budget: budget.budget, siteLinks: budget.siteLinks });
  await insertHeldChanges(db, row.id, changes);
  return row;
}

/** The hold of a reconciliation run, if its breaker tripped. */
export async function findRunHold(db: Db, site: string, runId: string): Promise<HoldRow | null> {
  const rows = await listHolds(db, { limit: 1000, status: 'waiting' });
  return rows.find((r) => r.source === 'reconcile' && r.runId === runId && r.site === site) ?? null;
}

/** Samples shown with a hold. */
const SAMPLE_SIZE = 20;

export interface HoldJson {
  id: number;
  site: string;
  source: 'reconcile' | 'events';
  runId: string | null;
  status: string;
  budget: number;
  siteLinks: number;
  counts: Record<string, Record<string, number>>;
  sample: HeldChangeRow[];
  decidedBy: string | null;
  decidedAt: string | null;
  createdAt: string;
}

export async function describeHold(db: Db, hold: HoldRow): Promise<HoldJson> {
  const [counts, sample] = await Promise.all([
    countHeldChanges(db, hold.id),
    listHeldChanges(db, hold.id, { limit: SAMPLE_SIZE }),
  ]);
  return {
    id: hold.id,
    site: hold.site,
    source: hold.source,
    runId: hold.runId,
    status: hold.status,
    budget: hold.budget,
    siteLinks: hold.siteLinks,
    counts,
    sample,
    decidedBy: hold.decidedBy,
    decidedAt: hold.decidedAt?.toISOString() ?? null,
    createdAt: hold.createdAt.toISOString(),
  };
}

export async function listBreakerHolds(
  db: Db,
  options: { status?: 'waiting' | 'applied' | 'discarded' | undefined; limit?: number },
): Promise<HoldJson[]> {
  const holds = await listHolds(db, { status: options.status, limit: options.limit ?? 50 });
  return Promise.all(holds.map((h) => describeHold(db, h)));
}

export async function getBreakerHold(db: Db, id: number): Promise<HoldRow> {
  const hold = await getHold(db, id);
  if (!hold) throw new NotFoundError(`No breaker hold ${id}.`);
  return hold;
}

export interface HoldDecisionDeps {
  sql: Sql;
  resolver: LinkResolver;
  safety: SafetyScanner;
  targetPolicy: CanonicalTargetPolicy;
  queue: SyncQueueKicker;
}

/** Held changes applied per transaction. */
const APPLY_BATCH = 1000;

/**
 * Applies (approve) or forgets (discard) a waiting hold. Each held change applies only while its link still has
 * the version it was read at (nobody changed it since); a new destination passes the target rules and the
 * safety scan first, as in reconciliation. Idempotent: a decided hold is left as it is.
 */
export async function decideBreakerHold(
  deps: HoldDecisionDeps,
  input: { holdId: number; approve: boolean; by: string },
): Promise<{ status: string; applied: number; skipped: number }> {
  const hold = await getBreakerHold(deps.sql, input.holdId);
  if (hold.status !== 'waiting') return { status: hold.status, applied: 0, skipped: 0 };
  if (!input.approve) {
    await deps.sql.begin(async (tx) => {
      if ((await getHoldForUpdate(tx, hold.id))?.status !== 'waiting') return;
      await updateHoldDecided(tx, hold.id, 'discarded', input.by);
    });
    return { status: 'discarded', applied: 0, skipped: 0 };
  }
  const actor = input.by;
  const reason = `breaker hold ${hold.id} approved (${hold.source} of ${hold.site})`;
  let applied = 0;
  let skipped = 0;
  for (;;) {
    const batch = await listHeldChanges(deps.sql, hold.id, { state: 'held', limit: APPLY_BATCH });
    if (batch.length === 0) break;
    const retargets = batch.filter(
      (c) => c.change === 'retarget' && c.afterUrl && !newTargetProblem(c.afterUrl, deps.targetPolicy),
    );
    const scans = retargets.length > 0 ? await deps.safety.scanMany(retargets.map((c) => c.afterUrl!)) : [];
    const scanOf = new Map(retargets.map((c, i) => [c.code, scans[i]!]));
    const checkedAt = new Date();
    const codes = await deps.sql.begin(async (tx) => {
      const changes: LinkBatchChange[] = [];
      for (const c of batch) {
        if (c.change === 'gone') {
          changes.push({ code: c.code, status: 'gone', expectedVersion: c.expectedVersion });
          continue;
        }
        const scan = scanOf.get(c.code);
        if (!scan || scan.verdict === 'blocked') continue;
        changes.push({
          code: c.code,
          targetUrl: c.afterUrl!,
          ...(c.beforeStatus === 'gone' ? { status: 'active' } : {}),
          expectedVersion: c.expectedVersion,
          ...firstSafety(scan, checkedAt),
        });
      }
      const rows = await updateLinksBatch(tx, changes);
      const done = new Set(rows.map((r) => r.code));
      const byCode = new Map(batch.map((c) => [c.code, c]));
      await insertAuditEntries(
        tx,
        rows.map((r) => {
          const c = byCode.get(r.code)!;
          return c.change === 'gone'
            ? {
                code: r.code,
                actor,
                action: 'link.status_changed',
                before: { status: c.beforeStatus },
                after: { status: 'gone' },
                reason,
              }
            : {
                code: r.code,
                actor,
                action: 'link.retargeted',
                before: { url: c.beforeUrl },
                after: { url: c.afterUrl },
                reason,
              };
        }),
      );
      await updateHeldChangesState(tx, hold.id, [...done], 'applied');
      await updateHeldChangesState(
        tx,
        hold.id,
        batch.filter((c) => !done.has(c.code)).map((c) => c.code),
        'skipped',
      );
      await enqueueLinkSyncs(tx, [...done], reason);
      applied += done.size;
      skipped += batch.length - done.size;
      return [...done];
    });
    if (codes.length > 0) {
      await refreshLinks(deps.resolver, codes);
      await deps.queue.kickSyncQueue(reason);
    }
  }
  await deps.sql.begin(async (tx) => {
    const current = await getHoldForUpdate(tx, hold.id);
    if (current?.status !== 'waiting')
      throw new ConflictError(`Breaker hold ${hold.id} was decided meanwhile.`);
    await updateHoldDecided(tx, hold.id, 'applied', input.by);
  });
  return { status: 'applied', applied, skipped };
}

/** Holds waiting for a decision (the `lifeline_wordpress_breaker_waiting` gauge). */
export function countWaitingBreakerHolds(db: Db): Promise<number> {
  return countWaitingHolds(db);
}
