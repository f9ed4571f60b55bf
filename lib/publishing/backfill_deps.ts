// What an archive backfill batch works with: stores, safety, adoptable hosts, Bitly's budget, the run's workflow.

import type { LinkResolver } from '../redirect/link_resolver.ts';
import type { SafetyScanner } from '../safety/safety_scanner.ts';
import type { Logger } from '../shared/logger.ts';
import type { Sql } from '../stores/sql.ts';
import type { CanonicalTargetPolicy } from '../targets/target_rule.ts';
import type { BitlyBudgetDeps } from './bitly_budget.ts';

export interface BackfillDeps {
  sql: Sql;
  logger: Logger;
  codeLength: number;
  safety: SafetyScanner;
  targetPolicy: CanonicalTargetPolicy;
  /** Lower-case hosts whose back-halves a post may adopt: BITLY_DOMAIN and the short host. */
  adoptableHosts: readonly string[];
  /** The Bitly branded domain, when Bitly is configured: an adopted back-half there is found on Bitly as ours. */
  bitlyDomain?: string | undefined;
  /** Bitly's part (when Bitly is configured): the dry run's budget, and archive links kept in-house only. */
  bitlyBudget?: BitlyBudgetDeps | undefined;
  /** ARCHIVE_MODE is not off: minted links are queued for their archived copy (ADR 0076; our own hosts skipped). */
  archiveCopies?: boolean | undefined;
  /** The web tier's resolver: a batch's new links go to the serving store before the 202 (best effort). */
  resolver?: LinkResolver | undefined;
  now?: () => Date;
}

/** Tells the run's workflow (`backfill:{site}:{run}`) a batch was written; throws when Temporal cannot take it. */
export interface BackfillSignaller {
  signalBackfill(input: { site: string; runId: string; batch: number; final: boolean }): Promise<{
    workflowId: string;
  }>;
  /** Starts the site's WordPress reconciliation (a new installation switched it into migration mode). */
  requestWordPressReconcile?(input: { site: string; reason: string }): Promise<unknown>;
}
