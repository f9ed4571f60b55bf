// The scheduled destination checks' work: the due rows, in batches that spread over hosts, checked politely,
// written with the two-check rule, progress heartbeated. The due set is its own cursor: a checked row moves its
// next_check_at forward, so a retry after a crash simply takes what is still due.
import { forEachConcurrently } from '../shared/concurrency.ts';
import { type TaskContext, throwIfCancelled } from '../shared/task_context.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import {
  type DestinationCheckRecord,
  type DestinationOutcome,
  type DestinationVerdict,
  type DueDestination,
  fillLinkTitlesFromPages,
  recordDestinationChecks,
  takeDueDestinations,
} from '../stores/destination_state_store.ts';
import { recordWebhookEvents } from '../stores/webhook_outbox_store.ts';
import { listWordPressSiteRows } from '../stores/wordpress_site_store.ts';
import { checkDestination } from './check_destination.ts';
import { type DestinationCheckDeps, isExcludedHost } from './destination_check_deps.ts';
import { nextDestinationState } from './destination_verdict.ts';

/** Rows taken per batch (written in one statement). */
const BATCH_SIZE = 200;
/** A batch takes at most this many seconds' worth of one host's requests at its rate. */
const BATCH_SECONDS_PER_HOST = 30;
/** Requests a check usually makes (HEAD, the soft-404 probe). */
const REQUESTS_PER_CHECK = 2;

export interface DestinationCheckCounts {
  checked: number;
  /** Rows of excluded hosts, passed over until the next cycle. */
  skipped: number;
  byOutcome: Partial<Record<DestinationOutcome, number>>;
}

export interface CheckDueInput {
  /** Checks in this call before returning to the workflow. */
  maxChecks: number;
  /** Where the last call's round robin over hosts stopped (the take's cursor; absent or null: the first host). */
  afterHost?: string | null;
}

async function refreshOwnHosts(deps: DestinationCheckDeps): Promise<void> {
  const sites = await listWordPressSiteRows(deps.sql);
  deps.ownHosts.clear();
  for (const h of deps.settings.ownHosts) deps.ownHosts.add(h);
  for (const site of sites) {
    try {
      deps.ownHosts.add(new URL(site.restUrl).hostname.toLowerCase());
    } catch {
      // A stored restUrl that does not parse names no host.
    }
  }
}

async function checkOne(deps: DestinationCheckDeps, due: DueDestination): Promise<DestinationCheckRecord> {
  const now = () => deps.now?.() ?? new Date();
  if (isExcludedHost(due.host, deps.settings.excludedHosts)) {
    deps.countCheck?.('skipped');
    const at = now();
    return {
      code: due.code,
      url: due.url,
      outcome: null,
      verdict: due.verdict,
      verdictChanged: false,
      httpStatus: null,
      finalUrl: null,
      chain: [],
      tls: null,
      error: null,
      pageTitle: null,
      counted: false,
      failures: due.failures,
      firstFailedAt: due.firstFailedAt,
      checkedAt: at,
      nextCheckAt: new Date(at.getTime() + deps.settings.intervalMs),
    };
  }
  const result = await checkDestination(deps.checker, due.url, { wantTitle: due.needsTitle });
  const at = now();
  const next = nextDestinationState(due, result.outcome, at, deps.settings.intervalMs);
  deps.countCheck?.(result.outcome);
  return {
    code: due.code,
    url: due.url,
    ...result,
    verdict: next.verdict,
    verdictChanged: next.verdictChanged,
    counted: true,
    failures: next.failures,
    firstFailedAt: next.firstFailedAt,
    checkedAt: at,
    nextCheckAt: next.nextCheckAt,
  };
}

/**
 * Crawl on create: a link the editor gave no title gets its page's title, read by its first check, audited as a
 * change by the checks (the editor's own title, given later, wins like any edit).
 */
async function fillTitles(deps: DestinationCheckDeps, records: readonly DestinationCheckRecord[]) {
  const pages = records.flatMap((r) =>
    r.pageTitle ? [{ code: r.code, url: r.url, title: r.pageTitle }] : [],
  );
  if (pages.length === 0) return;
  await deps.sql.begin(async (tx) => {
    for (const filled of await fillLinkTitlesFromPages(tx, pages)) {
      await insertAuditEntry(tx, {
        code: filled.code,
        actor: 'system:destination-checks',
        action: 'link.updated',
        before: { title: null },
        after: { title: filled.title },
        reason: "the destination page's title (the link had none)",
      });
    }
  });
}

/**
 * Whether a written check leaves something to act on (lib/destinations/act_on_destination.ts): a confirmed
 * `dead` or `moved` (acted on at each such check: the policy may have changed since), or `ok` after `dead` or
 * `moved` (a fallback to lift, a proposal to drop). `ok` after `unchecked` or `suspect` has nothing to undo.
 */
export function wantsAction(record: DestinationCheckRecord, previous: DestinationVerdict): boolean {
  if (!record.counted) return false;
  if (record.verdict === 'dead' || record.verdict === 'moved') return true;
  return record.verdict === 'ok' && (previous === 'dead' || previous === 'moved');
}

/**
 * Checks up to `maxChecks` due destinations, a batch at a time, each batch written in one statement and
 * heartbeated. After each batch is written, `actOn` runs for every link whose check left something to act on
 * (wantsAction), one at a time; a failure is logged and the link acted on again at its next check. `more`: rows
 * were still due when the call stopped.
 */
export async function checkDueDestinations(
  deps: DestinationCheckDeps,
  input: CheckDueInput,
  context: TaskContext,
  actOn?: (code: string) => Promise<unknown>,
): Promise<{ counts: DestinationCheckCounts; more: boolean; afterHost: string | null }> {
  const counts: DestinationCheckCounts = { checked: 0, skipped: 0, byOutcome: {} };
  await refreshOwnHosts(deps);
  const perHost = Math.max(
    1,
    Math.floor((deps.settings.hostRate * BATCH_SECONDS_PER_HOST) / REQUESTS_PER_CHECK),
  );
  let afterHost = input.afterHost ?? null;
  while (counts.checked + counts.skipped < input.maxChecks) {
    throwIfCancelled(context);
    const take = await takeDueDestinations(deps.sql, {
      now: deps.now?.() ?? new Date(),
      limit: Math.min(BATCH_SIZE, input.maxChecks - counts.checked - counts.skipped),
      perHost,
      afterHost,
    });
    const batch = take.due;
    afterHost = take.afterHost;
    if (batch.length === 0) return { counts, more: false, afterHost };
    const records: DestinationCheckRecord[] = [];
    await forEachConcurrently(batch, deps.settings.concurrency, async (due) => {
      const record = await checkOne(deps, due);
      records.push(record);
      context.heartbeat(counts);
    });
    await deps.sql.begin(async (tx) => {
      await recordDestinationChecks(tx, records);
      // A destination that just became dead (two checks agree) is announced in the same transaction.
      await recordWebhookEvents(
        tx,
        'destination.dead',
        records
          .filter((r) => r.counted && r.verdictChanged && r.verdict === 'dead')
          .map((r) => ({
            data: { code: r.code, url: r.url, outcome: r.outcome, httpStatus: r.httpStatus, error: r.error },
          })),
      );
    });
    await fillTitles(deps, records);
    if (actOn) {
      const previous = new Map(batch.map((due) => [due.code, due.verdict]));
      for (const r of records.filter((r) => wantsAction(r, previous.get(r.code) ?? 'unchecked'))) {
        throwIfCancelled(context);
        try {
          await actOn(r.code);
        } catch (error) {
          deps.logger.warn(
            { err: error, code: r.code, verdict: r.verdict },
            'acting on a destination verdict failed; it is acted on again at its next check',
          );
        }
        context.heartbeat(counts);
      }
    }
    for (const r of records) {
      if (!r.counted || !r.outcome) counts.skipped++;
      else {
        counts.checked++;
        counts.byOutcome[r.outcome] = (counts.byOutcome[r.outcome] ?? 0) + 1;
      }
    }
    context.heartbeat(counts);
  }
  return { counts, more: true, afterHost };
}
