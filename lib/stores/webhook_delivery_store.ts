import type { Db } from './sql.ts';

export interface WebhookDeliveryRow {
  deliveryId: string;
  site: string;
  postId: number;
  event: string;
  occurredAt: Date;
  workflowId: string;
  receivedAt: Date;
}

/** The delivery already accepted under this id, or null. */
export async function getWebhookDelivery(db: Db, deliveryId: string): Promise<WebhookDeliveryRow | null> {
  const rows = await db<WebhookDeliveryRow[]>`
    SELECT delivery_id AS "deliveryId", site, post_id AS "postId", event, occurred_at AS "occurredAt",
           workflow_id AS "workflowId", received_at AS "receivedAt"
    FROM webhook_deliveries WHERE delivery_id = ${deliveryId}`;
  return rows[0] ?? null;
}

/** Records an accepted delivery (once Temporal has the work); a repeat is ignored. */
export async function insertWebhookDelivery(
  db: Db,
  d: Omit<WebhookDeliveryRow, 'receivedAt'>,
): Promise<void> {
  await db`
    INSERT INTO webhook_deliveries (delivery_id, site, post_id, event, occurred_at, workflow_id)
    VALUES (${d.deliveryId}, ${d.site}, ${d.postId}, ${d.event}, ${d.occurredAt}, ${d.workflowId})
    ON CONFLICT (delivery_id) DO NOTHING`;
}
