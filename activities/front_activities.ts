import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { type Front, switchActiveFront } from '../lib/failover/active_front.ts';
import type { FrontDeps } from '../lib/failover/front_deps.ts';
import { decideRedirect, type RedirectDecision } from '../lib/redirect/redirect_policy.ts';
import { toServingRecord } from '../lib/redirect/serving_record.ts';
import { forEachConcurrently } from '../lib/shared/concurrency.ts';
import type { LinkRow } from '../lib/stores/link_rows.ts';
import { listLinksAfter } from '../lib/stores/reconcile_store.ts';
import type { ActivityDeps } from './deps.ts';

/** Links verified per chunk (one heartbeat each). */
const VERIFY_CHUNK = 500;
/** Resolver lookups in flight during verification. */
const VERIFY_CONCURRENCY = 16;
/** Mismatches kept in a report (the count is exact; these are examples). */
const MISMATCH_EXAMPLES = 20;

/** A code whose in-house answer differs from what Postgres says it must be. */
export interface AnswerMismatch {
  code: string;
  expected: string;
  actual: string;
}

export interface VerifyProgress {
  cursor: string;
  checked: number;
  mismatched: number;
  examples: AnswerMismatch[];
}

/** "301 https://…", "410", "451": what a reader gets, in one comparable string. */
function describeAnswer(decision: RedirectDecision): string {
  return decision.location ? `${decision.status} ${decision.location}` : String(decision.status);
}

/** Failover activities: verification, the switch of the active front, DNS, and the public check. */
export function createFrontActivities(deps: ActivityDeps) {
  function front(): FrontDeps {
    if (!deps.front)
      throw ApplicationFailure.nonRetryable('failover is not configured on this worker', 'BadInput');
    return deps.front;
  }

  function expectedAnswer(row: LinkRow, now: number): RedirectDecision {
    return decideRedirect(row.code, toServingRecord(row), now, front().redirect);
  }

  return {
    /**
     * Proves the in-house resolver answers every active code as Postgres says it must (status and Location),
     * asking it code by code (its serving store and caches, exactly as the hot path does), in chunks of 500
     * from `progress.cursor`, heartbeating after each chunk. Read-only; a retry resumes at the heartbeat.
     */
    async verifyInhouseAnswers(input: {
      progress: VerifyProgress;
      budget: number;
    }): Promise<{ progress: VerifyProgress; done: boolean }> {
      const ctx = Context.current();
      const progress: VerifyProgress = structuredClone(
        (ctx.info.heartbeatDetails as VerifyProgress | undefined) ?? input.progress,
      );
      let read = 0;
      while (read < input.budget) {
        if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
        const rows = await listLinksAfter(deps.sql, {
          cursor: progress.cursor,
          limit: Math.min(VERIFY_CHUNK, input.budget - read),
          statuses: ['active'],
        });
        if (rows.length === 0) return { progress, done: true };
        const now = Date.now();
        await forEachConcurrently(rows, VERIFY_CONCURRENCY, async (row) => {
          const expected = describeAnswer(expectedAnswer(row, now));
          const record = await deps.resolver.resolve(row.code);
          const actual = describeAnswer(decideRedirect(row.code, record, now, front().redirect));
          if (actual !== expected) {
            progress.mismatched++;
            if (progress.examples.length < MISMATCH_EXAMPLES)
              progress.examples.push({ code: row.code, expected, actual });
          }
        });
        progress.checked += rows.length;
        progress.cursor = rows.at(-1)!.code;
        read += rows.length;
        ctx.heartbeat(progress);
      }
      return { progress, done: false };
    },

    /** Makes `to` the active front (once per run; audited). */
    async switchFront(input: {
      to: Front;
      workflowId: string;
    }): Promise<{ switched: boolean; since: string | null }> {
      const { front: now, switched } = await switchActiveFront(deps.sql, input);
      deps.logger.warn({ to: input.to, workflowId: input.workflowId, switched }, 'active front switched');
      return { switched, since: now.since };
    },

    /** Asks the configured DNS adapter to point the short domain at `to`; false when none is configured. */
    async pointDnsAt(input: { to: Front; workflowId: string }): Promise<{ adapter: boolean }> {
      const adapter = front().dnsAdapter;
      if (!adapter) return { adapter: false };
      await adapter.pointShortDomainAt(input.to, { workflowId: input.workflowId });
      return { adapter: true };
    },

    /**
     * Checks from the outside that readers now reach `to`: through the public short base URL, a sample of
     * active codes answers as Postgres says, and `/healthz` is (in-house) or is not (Bitly) our web tier.
     * Fails (retryably) until DNS has followed; the workflow's retry policy bounds how long it waits.
     */
    async verifyPublicFront(input: { to: Front; sample: number }): Promise<{ checked: number }> {
      const { shortBaseUrl } = front();
      const health = await fetch(`${shortBaseUrl}/healthz`, { signal: AbortSignal.timeout(5_000) }).catch(
        () => null,
      );
      const ours =
        health?.status === 200 &&
        ((await health.json().catch(() => ({}))) as { status?: string }).status === 'ok';
      if ((input.to === 'inhouse') !== ours) {
        throw ApplicationFailure.retryable(
          `the short domain is not answered by ${input.to === 'inhouse' ? 'our web tier' : 'Bitly'} yet`,
          'DnsNotYet',
        );
      }
      const rows = await deps.sql<LinkRow[]>`
        SELECT code, target_url AS "targetUrl", status, safety, redirect_status AS "redirectStatus",
               expires_at AS "expiresAt", expired_url AS "expiredUrl", version
        FROM links WHERE status = 'active' AND deleted_at IS NULL ORDER BY random() LIMIT ${input.sample}`;
      const now = Date.now();
      for (const row of rows) {
        const res = await fetch(`${shortBaseUrl}/${row.code}`, {
          redirect: 'manual',
          signal: AbortSignal.timeout(5_000),
        });
        await res.body?.cancel();
        const expected = expectedAnswer(row, now);
        const actual = res.headers.get('Location')
          ? `${res.status} ${res.headers.get('Location')}`
          : String(res.status);
        if (actual !== describeAnswer(expected)) {
          throw ApplicationFailure.retryable(
            `${row.code} answers ${actual} through ${shortBaseUrl}, expected ${describeAnswer(expected)}`,
            'DnsNotYet',
          );
        }
      }
      return { checked: rows.length };
    },
  };
}
