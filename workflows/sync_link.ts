import { defineSignal, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import { LinkCodeKey } from '../lib/temporal/search_attributes.ts';

/** Signal name on the wire: "the link changed in Postgres; bring every replica up to date". */
export const linkChangedSignal = defineSignal<[{ reason: string }]>('linkChanged');

export interface SyncLinkInput {
  code: string;
  reason: string;
}

const { purgeLinkCaches, ensureExpiryTimer } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: ['BadInput'],
  },
});

/**
 * Propagates a link's current Postgres state to every replica (in-process caches, serving store; vendors
 * and the expiry timer as those land). ID `sync:{code}`, started with signalWithStart: a change that
 * arrives while a pass runs triggers one more pass, so the last change always wins and nothing is lost.
 * Each pass reads the latest row, so passes are idempotent.
 */
export async function syncLinkWorkflow(input: SyncLinkInput): Promise<{ passes: number }> {
  upsertSearchAttributes([{ key: LinkCodeKey, value: input.code }]);
  let pending = true;
  setHandler(linkChangedSignal, () => {
    pending = true;
  });
  let passes = 0;
  while (pending) {
    pending = false;
    passes++;
    await purgeLinkCaches({ code: input.code });
    // Expiry (issue 6): keep the link's durable timer `expire:{code}` in step with expires_at.
    await ensureExpiryTimer({ code: input.code });
  }
  return { passes };
}
