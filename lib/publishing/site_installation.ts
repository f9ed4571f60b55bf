// A site's WordPress installation (ADR 0057): every signed message carries the plugin's installation id; a new
// one for a known site means a fresh WordPress (export, import, reassigned post IDs). The site switches into
// migration mode and its WordPress reconciliation starts at once, matching posts by their claims first.
import { recordInstallation } from '../stores/post_identity_store.ts';
import type { Db } from '../stores/sql.ts';

/**
 * Records the installation a signed message came from; on a change, asks for the site's reconciliation (its
 * workflow is one per site, so a burst of events starts one). Returns whether the site switched now.
 */
export async function noteInstallation(
  deps: {
    sql: Db;
    adoption?:
      | { requestWordPressReconcile(input: { site: string; reason: string }): Promise<unknown> }
      | undefined;
  },
  site: string,
  installationId: string | undefined,
): Promise<boolean> {
  if (!installationId) return false;
  const { switched } = await recordInstallation(deps.sql, site, installationId);
  if (switched && deps.adoption) {
    await deps.adoption.requestWordPressReconcile({
      site,
      reason: 'a new WordPress installation (migration mode)',
    });
  }
  return switched;
}
