// What an archive backfill costs on Bitly: the dry run's count of the creates a real run would make, against the
// plan's monthly limit on new links (Bitly's own plan limits when they can be read, else BITLY_MONTHLY_CREATE_LIMIT),
// and whether archive links are kept in-house only (ARCHIVE_LINKS_IN_HOUSE: no create at all).

import type { Logger } from '../shared/logger.ts';
import type { BitlyProvider, MonthlyCreateLimit } from '../vendors/bitly.ts';
import { ProviderError } from '../vendors/short_link_provider.ts';

/** Bitly's part of an archive backfill (BackfillDeps.bitlyBudget), present when Bitly is configured. */
export interface BitlyBudgetDeps {
  /** ARCHIVE_LINKS_IN_HOUSE: backfilled links are never created on Bitly. */
  archiveLinksInHouse: boolean;
  /** BITLY_MONTHLY_CREATE_LIMIT: the plan's monthly link limit when Bitly's plan limits cannot be read. */
  monthlyCreateLimit: number | undefined;
  /** Bitly's own plan limit on new links, or null when it cannot be read; `run`: the backfill run asking. */
  readPlanLimit(run: string): Promise<MonthlyCreateLimit | null>;
}

/** The `bitly` member of a dry run's answer (integrations/wordpress/CONTRACT.md §1). */
export interface BitlyBudget {
  /** Bitly creates a real run of this batch would make (0 with archiveLinksInHouse). */
  creates: number;
  archiveLinksInHouse: boolean;
  /** The plan's monthly limit on new links; null: unknown (neither Bitly nor the setting says). */
  monthlyLimit: number | null;
  /** Used this month, and what is left of the limit: only when Bitly said (the setting knows no usage). */
  usedThisMonth: number | null;
  remaining: number | null;
  limitSource: 'bitly' | 'setting' | null;
}

/**
 * Reads the plan's monthly limit on new links from Bitly once per backfill run (a dry run's batches, sent one
 * after another, share the first answer; the last run's is kept); a refusal (a token that may not read its
 * organization) or an outage is logged and answered null, so a dry run never fails for it.
 */
export function createPlanLimitReader(
  bitly: Pick<BitlyProvider, 'getMonthlyCreateLimit'>,
  logger: Logger,
): (run: string) => Promise<MonthlyCreateLimit | null> {
  let cached: { run: string; value: Promise<MonthlyCreateLimit | null> } | null = null;
  return (run) => {
    if (cached?.run === run) return cached.value;
    const value = bitly.getMonthlyCreateLimit().catch((error: unknown) => {
      if (!(error instanceof ProviderError)) throw error;
      logger.warn(
        { err: error.message },
        "could not read Bitly's plan limits; using BITLY_MONTHLY_CREATE_LIMIT",
      );
      return null;
    });
    cached = { run, value };
    return value;
  };
}

/** The budget a dry run of backfill run `run` reports for `creates` would-be Bitly creates. */
export async function describeBitlyBudget(
  deps: BitlyBudgetDeps,
  run: string,
  creates: number,
): Promise<BitlyBudget> {
  const plan = await deps.readPlanLimit(run);
  const base = {
    creates: deps.archiveLinksInHouse ? 0 : creates,
    archiveLinksInHouse: deps.archiveLinksInHouse,
  };
  if (plan) {
    return {
      ...base,
      monthlyLimit: plan.limit,
      usedThisMonth: plan.used,
      remaining: Math.max(0, plan.limit - plan.used),
      limitSource: 'bitly',
    };
  }
  const setting = deps.monthlyCreateLimit;
  return {
    ...base,
    monthlyLimit: setting ?? null,
    usedThisMonth: null,
    remaining: null,
    limitSource: setting === undefined ? null : 'setting',
  };
}
