import type { Db } from './sql.ts';

export interface TotpRow {
  userId: number;
  secret: string;
  confirmedAt: Date | null;
  lastStep: number;
}

/** The user's TOTP secret (confirmed or still being enrolled), or null. */
export async function getTotp(db: Db, userId: number): Promise<TotpRow | null> {
  const rows = await db<TotpRow[]>`
    SELECT user_id AS "userId", secret, confirmed_at AS "confirmedAt", last_step::float8 AS "lastStep"
    FROM user_totp WHERE user_id = ${userId}`;
  return rows[0] ?? null;
}

/** Stores a secret being enrolled, replacing one not confirmed yet; false when a confirmed one exists. */
export async function putPendingTotp(db: Db, userId: number, secret: string): Promise<boolean> {
  const rows = await db`
    INSERT INTO user_totp (user_id, secret) VALUES (${userId}, ${secret})
    ON CONFLICT (user_id) DO UPDATE SET secret = EXCLUDED.secret, created_at = now(), last_step = 0
      WHERE user_totp.confirmed_at IS NULL
    RETURNING 1`;
  return rows.length > 0;
}

/**
 * Moves the newest accepted step to `step` (and confirms the secret), only if it is newer than the stored one:
 * of two requests with the same code, one wins. False when the step was used already.
 */
export async function acceptTotpStep(
  db: Db,
  userId: number,
  step: number,
  confirm: boolean,
): Promise<boolean> {
  const rows = await db`
    UPDATE user_totp
    SET last_step = ${step}, confirmed_at = CASE WHEN ${confirm} THEN coalesce(confirmed_at, now()) ELSE confirmed_at END
    WHERE user_id = ${userId} AND last_step < ${step}
      AND (confirmed_at IS NOT NULL OR ${confirm})
    RETURNING 1`;
  return rows.length > 0;
}

/** Forgets the user's second factor and recovery codes (an admin's reset for a lost device). */
export async function deleteTotp(db: Db, userId: number): Promise<boolean> {
  await db`DELETE FROM user_recovery_codes WHERE user_id = ${userId}`;
  const rows = await db`DELETE FROM user_totp WHERE user_id = ${userId} RETURNING 1`;
  return rows.length > 0;
}

/** Replaces the user's recovery codes with these hashes. */
export async function replaceRecoveryCodes(db: Db, userId: number, hashes: string[]): Promise<void> {
  await db`DELETE FROM user_recovery_codes WHERE user_id = ${userId}`;
  for (const hash of hashes) {
    await db`INSERT INTO user_recovery_codes (user_id, code_hash) VALUES (${userId}, ${hash})`;
  }
}

/** Uses up a recovery code: true once for each code, then false. */
export async function useRecoveryCode(db: Db, userId: number, hash: string): Promise<boolean> {
  const rows = await db`
    UPDATE user_recovery_codes SET used_at = now()
    WHERE user_id = ${userId} AND code_hash = ${hash} AND used_at IS NULL
    RETURNING 1`;
  return rows.length > 0;
}

/** How many of the user's recovery codes are still unused. */
export async function countUnusedRecoveryCodes(db: Db, userId: number): Promise<number> {
  const rows = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM user_recovery_codes WHERE user_id = ${userId} AND used_at IS NULL`;
  return rows[0]?.n ?? 0;
}
