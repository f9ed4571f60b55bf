import type { Db } from './sql.ts';

export interface AuditEntry {
  code: string | null;
  /** Who: `user:<email>`, `apikey:<id>`, `wordpress:<site>`, `system:<workflow>`. */
  actor: string;
  /** What: `link.created`, `link.retargeted`, `link.status_changed`, ... */
  action: string;
  before?: unknown;
  after?: unknown;
  reason?: string | null;
}

export interface AuditRow {
  id: number;
  code: string | null;
  actor: string;
  action: string;
  before: unknown;
  after: unknown;
  reason: string | null;
  createdAt: Date;
}

/** Appends one entry to the append-only audit log. */
export async function insertAuditEntry(db: Db, entry: AuditEntry): Promise<void> {
  await db`
    INSERT INTO audit_log (code, actor, action, before, after, reason)
    VALUES (${entry.code}, ${entry.actor}, ${entry.action},
            ${entry.before === undefined ? null : db.json(entry.before as never)},
            ${entry.after === undefined ? null : db.json(entry.after as never)},
            ${entry.reason ?? null})`;
}

/** A link's history, newest first. */
export async function listAuditEntries(db: Db, code: string, limit = 100): Promise<AuditRow[]> {
  return db<AuditRow[]>`
    SELECT id, code, actor, action, before, after, reason, created_at AS "createdAt"
    FROM audit_log WHERE code = ${code} ORDER BY id DESC LIMIT ${limit}`;
}
