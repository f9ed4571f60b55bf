import type { ActivityOptions } from '@temporalio/common';
import {
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import { LinkCodeKey, linkChangedSignal, type SyncLinkInput } from './contract.ts';

/** The short steps: the serving store's write and the expiry sweeper's signal. */
const STEP_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: ['BadInput'],
  },
};
// Local activities since the patch below (ADR 0094): a marker in the workflow task instead of a task of their own.
const localSteps = proxyLocalActivities<Activities>({ ...STEP_OPTIONS, localRetryThreshold: '1m' });
const remoteSteps = proxyActivities<Activities>(STEP_OPTIONS);

/** The patch under which the short steps are local activities. */
export const SYNC_LOCAL_STEPS_PATCH = 'sync-steps-local';

// Vendor calls retry for as long as it takes; the activity sets each delay (rate limits, backoff) itself.
const { syncToBitly, recordVendorCollision } = proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5m' },
});

// The CDN purge is a local activity: with no CDN configured it costs no round trip to the server, and a failing
// CDN is still retried durably (locally for a minute, then after durable timers) until it takes the purge.
const { purgeLinkFromCdn } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1m',
  localRetryThreshold: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5m' },
});

/** A pass whose only changes are creations has nothing cached at the CDN to purge (see below). */
const CREATION_REASON = /^link\.created\b/;

/**
 * Propagates a link's current Postgres state to every copy (lib/propagation): the serving store and caches
 * (in-house front), then Bitly (create if missing, retarget, archive when gone, restore) and the CDN's cached copy
 * (purged). ID `sync:{code}`, started with signalWithStart: a change that arrives while a pass runs triggers one more pass, so the last change
 * always wins and nothing is lost. Each pass reads the latest row, so passes are idempotent. A shared code
 * Bitly will not hold is recorded as a collision; the code never changes here.
 */
export async function syncLinkWorkflow(input: SyncLinkInput): Promise<{ passes: number }> {
  const { writeServingStore, ensureExpiryTimer } = patched(SYNC_LOCAL_STEPS_PATCH) ? localSteps : remoteSteps;
  upsertSearchAttributes([{ key: LinkCodeKey, value: input.code }]);
  let pending = true;
  let reasons = [input.reason];
  setHandler(linkChangedSignal, ({ reason }) => {
    pending = true;
    reasons.push(reason);
  });
  let passes = 0;
  while (pending) {
    pending = false;
    passes++;
    const changes = reasons;
    reasons = [];
    await writeServingStore({ codes: [input.code] });
    // Edge caches: once our own copies answer the new state, the CDN's copy is purged, beside Bitly
    // (neither waits for the other's outage). A new link is not: nothing can be cached under a code that did
    // not exist but a 404 (cached 60 s), and a batch of a thousand creations would spend a CDN's purge quota.
    const purge = patched('cdn-purge-after-change') && !changes.every((r) => CREATION_REASON.test(r));
    const [bitly] = purge
      ? await Promise.all([syncToBitly({ code: input.code }), purgeLinkFromCdn({ code: input.code })])
      : [await syncToBitly({ code: input.code })];
    if (bitly.outcome === 'mismatch') {
      await recordVendorCollision({ code: input.code, vendor: 'bitly', detail: bitly.detail });
    }
    // Expiry: tell the one sweeper the link's date (ADR 0091; the activity's name is from the per-link timers).
    await ensureExpiryTimer({ code: input.code });
  }
  return { passes };
}
