import { BadRequestError } from '../shared/errors.ts';
import { keyCode } from '../shared/link_key.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { getLinkByPost } from '../stores/link_store.ts';
import type { Sql } from '../stores/sql.ts';
import { getWebhookDelivery, insertWebhookDelivery } from '../stores/webhook_delivery_store.ts';
import { upsertWordPressSite } from '../stores/wordpress_site_store.ts';
import type { CanonicalTargetPolicy } from '../targets/target_rule.ts';
import type { WorkflowGateway } from '../temporal/workflow_gateway.ts';
import type { WordPressReconcileRequester } from './accept_site_event.ts';
import { noteInstallation } from './site_installation.ts';
import { getPermalinkProblem, type WordPressEvent } from './wordpress_event.ts';

export interface AcceptedEvent {
  workflowId: string;
  code?: string;
  duplicate: boolean;
}

/** The post's code, once shared: a pending code may still be re-minted, so it is not handed out. */
function sharedCode(link: LinkRow | null): { code?: string } {
  // Its code on the site's short domain: the plugin keeps codes, never keys (ADR 0078).
  return link && link.status !== 'pending' && !link.deletedAt ? { code: keyCode(link.code) } : {};
}

/**
 * Hands a verified WordPress event (published, updated, unpublished) to the post's workflow. The delivery is
 * recorded only after Temporal accepted the work, so a failure (503) leaves nothing behind and the sender's
 * retry starts it; a replayed delivery id starts nothing new. All events of one post meet one workflow
 * (`publish:{site}:{postId}`), which applies them in order and ignores ones older than the newest applied.
 */
export async function acceptWordPressEvent(
  deps: {
    sql: Sql;
    workflows: WorkflowGateway;
    targetPolicy: CanonicalTargetPolicy;
    adoption?: WordPressReconcileRequester | undefined;
  },
  event: WordPressEvent,
): Promise<AcceptedEvent> {
  // A permalink is a target like any other (ALLOWED_TARGET_HOSTS, not the short domain): refused as a bad
  // payload (400) before anything is started or recorded, so the plugin reports it instead of retrying.
  const permalinkProblem = getPermalinkProblem(event, deps.targetPolicy);
  if (permalinkProblem) {
    throw new BadRequestError('The webhook payload is not valid.', [
      { path: 'permalink', message: permalinkProblem },
    ]);
  }
  const permalink =
    event.permalink !== undefined &&
    (event.event !== 'post.unpublished' ||
      getPermalinkProblem({ ...event, event: 'post.updated' }, deps.targetPolicy) === null)
      ? event.permalink
      : undefined;
  // The newest signed event says where the site's listing lives (WordPress reconciliation reads it): newest
  // by our clock, as a sender's occurredAt could claim any time.
  if (event.restUrl) await upsertWordPressSite(deps.sql, event.site, event.restUrl, new Date());
  // A new installation for a known site (a fresh WordPress): migration mode, and its reconciliation starts.
  await noteInstallation(deps, event.site, event.installationId);
  const seen = await getWebhookDelivery(deps.sql, event.id);
  if (seen) {
    const link = await getLinkByPost(deps.sql, seen.site, seen.postId);
    return { workflowId: seen.workflowId, ...sharedCode(link), duplicate: true };
  }
  const { workflowId } = await deps.workflows.sendPostEvent({
    deliveryId: event.id,
    event: event.event,
    site: event.site,
    postId: event.postId,
    ...(permalink !== undefined ? { permalink } : {}),
    ...(event.title !== undefined ? { title: event.title } : {}),
    ...(event.knownCode !== undefined ? { knownCode: event.knownCode } : {}),
    ...(event.guid !== undefined ? { guid: event.guid } : {}),
    occurredAt: event.occurredAt,
  });
  await insertWebhookDelivery(deps.sql, {
    deliveryId: event.id,
    site: event.site,
    postId: event.postId,
    event: event.event,
    occurredAt: new Date(event.occurredAt),
    workflowId,
  });
  const link = await getLinkByPost(deps.sql, event.site, event.postId);
  return { workflowId, ...sharedCode(link), duplicate: false };
}
