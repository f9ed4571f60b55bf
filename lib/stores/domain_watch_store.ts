import type { Db } from './sql.ts';

/** The facts the domain watch reads (migrations/0093_domain_watch.sql). */
export type DomainFactName = 'registration' | 'certificate' | 'reputation' | 'dnssec' | 'lock';

/** One row of domain_watch_facts. */
export interface DomainFactRow {
  subject: string;
  fact: DomainFactName;
  ok: boolean | null;
  expiresAt: Date | null;
  detail: Record<string, unknown>;
  error: string | null;
  readAt: Date | null;
  checkedAt: Date;
}

/** A fact as read now: replaces what was stored for (subject, fact), its error cleared. */
export async function upsertDomainFactRead(
  db: Db,
  read: {
    subject: string;
    fact: DomainFactName;
    ok: boolean | null;
    expiresAt: Date | null;
    detail: Record<string, unknown>;
  },
): Promise<void> {
  await db`
    INSERT INTO domain_watch_facts (subject, fact, ok, expires_at, detail, error, read_at, checked_at)
    VALUES (${read.subject}, ${read.fact}, ${read.ok}, ${read.expiresAt}, ${db.json(read.detail as never)},
            NULL, now(), now())
    ON CONFLICT (subject, fact) DO UPDATE SET
      ok = EXCLUDED.ok, expires_at = EXCLUDED.expires_at, detail = EXCLUDED.detail, error = NULL,
      read_at = EXCLUDED.read_at, checked_at = EXCLUDED.checked_at`;
}

/** An attempt that could not read the facts: the error and the attempt's time; what was read before stays. */
export async function recordDomainFactErrors(
  db: Db,
  subject: string,
  facts: readonly DomainFactName[],
  error: string,
): Promise<void> {
  const message = error.slice(0, 500);
  await db`
    INSERT INTO domain_watch_facts (subject, fact, error, checked_at)
    SELECT ${subject}, f, ${message}, now() FROM unnest(${facts as string[]}::text[]) AS f
    ON CONFLICT (subject, fact) DO UPDATE SET error = EXCLUDED.error, checked_at = EXCLUDED.checked_at`;
}

/** Every stored fact, by subject then fact. */
export async function listDomainFacts(db: Db): Promise<DomainFactRow[]> {
  return db<DomainFactRow[]>`
    SELECT subject, fact, ok, expires_at AS "expiresAt", detail, error, read_at AS "readAt",
           checked_at AS "checkedAt"
    FROM domain_watch_facts ORDER BY subject, fact`;
}
