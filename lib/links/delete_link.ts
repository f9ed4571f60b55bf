import { type SyncState, syncAfterChange } from '../propagation/sync_after_change.ts';
import { NotFoundError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import { getLinkByCodeForUpdate, updateLink } from '../stores/link_store.ts';
import type { Sql } from '../stores/sql.ts';
import { recordWebhookEvent } from '../stores/webhook_outbox_store.ts';
import type { WorkflowGateway } from '../temporal/workflow_gateway.ts';
import { assertMayChangePostLink } from './post_link_rules.ts';

/**
 * Deletes a link for good: the row stays (status `gone`, `deleted_at` set), so the code answers 410 forever
 * and the PRIMARY KEY keeps it from ever being minted again. Audited, then synced like any change. A WordPress
 * article's link needs `mayManagePostLinks` (administrators): deleted, the article never gets a link again.
 */
export async function deleteLink(
  deps: { sql: Sql; workflows: WorkflowGateway; logger: Logger },
  code: string,
  actor: string,
  reason: string | null,
  options: { mayManagePostLinks?: boolean } = {},
): Promise<{ sync: SyncState }> {
  await deps.sql.begin(async (tx) => {
    const row = await getLinkByCodeForUpdate(tx, code);
    if (!row || row.deletedAt) throw new NotFoundError(`No link ${code}.`);
    assertMayChangePostLink(row, 'delete', options.mayManagePostLinks === true);
    await updateLink(tx, code, { status: 'gone', deletedAt: new Date() });
    await insertAuditEntry(tx, {
      code,
      actor,
      action: 'link.deleted',
      before: { status: row.status, url: row.targetUrl },
      after: { status: 'gone', deleted: true },
      reason,
    });
    await recordWebhookEvent(tx, 'link.deleted', { code, url: row.targetUrl, title: row.title, reason });
  });
  return { sync: await syncAfterChange(deps, code, `link.deleted by ${actor}`) };
}
