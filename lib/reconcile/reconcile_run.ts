// One reconciliation run (DESIGN.md, "Reconciliation"): Postgres ↔ Bitly (importing Bitly-only links) ↔ the
// serving store ↔ the expiry sweeper, Postgres winning. The run's position, input and summary; each leg is its own
// module (reconcile_bitly.ts, reconcile_serving_store.ts, reconcile_expiry_timers.ts, reconcile_wordpress.ts).

export type { ReconcileSideSummary };

import type { LinkResolver } from '../redirect/link_resolver.ts';
import type { ServingReplica } from '../redirect/serving_replica.ts';
import type { SafetyScanner } from '../safety/safety_scanner.ts';
import type { Logger } from '../shared/logger.ts';
import {
  countImportedLinks,
  countInhouseOnlyLinks,
  deleteMarks,
  type ReconcileSideSummary,
  summarizeMarks,
  summarizeMarksByDomain,
} from '../stores/reconcile_store.ts';
import type { Sql } from '../stores/sql.ts';
import type { CanonicalTargetPolicy } from '../targets/target_rule.ts';
import type { ExpirySweeper } from '../temporal/expiry_sweeper.ts';
import type { VendorDeps } from '../vendors/vendor_deps.ts';

export interface ReconcileDeps {
  sql: Sql;
  logger: Logger;
  resolver: LinkResolver;
  safety: SafetyScanner;
  /** Where targets may point: a Bitly-only link is imported only when its long URL obeys it. */
  targetPolicy: CanonicalTargetPolicy;
  vendors?: VendorDeps | undefined;
  /** The serving store read directly (absent: none configured, the leg is skipped). */
  servingStore?: ServingReplica | undefined;
  sweeper: ExpirySweeper;
}

/** Links read from Postgres per step of the passes over it. */
export const POSTGRES_CHUNK = 500;

/** Where a reconciliation run stands; carried across activity calls and continue-as-new. */
export interface ReconcilePosition {
  phase: 'bitly' | 'missing' | 'serving' | 'expiry' | 'wordpress' | 'done';
  cursor: string | null;
}

export interface ReconcileStepInput {
  runId: string;
  startedAtMs: number;
  position: ReconcilePosition;
  /** false: report drift only (a check); true: repair it, Postgres winning. */
  repair: boolean;
  /** Import links that exist only on Bitly (under their own back-half). */
  importExtra: boolean;
  /** Work per call: Bitly pages, or Postgres links. */
  budget: number;
}

/** What one step read and where the run stands after it. */
export interface ReconcileStepResult {
  position: ReconcilePosition;
  read: number;
}

/** The drift a run reports, per side (counted from reconcile_marks: exact across crashes). */
export type ReconcileSummary = {
  /**
   * `inhouseOnly` (with ARCHIVE_LINKS_IN_HOUSE): active archive links Bitly does not hold by design: not drift,
   * but codes Bitly cannot answer while it fronts the short domain.
   */
  bitly:
    | (ReconcileSideSummary & {
        imported: number;
        inhouseOnly?: number;
        /**
         * The same drift by short domain (stored name: '' for the default, the host name for another; ADR 0073):
         * which domain's Bitly copy disagreed. Domains with a mark only.
         */
        byDomain?: { domain: string; drift: ReconcileSideSummary['drift']; repaired: number }[];
      })
    | null;
  serving: ReconcileSideSummary | null;
  /** Expiry timers found missing (and re-armed when repairing). */
  expiry: ReconcileSideSummary;
  /** Post links against WordPress's listings (marks keyed `{site}:{postId}`); null when no post was read. */
  wordpress?: ReconcileSideSummary | null;
};

/** The audit reason of a run's imports: how its imports are counted. */
export function importReason(runId: string): string {
  return `import ${runId}`;
}

/** The run's counts, read from reconcile_marks and the audit log. */
export async function summarizeReconcileRun(
  deps: Pick<ReconcileDeps, 'sql' | 'vendors' | 'servingStore'>,
  runId: string,
): Promise<ReconcileSummary> {
  const bitly = deps.vendors?.bitly ? await summarizeMarks(deps.sql, runId, 'bitly') : null;
  return {
    bitly: bitly
      ? {
          ...bitly,
          imported: await countImportedLinks(deps.sql, importReason(runId)),
          byDomain: await summarizeMarksByDomain(deps.sql, runId, 'bitly'),
          ...(deps.vendors?.archiveLinksInHouse
            ? { inhouseOnly: await countInhouseOnlyLinks(deps.sql) }
            : {}),
        }
      : null,
    serving: deps.servingStore ? await summarizeMarks(deps.sql, runId, 'serving') : null,
    expiry: await summarizeMarks(deps.sql, runId, 'expiry'),
    wordpress: await summarizeWordPressRun(deps.sql, runId),
  };
}

/** Drops a finished run's scratch marks. */
export async function forgetReconcileRun(deps: { sql: Sql }, runId: string): Promise<void> {
  await deleteMarks(deps.sql, runId);
}

/** The WordPress side of a run, or null when it read no post (no site known). */
export async function summarizeWordPressRun(sql: Sql, runId: string): Promise<ReconcileSideSummary | null> {
  const summary = await summarizeMarks(sql, runId, 'wordpress');
  return summary.seen > 0 ? summary : null;
}
