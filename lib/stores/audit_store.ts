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

/** Appends many entries in one statement (the expiry sweeper's batch: one per link, as insertAuditEntry writes). */
export async function insertAuditEntries(db: Db, entries: readonly AuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const rows = entries.map((e) => ({
    code: e.code,
    actor: e.actor,
    action: e.action,
    before: e.before === undefined ? null : e.before,
    after: e.after === undefined ? null : e.after,
    reason: e.reason ?? null,
  }));
  await db`
    INSERT INTO audit_log (code, actor, action, before, after, reason)
    SELECT r.code, r.actor, r.action, r.before, r.after, r.reason
    FROM jsonb_to_recordset((${JSON.stringify(rows)}::text)::jsonb)
      AS r(code text, actor text, action text, before jsonb, after jsonb, reason text)`;
}

/** A link's history, newest first. */
export async function listAuditEntries(db: Db, code: string, limit = 100): Promise<AuditRow[]> {
  return db<AuditRow[]>`
    SELECT id, code, actor, action, before, after, reason, created_at AS "createdAt"
    FROM audit_log WHERE code = ${code} ORDER BY id DESC LIMIT ${limit}`;
}
