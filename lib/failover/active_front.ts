import { insertAuditEntry } from '../stores/audit_store.ts';
import { getSetting, upsertSetting } from '../stores/settings_store.ts';
import type { Db, Sql } from '../stores/sql.ts';

/** Settings key of the front that answers the short domain. */
export const ACTIVE_FRONT_SETTING = 'active_front';
export const FRONTS = ['bitly', 'inhouse'] as const;
export type Front = (typeof FRONTS)[number];

/** Who answers the short domain, since when, and which run switched it. */
export interface ActiveFront {
  active: Front;
  since: string | null;
  workflowId?: string;
}

/** The active front (in-house until a failover says otherwise). */
export async function getActiveFront(db: Db): Promise<ActiveFront> {
  const value = await getSetting<Partial<ActiveFront>>(db, ACTIVE_FRONT_SETTING);
  return {
    active: value?.active === 'bitly' ? 'bitly' : 'inhouse',
    since: value?.since ?? null,
    ...(value?.workflowId ? { workflowId: value.workflowId } : {}),
  };
}

/**
 * Switches the active front, with an audit entry, once: a retry of the same run finds its own switch done and
 * changes nothing. Returns the front as it stands afterwards and whether this call switched it.
 */
export async function switchActiveFront(
  sql: Sql,
  options: { to: Front; workflowId: string },
): Promise<{ front: ActiveFront; switched: boolean }> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtextextended('active_front', 0))`;
    const before = await getActiveFront(tx);
    if (before.workflowId === options.workflowId && before.active === options.to) {
      return { front: before, switched: false };
    }
    const front: ActiveFront = {
      active: options.to,
      since: new Date().toISOString(),
      workflowId: options.workflowId,
    };
    await upsertSetting(tx, ACTIVE_FRONT_SETTING, front);
    await insertAuditEntry(tx, {
      code: null,
      actor: `system:${options.workflowId}`,
      action: 'front.switched',
      before,
      after: front,
    });
    return { front, switched: true };
  });
}
