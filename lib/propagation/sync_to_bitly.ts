// Bitly's copy of a link kept equal to Postgres (the vendor step of the sync and publish workflows), with the
// collision rules of ADR 0008: our code must be Bitly's back-half, and a bitlink Bitly silently made with
// another back-half is never kept.
import { backoffDelay } from '../shared/backoff.ts';
import { TransientFailure } from '../shared/errors.ts';
import { keyCode, keyDomain, linkKey } from '../shared/link_key.ts';
import type { Logger } from '../shared/logger.ts';
import { keepingAlive, type TaskContext, throwIfCancelled } from '../shared/task_context.ts';
import { listExistingCodes } from '../stores/link_batch_store.ts';
import type { LinkRow, VendorLinkRow } from '../stores/link_rows.ts';
import { getLinkByCode } from '../stores/link_store.ts';
import type { Sql } from '../stores/sql.ts';
import { insertVendorAttempt, updateVendorProblem, updateVendorSynced } from '../stores/vendor_link_store.ts';
import { BITLY_DISCARDED_TAG, BITLY_OWN_TAG, type BitlyProvider } from '../vendors/bitly.ts';
import { holdsBackHalf, ProviderError, type VendorLink } from '../vendors/short_link_provider.ts';
import { bitlyForKey, type VendorDeps } from '../vendors/vendor_deps.ts';
import { toVendorTarget, type VendorTarget } from '../vendors/vendor_target.ts';

export interface BitlySyncDeps {
  sql: Sql;
  logger: Logger;
  vendors?: VendorDeps | undefined;
}

/** What syncToBitly did; the workflow decides what a mismatch means (re-mint before sharing, alert after). */
export type BitlySyncResult =
  | { outcome: 'disabled' }
  | { outcome: 'skipped'; reason: string }
  | { outcome: 'synced'; vendorId: string | null; action: string }
  | { outcome: 'mismatch'; answered: string[]; detail: string }
  | { outcome: 'rejected'; error: string };

/** How many times one attempt re-reads Postgres when the link changed while Bitly was being updated. */
const CONVERGE_PASSES = 3;
/** Tries to archive a stray bitlink (made with the wrong back-half) before leaving it to reconciliation. */
const DISCARD_ATTEMPTS = 8;

/** Backoff for a transient failure of this attempt: the vendor's wait for rate limits, else doubling. */
function retryDelayMs(vendors: VendorDeps, error: ProviderError, attempt: number): number {
  // Jitter spreads a burst of rate-limited links so they do not all return in the same second.
  return Math.round(
    backoffDelay({
      attempt,
      baseMs: vendors.retryBaseMs,
      maxMs: vendors.retryMaxMs,
      jitter: { min: 1, range: 0.2 },
      retryAfterMs: error.details.retryAfterMs,
      retryAfter: 'instead',
    }),
  );
}

/**
 * Archives a bitlink Bitly made with the wrong back-half, so it cannot be mistaken for ours. Retried here
 * (a few quick tries): once this attempt returns, nothing remembers that stray link.
 */
async function discard(
  deps: BitlySyncDeps & { vendors: VendorDeps },
  bitly: BitlyProvider,
  link: VendorLink,
  code: string,
): Promise<void> {
  const baseMs = deps.vendors.retryBaseMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await bitly.discard(link.vendorId);
      deps.logger.warn(
        { code, vendorId: link.vendorId, tag: BITLY_DISCARDED_TAG },
        'Bitly made a link with another back-half than ours; archived it',
      );
      return;
    } catch (error) {
      if (!(error instanceof ProviderError && error.retryable) || attempt >= DISCARD_ATTEMPTS) {
        deps.logger.error(
          { alert: 'vendor_stray_link', err: error, code, vendorId: link.vendorId },
          'could not archive a bitlink made with the wrong back-half; reconciliation must archive it',
        );
        return;
      }
      await new Promise((r) => setTimeout(r, backoffDelay({ attempt, baseMs, maxMs: 5_000 })));
    }
  }
}

/** Brings the bitlink holding `domain/code` to `target`; returns what was done. */
async function converge(bitly: BitlyProvider, remote: VendorLink, code: string, target: VendorTarget) {
  let link = remote;
  const actions: string[] = [];
  if (link.longUrl !== target.longUrl) {
    link = await bitly.updateTarget(link.vendorId, code, target.longUrl);
    actions.push('retargeted');
  }
  if (link.archived !== target.archived) {
    link = await bitly.setArchived(link.vendorId, target.archived);
    actions.push(target.archived ? 'archived' : 'restored');
  }
  return { link, actions };
}

/**
 * A create whose answer was lost (timeout, dropped connection, worker crash) may have left a bitlink that
 * Bitly SILENTLY made with a random back-half: no later answer mentions it, so look for it. A stray is ours
 * (`lifeline` tag: both create paths tag at creation), was made since the link was minted, points where we
 * sent it, and holds no code of ours: no keyword at all, or only keywords Bitly picked itself (the two-step
 * path's silent random back-half), which name no link in Postgres. Archived here; what this misses (say, the
 * target changed in between) reconciliation's Bitly leg archives as a stray.
 */
async function sweepStrays(
  deps: BitlySyncDeps & { vendors: VendorDeps },
  bitly: BitlyProvider,
  link: LinkRow,
  target: VendorTarget,
): Promise<number> {
  // One minute of slack for clock skew between Postgres and Bitly (whose times have whole seconds).
  const since = new Date(link.createdAt.getTime() - 60_000);
  const prefix = `${bitly.domain}/`;
  let swept = 0;
  for await (const candidate of bitly.iterateLinks({ archived: 'off', createdAfter: since })) {
    if (!candidate.tags.includes(BITLY_OWN_TAG)) continue;
    if (candidate.longUrl !== target.longUrl && !(link.title !== null && candidate.title === link.title))
      continue;
    const keywords = candidate.shortIds
      .filter((id) => id !== candidate.vendorId && id.startsWith(prefix))
      .map((id) => id.slice(prefix.length));
    if (keywords.includes(keyCode(link.code))) continue;
    // Bitly's keywords are codes on the link's own short domain: asked for as that domain's keys.
    const domain = keyDomain(link.code);
    const keys = keywords.map((keyword) => linkKey(domain, keyword));
    if (keys.length > 0 && (await listExistingCodes(deps.sql, keys)).size > 0) continue;
    await discard(deps, bitly, candidate, link.code);
    swept++;
  }
  return swept;
}

type Placement =
  | { kind: 'found'; remote: VendorLink; action: 'created' | 'adopted' }
  | { kind: 'mismatch'; answered: string[]; detail: string }
  | { kind: 'absent' };

/**
 * Finds or makes the bitlink that must answer `domain/<code>`. A first attempt goes straight to create (one
 * call on the happy path; a taken back-half shows up as a 409 or as a link with another back-half); a retry
 * first looks for what an earlier attempt may have made. A holder is ours when it sits in our group and
 * either points where we want or an earlier attempt of ours may have made it (timed out, or the worker died
 * after Bitly answered); anything else holding our back-half is a mismatch. A recorded collision stays one.
 */
async function placeOnBitly(
  deps: BitlySyncDeps & { vendors: VendorDeps },
  bitly: BitlyProvider,
  link: LinkRow,
  target: VendorTarget,
  before: VendorLinkRow | null,
): Promise<Placement> {
  // The back-half on the short domain's own Bitly domain (ADR 0078): the code, never the key.
  const code = keyCode(link.code);
  const isOurs = (holder: VendorLink) =>
    holder.group === bitly.groupGuid &&
    (holder.longUrl === target.longUrl || (before !== null && before.state !== 'collision'));
  // An earlier attempt that did not end synced may have left a stray: clear it before deciding.
  if (before !== null && before.state !== 'synced') await sweepStrays(deps, bitly, link, target);
  const holder = before !== null || target.archived ? await bitly.findByCode(code) : null;
  if (holder && isOurs(holder)) return { kind: 'found', remote: holder, action: 'adopted' };
  if (holder) {
    return {
      kind: 'mismatch',
      answered: holder.shortIds,
      detail: `our back-half ${bitly.domain}/${code} is held by ${holder.vendorId}`,
    };
  }
  if (target.archived) return { kind: 'absent' };
  let made: VendorLink | null = null;
  try {
    made = await bitly.create({ code, longUrl: target.longUrl, title: link.title });
  } catch (error) {
    if (!(error instanceof ProviderError && error.kind === 'conflict')) throw error;
  }
  if (made && holdsBackHalf(made, bitly.domain, code))
    return { kind: 'found', remote: made, action: 'created' };
  // 409, or Bitly SILENTLY made a link with another back-half: never keep that mapping.
  if (made) await discard(deps, bitly, made, code);
  const holderNow = await bitly.findByCode(code);
  if (holderNow && isOurs(holderNow)) return { kind: 'found', remote: holderNow, action: 'adopted' };
  return {
    kind: 'mismatch',
    answered: made?.shortIds ?? holderNow?.shortIds ?? [],
    detail: made
      ? `Bitly answered ${made.vendorId} instead of ${bitly.domain}/${code}`
      : `Bitly refused ${bitly.domain}/${code}: the back-half is taken${holderNow ? ` by ${holderNow.vendorId}` : ''}`,
  };
}

/**
 * Makes Bitly's copy of the link equal to Postgres: creates it with OUR code as the back-half if missing,
 * retargets it, archives or restores it. Transient failures (rate limits, 5xx, timeouts) throw a
 * TransientFailure with the right delay; refusals are recorded and returned. Never records a mismatch itself:
 * it returns it, and the workflow decides.
 */
export async function syncToBitly(
  deps: BitlySyncDeps,
  input: { code: string; publishing?: boolean },
  context: TaskContext,
): Promise<BitlySyncResult> {
  const bitly = bitlyForKey(deps.vendors, input.code);
  if (!bitly || !deps.vendors) return { outcome: 'disabled' };
  const backHalf = keyCode(input.code);
  const withVendors = { ...deps, vendors: deps.vendors };
  const vendors = deps.vendors;
  const found = await getLinkByCode(deps.sql, input.code);
  if (!found) return { outcome: 'skipped', reason: 'no such link (re-minted)' };
  if (found.status === 'pending' && !input.publishing) {
    return { outcome: 'skipped', reason: 'its publish workflow syncs a pending link' };
  }
  let before = await insertVendorAttempt(deps.sql, input.code, 'bitly');
  if (before?.state === 'inhouse') {
    // An archive link kept off Bitly (ARCHIVE_LINKS_IN_HOUSE; docs/PUBLISHING.md): nothing to create or update.
    if (vendors.archiveLinksInHouse) return { outcome: 'skipped', reason: 'archive link kept in-house only' };
    // The setting was turned off: created like a link never attempted.
    before = null;
  }
  // Cancellation (the publish workflow stops waiting) arrives through heartbeats: one a second while it runs.
  return keepingAlive(context, 1_000, async () => {
    let link = found;
    try {
      let remote: VendorLink | null = null;
      let action = 'unchanged';
      if (before?.vendorId) {
        remote = await bitly.get(before.vendorId);
        // Ours only while it holds our back-half in our group (an adopted back-half may sit in another group).
        const elsewhere = remote?.group != null && remote.group !== bitly.groupGuid;
        if (remote && (!holdsBackHalf(remote, bitly.domain, backHalf) || elsewhere)) remote = null;
      }
      const targetOf = (row: LinkRow) =>
        toVendorTarget(row, { ...vendors.redirect, shortBaseUrl: vendors.shortBaseUrl }, Date.now());
      let target = targetOf(link);
      if (!remote) {
        throwIfCancelled(context);
        const placed = await placeOnBitly(withVendors, bitly, link, target, before);
        if (placed.kind === 'mismatch') {
          return { outcome: 'mismatch', answered: placed.answered, detail: placed.detail };
        }
        if (placed.kind === 'absent') {
          // Nothing on Bitly and nothing to serve: no copy needed.
          await updateVendorSynced(deps.sql, input.code, 'bitly', { vendorId: null, syncedUrl: null });
          return { outcome: 'synced', vendorId: null, action: 'absent' };
        }
        remote = placed.remote;
        action = placed.action;
      }
      // The link may change while Bitly is being updated: re-read and push again until they agree.
      for (let pass = 0; pass < CONVERGE_PASSES; pass++) {
        throwIfCancelled(context);
        const result = await converge(bitly, remote, backHalf, target);
        remote = result.link;
        if (result.actions.length > 0)
          action =
            action === 'unchanged' ? result.actions.join('+') : `${action}+${result.actions.join('+')}`;
        const latest = await getLinkByCode(deps.sql, input.code);
        if (!latest) break;
        const latestTarget = targetOf(latest);
        if (latestTarget.longUrl === target.longUrl && latestTarget.archived === target.archived) break;
        link = latest;
        target = latestTarget;
      }
      await updateVendorSynced(deps.sql, input.code, 'bitly', {
        vendorId: remote.vendorId,
        syncedUrl: target.longUrl,
      });
      return { outcome: 'synced', vendorId: remote.vendorId, action };
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      if (error.retryable) {
        await updateVendorProblem(deps.sql, input.code, 'bitly', { state: 'pending', error: error.message });
        throw new TransientFailure(
          error.message,
          error.kind === 'unavailable' ? 'VendorUnavailable' : 'VendorRateLimited',
          retryDelayMs(vendors, error, context.attempt),
        );
      }
      // Refused (bad request, credentials, plan): retrying the same call cannot help. Recorded, visible in
      // vendors[], and picked up again by the next change or a reconciliation.
      await updateVendorProblem(deps.sql, input.code, 'bitly', { state: 'failed', error: error.message });
      deps.logger.error({ code: input.code, err: error.message, kind: error.kind }, 'Bitly refused the link');
      return { outcome: 'rejected', error: error.message };
    }
  });
}
