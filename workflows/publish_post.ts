import type { ActivityOptions } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  continueAsNew,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import { LinkCodeKey, type PostEvent, type PublishPostWorkflowInput, postEventSignal } from './contract.ts';

/** How many fresh codes a first publish tries when Bitly will not take ours, before giving up on Bitly. */
export const MAX_REMINTS = 3;

/** The patch under which the short steps are local activities. */
export const LOCAL_STEPS_PATCH = 'publish-steps-local';

/** The patch under which a later event's change goes to the sync queue instead of a `sync:{code}` workflow. */
export const QUEUED_CHANGES_PATCH = 'post-changes-queued';

type BitlySync = Awaited<ReturnType<Activities['syncToBitly']>>;

/** The short steps' options: each is one Postgres transaction (and a Safe Browsing lookup for the scan). */
const STEP_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: ['BadInput', 'SharedCode'],
  },
};

// The short steps run as local activities (ADR 0094): each is a marker in the workflow task that ran it instead of
// an activity task of its own, a third of the server's work per publish. Executions started before the patch
// replay with the activity tasks their histories hold.
const localSteps = proxyLocalActivities<Activities>({ ...STEP_OPTIONS, localRetryThreshold: '1m' });
const remoteSteps = proxyActivities<Activities>(STEP_OPTIONS);
type Steps = typeof localSteps;

// Vendor calls retry for as long as it takes; the activity sets each delay (rate limits, backoff) itself.
const { syncToBitly, recordVendorCollision } = proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5m' },
});

/**
 * One article's link through its life: `publish:{site}:{postId}`, fed by signalWithStart, so the post's
 * events are applied one at a time in arrival order (older ones are dropped by `links.source_version`).
 *
 * First publish: mintCode → writeServingStore → [safety scan] → syncToBitly (collision assertion) →
 * markActive. Bitly's back-half must equal our code; while the code was never shared a refusal re-mints
 * (remintCode, bounded); after sharing it is recorded as a collision and the code never changes.
 * Later events change Postgres (applyPostUpdate, markGone) and hand replicas to the link's sync workflow.
 */
export async function publishPostWorkflow(
  input: PublishPostWorkflowInput,
): Promise<{ code: string | null; applied: string[] }> {
  const steps: Steps = patched(LOCAL_STEPS_PATCH) ? localSteps : remoteSteps;
  // Executions started before the patch hand their changes to the link's own sync workflow, as they began.
  const queued = patched(QUEUED_CHANGES_PATCH);
  const queue: PostEvent[] = [...input.events];
  const seen = new Set<string>();
  setHandler(postEventSignal, (event) => {
    queue.push(event);
  });
  let code: string | null = null;
  const applied: string[] = [];
  while (queue.length > 0) {
    const event = queue.shift()!;
    // The starting event also arrives as the signal of signalWithStart; duplicates of a delivery too.
    if (seen.has(event.deliveryId)) continue;
    seen.add(event.deliveryId);
    try {
      const result = await applyEvent(steps, queued, event, code);
      code = result.code ?? code;
      applied.push(`${event.event}: ${result.outcome}`);
    } catch (error) {
      // A non-retryable failure of one event (bad input) must not drop the events queued behind it.
      if (!(error instanceof ActivityFailure && error.cause instanceof ApplicationFailure)) throw error;
      log.error('post event failed', { deliveryId: event.deliveryId, error: error.cause.message });
      applied.push(`${event.event}: failed (${error.cause.message})`);
    }
    if (workflowInfo().continueAsNewSuggested && queue.length > 0) {
      await continueAsNew<typeof publishPostWorkflow>({ ...input, events: queue });
    }
  }
  return { code, applied };
}

/**
 * One event. A later event's change reaches the link's copies through the sync queue (ADR 0098): the change's
 * transaction queues the code, a new permalink's verdict queues it again if it changes, and the drainer is woken
 * once both are stored. Before the patch, the link's own `sync:{code}` workflow was signalled instead.
 */
async function applyEvent(
  steps: Steps,
  queued: boolean,
  event: PostEvent,
  known: string | null,
): Promise<{ code: string | null; outcome: string }> {
  const handOff = async (code: string, reason: string) => {
    if (queued) await steps.kickSyncQueue({ reason: `${reason} (${code})` });
    else await steps.requestLinkSync({ code, reason });
  };
  if (event.event === 'post.unpublished') {
    const gone = queued ? await steps.markGone(event, { queueSync: true }) : await steps.markGone(event);
    if (gone.code && gone.outcome === 'changed') await handOff(gone.code, `post ${event.postId} unpublished`);
    return { code: gone.code ?? known, outcome: gone.outcome === 'changed' ? 'gone' : gone.outcome };
  }
  const minted = await steps.mintCode(event);
  if (!minted.code) return { code: known, outcome: minted.outcome };
  if (minted.code !== known) upsertSearchAttributes([{ key: LinkCodeKey, value: minted.code }]);
  if (minted.outcome === 'deleted') return { code: minted.code, outcome: 'deleted' };
  if (minted.outcome === 'pending') {
    // An earlier run stopped before activation: bring the pending link up to this event, then finish.
    await steps.applyPostUpdate({ event, code: minted.code });
  }
  if (minted.outcome === 'minted' || minted.outcome === 'pending') {
    const first = await publishFirstTime(steps, minted.code, event, minted.plan);
    return {
      code: first.code,
      outcome: first.blocked ? 'blocked by the safety scan' : `active as ${first.code}`,
    };
  }
  const change = queued
    ? await steps.applyPostUpdate({ event, code: minted.code, queueSync: true })
    : await steps.applyPostUpdate({ event, code: minted.code });
  if (change.outcome === 'changed') {
    // A new permalink is a new destination: it gets its own verdict before the replicas are told. (A drainer
    // already at work may carry the queued change first; a changed verdict queues the link again, so its last
    // pass carries the verdict too.)
    if (change.changes.includes('url')) {
      if (queued) await steps.scanLinkSafety({ code: minted.code, queueSync: true });
      else await steps.scanLinkSafety({ code: minted.code });
    }
    await handOff(minted.code, `${event.event}: ${change.changes.join(', ')} changed`);
    return { code: minted.code, outcome: change.changes.join('+') };
  }
  return { code: minted.code, outcome: change.outcome };
}

/** mint → serving store → scan → Bitly with the collision assertion → active. Returns the final code. */
async function publishFirstTime(
  steps: Steps,
  minted: string,
  event: PostEvent,
  plan: Awaited<ReturnType<Activities['mintCode']>>['plan'],
): Promise<{ code: string; blocked: boolean }> {
  let code = minted;
  await steps.writeServingStore({ codes: [code] });
  // The destination is checked before any vendor or reader sees the code: a blocked one stops here (the link
  // stays pending, its verdict and reason on the link for editors); a warning publishes behind the interstitial.
  const scan = await steps.scanLinkSafety({ code });
  if (scan.safety === 'blocked') {
    log.warn('permalink blocked by the safety scan; the link stays pending', { code, postId: event.postId });
    return { code, blocked: true };
  }
  let activated = false;
  if (plan.bitly) {
    for (let remints = 0; ; remints++) {
      const sync = await syncBeforeSharing(code, plan);
      if (sync === 'waited') {
        // In-house front and Bitly still busy: share the link now; its sync workflow keeps at Bitly.
        await steps.markActive({ code, reason: `post ${event.postId} published (Bitly still syncing)` });
        activated = true;
        await steps.requestLinkSync({ code, reason: 'Bitly sync continues after activation' });
        break;
      }
      if (sync.outcome !== 'mismatch') break;
      if (remints >= MAX_REMINTS) {
        await recordVendorCollision({
          code,
          vendor: 'bitly',
          detail: `${sync.detail} (after ${remints} re-mints)`,
        });
        break;
      }
      // Never shared yet: a fresh code costs nothing, and the same code must hold everywhere.
      log.warn('Bitly refused our back-half before sharing; re-minting', { code, detail: sync.detail });
      const fresh = await steps.remintCode({
        code,
        site: event.site,
        postId: event.postId,
        reason: sync.detail,
      });
      code = fresh.code;
      upsertSearchAttributes([{ key: LinkCodeKey, value: code }]);
      await steps.writeServingStore({ codes: [fresh.previous, code] });
    }
  }
  if (!activated) await steps.markActive({ code, reason: `post ${event.postId} published` });
  return { code, blocked: false };
}

/**
 * Syncs the pending link to Bitly. With Bitly as the active front, as long as it takes (readers reach the
 * link there); with the in-house front, Bitly is a warm replica: wait at most `publishWaitMs`.
 */
async function syncBeforeSharing(
  code: string,
  plan: { activeFront: string; publishWaitMs: number },
): Promise<BitlySync | 'waited'> {
  if (plan.activeFront === 'bitly') return syncToBitly({ code, publishing: true });
  const syncScope = new CancellationScope();
  const timerScope = new CancellationScope();
  const sync = syncScope.run(() => syncToBitly({ code, publishing: true }));
  const timer = timerScope
    .run(() => sleep(plan.publishWaitMs))
    .then(
      () => 'waited' as const,
      () => 'cancelled' as const,
    );
  const first = await Promise.race([sync, timer]);
  if (first === 'waited') {
    syncScope.cancel();
    await sync.catch(() => undefined);
    return 'waited';
  }
  timerScope.cancel();
  return first as BitlySync;
}
