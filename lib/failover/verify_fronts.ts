// The failover's proofs (DESIGN.md, "Vendor failover"): before a switch, the in-house resolver answers every
// active code as Postgres says it must; after it, readers reaching the short domain get those answers.
import type { LinkResolver } from '../redirect/link_resolver.ts';
import { decideRedirect, type RedirectDecision } from '../redirect/redirect_policy.ts';
import { toServingRecord } from '../redirect/serving_record.ts';
import { forEachConcurrently } from '../shared/concurrency.ts';
import { PermanentFailure, TransientFailure } from '../shared/errors.ts';
import { DEFAULT_DOMAIN, keyCode, shortBaseUrlOf } from '../shared/link_key.ts';
import type { Logger } from '../shared/logger.ts';
import { type TaskContext, throwIfCancelled } from '../shared/task_context.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { listRandomActiveLinks } from '../stores/link_store.ts';
import { listLinksAfter } from '../stores/reconcile_store.ts';
import type { Sql } from '../stores/sql.ts';
import { type Front, switchActiveFront } from './active_front.ts';
import type { FrontDeps } from './front_deps.ts';

export interface FailoverDeps {
  sql: Sql;
  logger: Logger;
  resolver: LinkResolver;
  /** Absent: failover is not configured on this worker, and its steps refuse to run. */
  front?: FrontDeps | undefined;
}

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

function requireFront(deps: FailoverDeps): FrontDeps {
  if (!deps.front) throw new PermanentFailure('failover is not configured on this worker');
  return deps.front;
}

/** "301 https://…", "410", "451": what a reader gets, in one comparable string. */
function describeAnswer(decision: RedirectDecision): string {
  return decision.location ? `${decision.status} ${decision.location}` : String(decision.status);
}

function expectedAnswer(front: FrontDeps, row: LinkRow, now: number): RedirectDecision {
  return decideRedirect(row.code, toServingRecord(row), now, front.redirect);
}

/**
 * Proves the in-house resolver answers every active code as Postgres says it must (status and Location),
 * asking it code by code (its serving store and caches, exactly as the hot path does), in chunks of 500 from
 * `progress.cursor`, heartbeating after each chunk. Read-only; a retry resumes at the heartbeat.
 */
export async function verifyInhouseAnswers(
  deps: FailoverDeps,
  input: { progress: VerifyProgress; budget: number; domain?: string },
  context: TaskContext,
): Promise<{ progress: VerifyProgress; done: boolean }> {
  const front = requireFront(deps);
  const progress: VerifyProgress = structuredClone(
    (context.resumed as VerifyProgress | undefined) ?? input.progress,
  );
  let read = 0;
  while (read < input.budget) {
    throwIfCancelled(context);
    const rows = await listLinksAfter(deps.sql, {
      cursor: progress.cursor,
      limit: Math.min(VERIFY_CHUNK, input.budget - read),
      statuses: ['active'],
      // One short domain's links: the front being changed answers that domain (ADR 0073).
      domain: input.domain ?? DEFAULT_DOMAIN,
    });
    if (rows.length === 0) return { progress, done: true };
    const now = Date.now();
    await forEachConcurrently(rows, VERIFY_CONCURRENCY, async (row) => {
      const expected = describeAnswer(expectedAnswer(front, row, now));
      const record = await deps.resolver.resolve(row.code);
      const actual = describeAnswer(decideRedirect(row.code, record, now, front.redirect));
      if (actual !== expected) {
        progress.mismatched++;
        if (progress.examples.length < MISMATCH_EXAMPLES)
          progress.examples.push({ code: row.code, expected, actual });
      }
    });
    progress.checked += rows.length;
    progress.cursor = rows.at(-1)!.code;
    read += rows.length;
    context.heartbeat(progress);
  }
  return { progress, done: false };
}

/** Makes `to` the active front (once per run; audited). */
export async function switchFront(
  deps: FailoverDeps,
  input: { to: Front; workflowId: string; domain?: string },
): Promise<{ switched: boolean; since: string | null }> {
  const { front: now, switched } = await switchActiveFront(deps.sql, input);
  deps.logger.warn(
    { to: input.to, workflowId: input.workflowId, domain: input.domain ?? DEFAULT_DOMAIN, switched },
    'active front switched',
  );
  return { switched, since: now.since };
}

/** Asks the configured DNS adapter to point a short domain at `to`; false when none is configured. */
export async function pointDnsAt(
  deps: FailoverDeps,
  input: { to: Front; workflowId: string; domain?: string },
): Promise<{ adapter: boolean }> {
  const adapter = requireFront(deps).dnsAdapter;
  if (!adapter) return { adapter: false };
  await adapter.pointShortDomainAt(input.to, {
    workflowId: input.workflowId,
    ...(input.domain ? { domain: input.domain } : {}),
  });
  return { adapter: true };
}

/**
 * Checks from the outside that readers now reach `to`: through the public short base URL, a sample of active
 * codes answers as Postgres says, and `/healthz` is (in-house) or is not (Bitly) our web tier. Fails
 * (transiently) until DNS has followed; the workflow's retry policy bounds how long it waits.
 */
export async function verifyPublicFront(
  deps: FailoverDeps,
  input: { to: Front; sample: number; domain?: string },
): Promise<{ checked: number }> {
  const front = requireFront(deps);
  const domain = input.domain ?? DEFAULT_DOMAIN;
  // The domain's own public base (SHORT_BASE_URL's scheme and port on its name), never a request's Host.
  const shortBaseUrl = shortBaseUrlOf(front, domain);
  const health = await fetch(`${shortBaseUrl}/healthz`, { signal: AbortSignal.timeout(5_000) }).catch(
    () => null,
  );
  const ours =
    health?.status === 200 &&
    ((await health.json().catch(() => ({}))) as { status?: string }).status === 'ok';
  if ((input.to === 'inhouse') !== ours) {
    throw new TransientFailure(
      `the short domain is not answered by ${input.to === 'inhouse' ? 'our web tier' : 'Bitly'} yet`,
      'DnsNotYet',
    );
  }
  // Archive links kept in-house only (ARCHIVE_LINKS_IN_HOUSE) are not on Bitly: Bitly answers 404 for them
  // while it fronts, by design (the preflight counts them), so they prove nothing about DNS.
  const rows = await listRandomActiveLinks(deps.sql, input.sample, { onBitly: input.to === 'bitly', domain });
  const now = Date.now();
  for (const row of rows) {
    const res = await fetch(`${shortBaseUrl}/${keyCode(row.code)}`, {
      redirect: 'manual',
      signal: AbortSignal.timeout(5_000),
    });
    await res.body?.cancel();
    const expected = expectedAnswer(front, row, now);
    const actual = res.headers.get('Location')
      ? `${res.status} ${res.headers.get('Location')}`
      : String(res.status);
    if (actual !== describeAnswer(expected)) {
      throw new TransientFailure(
        `${row.code} answers ${actual} through ${shortBaseUrl}, expected ${describeAnswer(expected)}`,
        'DnsNotYet',
      );
    }
  }
  return { checked: rows.length };
}
