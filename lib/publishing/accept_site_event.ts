import type { Sql } from '../stores/sql.ts';
import { getWebhookDelivery, insertWebhookDelivery } from '../stores/webhook_delivery_store.ts';
import { upsertWordPressSite } from '../stores/wordpress_site_store.ts';
import { noteInstallation } from './site_installation.ts';
import type { SiteEvent } from './wordpress_event.ts';

/** Starts (or re-runs) one site's WordPress reconciliation. */
export interface WordPressReconcileRequester {
  requestWordPressReconcile(input: { site: string; reason: string }): Promise<{ workflowId: string }>;
}

/**
 * `site.permalinks_changed` (the permalink structure, a category or tag base, or the home URL changed): no
 * post was saved, so no post event follows; the site's WordPress reconciliation starts at once (one at a time
 * per site) and retargets every link whose permalink moved. The new restUrl is stored first. Recorded as a
 * delivery (post 0, as the plugin queues it) only once Temporal took it, so a 503 leaves the retry its work;
 * a replayed id starts nothing.
 */
export async function acceptSiteEvent(
  deps: { sql: Sql; adoption: WordPressReconcileRequester },
  event: SiteEvent,
): Promise<{ workflowId: string; duplicate: boolean }> {
  await upsertWordPressSite(deps.sql, event.site, event.restUrl, event.occurredAt);
  await noteInstallation({ sql: deps.sql }, event.site, event.installationId);
  const seen = await getWebhookDelivery(deps.sql, event.id);
  if (seen) return { workflowId: seen.workflowId, duplicate: true };
  const { workflowId } = await deps.adoption.requestWordPressReconcile({
    site: event.site,
    reason: `${event.event} (${event.reason})`,
  });
  await insertWebhookDelivery(deps.sql, {
    deliveryId: event.id,
    site: event.site,
    postId: 0,
    event: event.event,
    occurredAt: new Date(event.occurredAt),
    workflowId,
  });
  return { workflowId, duplicate: false };
}
