import { BadRequestError } from '../errors.ts';
import { getLinkByPost } from '../stores/link_store.ts';
import type { Sql } from '../stores/sql.ts';
import { getWebhookDelivery, insertWebhookDelivery } from '../stores/webhook_delivery_store.ts';
import type { WorkflowGateway } from '../temporal/workflow_gateway.ts';
import type { WordPressEvent } from './wordpress_event.ts';

export interface AcceptedEvent {
  workflowId: string;
  code?: string;
  duplicate: boolean;
}

/**
 * Hands a verified WordPress event to Temporal. The delivery is recorded only after Temporal accepted the
 * work, so a failure (503) leaves nothing behind and the sender's retry starts it; a replayed delivery id
 * starts nothing new. Workflow IDs are per post, so concurrent duplicates also meet one workflow.
 */
export async function acceptWordPressEvent(
  deps: { sql: Sql; workflows: WorkflowGateway },
  event: WordPressEvent,
): Promise<AcceptedEvent> {
  const seen = await getWebhookDelivery(deps.sql, event.id);
  if (seen) {
    const link = await getLinkByPost(deps.sql, seen.site, seen.postId);
    return { workflowId: seen.workflowId, ...(link ? { code: link.code } : {}), duplicate: true };
  }
  let workflowId: string;
  switch (event.event) {
    case 'post.published':
      ({ workflowId } = await deps.workflows.startPublish({
        deliveryId: event.id,
        site: event.site,
        postId: event.postId,
        permalink: event.permalink!,
        ...(event.title !== undefined ? { title: event.title } : {}),
        occurredAt: event.occurredAt,
      }));
      break;
    default:
      throw new BadRequestError(`The event "${event.event}" is not handled yet.`);
  }
  await insertWebhookDelivery(deps.sql, {
    deliveryId: event.id,
    site: event.site,
    postId: event.postId,
    event: event.event,
    occurredAt: new Date(event.occurredAt),
    workflowId,
  });
  const link = await getLinkByPost(deps.sql, event.site, event.postId);
  return { workflowId, ...(link ? { code: link.code } : {}), duplicate: false };
}
