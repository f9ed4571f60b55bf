// Bitly's own click counts, pulled into our store so the stats API and the link page can show them beside ours
// for the same days. Run by pullBitlyClicksWorkflow (its Schedule: BITLY_CLICKS_INTERVAL), a page of links per
// activity call, each link one GET /v4/bitlinks/{bitlink}/clicks?unit=day&units=N through the provider (its
// five-connection limiter). Progress is heartbeated after every few links, so a retried call resumes where the
// last one stopped; a rate limit ends the call early with how long to wait, and the workflow waits on a durable
// timer before going on from the same link.

import { TransientFailure } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { type TaskContext, throwIfCancelled } from '../shared/task_context.ts';
import type { Sql } from '../stores/sql.ts';
import { listVendorHeldLinks, upsertVendorDailyClicks } from '../stores/vendor_clicks_store.ts';
import type { BitlyProvider } from '../vendors/bitly.ts';
import { ProviderError } from '../vendors/short_link_provider.ts';

/** Links asked of Bitly at once (it allows five connections per IP; syncs may be using the others). */
const PULL_CONCURRENCY = 3;
/** Links read from Postgres per query. */
const PAGE_SIZE = 60;

export interface PullBitlyClicksDeps {
  sql: Sql;
  logger: Logger;
  /** The Bitly provider; absent when Bitly is not configured (a run then has nothing to do). */
  bitly: BitlyProvider | undefined;
}

/** What one call counted. */
export interface PullCounts {
  /** Links whose days were stored. */
  links: number;
  /** Days stored (each link's `days`, zero-click days included). */
  days: number;
  /** Links Bitly no longer has (404): left to reconciliation. */
  missing: number;
  /** Links Bitly refused to count (a 4xx other than rate limits): logged, skipped. */
  failed: number;
}

export interface PullBitlyClicksStepInput {
  /** The run's workflow ID (logs). */
  runId: string;
  /** The last code done ('' to start). */
  cursor: string;
  /** Days per link, ending today (UTC): 1 to 365. */
  days: number;
  /** Links to pull in this call before returning to the workflow. */
  maxLinks: number;
}

export interface PullBitlyClicksStepResult {
  cursor: string;
  counts: PullCounts;
  /** Every link is done (or Bitly is not configured, or its monthly quota is used up). */
  done: boolean;
  /** Bitly rate-limited us: wait this long, then call again from `cursor`. */
  waitMs?: number;
  /**
   * Why the run stopped early: `quota` (monthly API quota used up), `refused` (the plan has no click metrics, or
   * the token is refused), `disabled` (Bitly not configured).
   */
  stopped?: 'quota' | 'refused' | 'disabled';
}

/** A refusal that will meet every link alike: the plan lacks click metrics, or the token is refused. */
function refusesEveryLink(error: ProviderError): boolean {
  return (
    error.kind === 'plan_refused' ||
    (error.kind === 'rejected' && (error.details.status === 401 || error.details.status === 403))
  );
}

export function emptyPullCounts(): PullCounts {
  return { links: 0, days: 0, missing: 0, failed: 0 };
}

/**
 * Pulls Bitly's clicks per day for up to `maxLinks` links after `cursor`, a few at a time, storing each link's
 * days as soon as they arrive (a rewrite of the same days: repeating a link is harmless). Rate limits return
 * early with `waitMs`; Bitly being unavailable is a TransientFailure (the activity is retried and resumes from
 * its heartbeat); a link Bitly refuses is counted and skipped.
 */
export async function pullBitlyClicks(
  deps: PullBitlyClicksDeps,
  input: PullBitlyClicksStepInput,
  context: TaskContext,
): Promise<PullBitlyClicksStepResult> {
  const bitly = deps.bitly;
  if (!bitly) return { cursor: input.cursor, counts: emptyPullCounts(), done: true, stopped: 'disabled' };
  const resumed = context.resumed as { cursor: string; counts: PullCounts } | undefined;
  let cursor = resumed?.cursor ?? input.cursor;
  const counts = resumed?.counts ?? emptyPullCounts();
  if (resumed)
    deps.logger.info({ runId: input.runId, cursor }, 'Bitly clicks pull resumed from its heartbeat');
  let handled = counts.links + counts.missing + counts.failed;

  while (handled < input.maxLinks) {
    throwIfCancelled(context);
    const links = await listVendorHeldLinks(
      deps.sql,
      'bitly',
      cursor,
      Math.min(PAGE_SIZE, input.maxLinks - handled),
    );
    if (links.length === 0) return { cursor, counts, done: true };
    for (let i = 0; i < links.length; i += PULL_CONCURRENCY) {
      const group = links.slice(i, i + PULL_CONCURRENCY);
      const fetchedAt = new Date();
      const outcomes = await Promise.allSettled(
        group.map((link) => bitly.getClicksByDay(link.vendorId, { days: input.days })),
      );
      // Store what arrived (even when another link of the group hit a limit: a rewrite later is harmless).
      let stop: ProviderError | null = null;
      for (const [j, outcome] of outcomes.entries()) {
        if (outcome.status === 'fulfilled') {
          if (outcome.value === null) continue;
          await upsertVendorDailyClicks(deps.sql, {
            code: group[j]!.code,
            vendor: 'bitly',
            days: outcome.value.days.map((d) => ({ day: d.date, clicks: d.clicks })),
            fetchedAt,
          });
        } else if (!(outcome.reason instanceof ProviderError)) {
          throw outcome.reason;
        } else if (outcome.reason.retryable || refusesEveryLink(outcome.reason)) {
          stop ??= outcome.reason;
        }
      }
      if (stop) {
        // The whole group is asked again after the wait (what did arrive was stored, and is simply rewritten).
        context.heartbeat({ cursor, counts });
        if (stop.kind === 'quota_exceeded') {
          deps.logger.warn(
            { runId: input.runId, cursor, err: stop.message },
            "Bitly's monthly API quota is used up; the next scheduled pull tries again",
          );
          return { cursor, counts, done: true, stopped: 'quota' };
        }
        if (refusesEveryLink(stop)) {
          deps.logger.error(
            { runId: input.runId, cursor, err: stop.message },
            'Bitly refuses to give click counts (plan or credentials); the pull stops until the next run',
          );
          return { cursor, counts, done: true, stopped: 'refused' };
        }
        if (stop.kind === 'rate_limited') {
          return { cursor, counts, done: false, waitMs: stop.details.retryAfterMs ?? 60_000 };
        }
        throw new TransientFailure(stop.message, 'VendorUnavailable', stop.details.retryAfterMs);
      }
      for (const [j, outcome] of outcomes.entries()) {
        const link = group[j]!;
        if (outcome.status === 'rejected') {
          counts.failed++;
          deps.logger.warn(
            { runId: input.runId, code: link.code, err: (outcome.reason as Error).message },
            'Bitly refused to count a link; skipped',
          );
        } else if (outcome.value === null) {
          counts.missing++;
        } else {
          counts.links++;
          counts.days += outcome.value.days.length;
        }
        handled++;
        cursor = link.code;
      }
      context.heartbeat({ cursor, counts });
    }
  }
  return { cursor, counts, done: false };
}
