import { log, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import { LinkCodeKey } from '../lib/temporal/search_attributes.ts';

/** One WordPress publish: the article's site, post and canonical permalink. */
export interface PublishPostInput {
  deliveryId: string;
  site: string;
  postId: number;
  permalink: string;
  title?: string;
  occurredAt: string;
}

const { mintPostLink, activateLink } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: ['BadInput'],
  },
});

/**
 * Publish-time minting: mint the article's one code (or find it), then mark the link active.
 * ID `publish:{site}:{postId}`; every step is an idempotent activity, so a crash resumes where it stopped.
 */
export async function publishPostWorkflow(input: PublishPostInput): Promise<{ code: string }> {
  const { code, created } = await mintPostLink(input);
  upsertSearchAttributes([{ key: LinkCodeKey, value: code }]);
  log.info('minted', { code, created });
  await activateLink({ code, reason: `post ${input.postId} published` });
  return { code };
}
