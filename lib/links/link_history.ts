import { type AuditRow, listAuditEntries } from '../stores/audit_store.ts';
import type { Db } from '../stores/sql.ts';

/** One change of a link as its history shows it: who, what, before → after, why, when. */
export type LinkHistoryEntry = AuditRow;

/** A link's audit history, newest first. */
export function listLinkHistory(db: Db, code: string, limit = 200): Promise<LinkHistoryEntry[]> {
  return listAuditEntries(db, code, limit);
}
