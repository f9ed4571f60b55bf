import { ActivityFailure, log, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { ArchiveDestinationInput, ArchiveDestinationReport } from './contract.ts';

const NON_RETRYABLE = ['BadInput', 'ArchiveKeys', 'ArchiveRefused', 'ArchiveOff'];

const { beginDestinationArchive, recordArchiveFailed } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

// The Archive's rate limit and outages are waited out here, never in a reader's request: a 429 comes back after
// its Retry-After (the activity's nextRetryDelay), anything else transient with backoff, for about an hour.
const { requestArchiveSave, checkArchiveSave, findArchiveSnapshot } = proxyActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: {
    initialInterval: '10s',
    backoffCoefficient: 2,
    maximumInterval: '15m',
    maximumAttempts: 8,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

/** A capture is polled after 1 s, then twice as long each time up to a minute: about half an hour in all. */
const POLL_DELAYS_MS = [1_000, 2_000, 4_000, 8_000, 15_000, 30_000, ...Array<number>(28).fill(60_000)];

/**
 * Keeps an archived copy of one link's destination, ID `archive:{code}`: with ARCHIVE_MODE=save, Save Page Now
 * captures it (polled until its status says success or error); otherwise, or when the capture fails, the closest
 * existing Wayback snapshot is recorded. Started when a link is created or retargeted; a new start for the same
 * code ends the run before it.
 */
export async function archiveDestinationWorkflow(
  input: ArchiveDestinationInput,
): Promise<ArchiveDestinationReport> {
  const plan = await beginDestinationArchive({ code: input.code });
  if (plan.action === 'skip') return { outcome: 'skipped', reason: plan.reason };
  const { url } = plan;
  if (plan.action === 'save') {
    try {
      const { jobId } = await requestArchiveSave({ code: input.code, url });
      for (const delay of POLL_DELAYS_MS) {
        await sleep(delay);
        const status = await checkArchiveSave({ code: input.code, url, jobId });
        if (status.state === 'saved') return { outcome: 'saved', url };
        if (status.state === 'failed') break;
      }
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      log.warn('Save Page Now gave no capture; looking for an existing snapshot', { code: input.code });
    }
  }
  try {
    const found = await findArchiveSnapshot({ code: input.code, url });
    return { outcome: found.state, url };
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    await recordArchiveFailed({ code: input.code, url });
    return { outcome: 'failed', url };
  }
}
