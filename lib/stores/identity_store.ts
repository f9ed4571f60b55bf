import type { Db } from './sql.ts';
import type { UserRow } from './user_store.ts';

export interface LoginAttemptRow {
  nonce: string;
  codeVerifier: string;
  nextPath: string;
}

/** Records a sign-in sent to the provider, found again by the hash of its state. */
export async function insertLoginAttempt(
  db: Db,
  attempt: { stateHash: string; nonce: string; codeVerifier: string; nextPath: string; expiresAt: Date },
): Promise<void> {
  await db`DELETE FROM oidc_login_attempts WHERE expires_at < now()`;
  await db`
    INSERT INTO oidc_login_attempts (state_hash, nonce, code_verifier, next_path, expires_at)
    VALUES (${attempt.stateHash}, ${attempt.nonce}, ${attempt.codeVerifier}, ${attempt.nextPath}, ${attempt.expiresAt})`;
}

/** Takes a live attempt by its state's hash: once (a replayed state finds nothing), and never an expired one. */
export async function takeLoginAttempt(db: Db, stateHash: string): Promise<LoginAttemptRow | null> {
  const rows = await db<(LoginAttemptRow & { live: boolean })[]>`
    DELETE FROM oidc_login_attempts WHERE state_hash = ${stateHash}
    RETURNING nonce, code_verifier AS "codeVerifier", next_path AS "nextPath", expires_at > now() AS live`;
  const row = rows[0];
  if (!row?.live) return null;
  return { nonce: row.nonce, codeVerifier: row.codeVerifier, nextPath: row.nextPath };
}

/** The user linked to the provider's (issuer, subject), or null. */
export async function getUserIdByIdentity(db: Db, issuer: string, subject: string): Promise<number | null> {
  const rows = await db<{ userId: number }[]>`
    SELECT user_id::float8 AS "userId" FROM user_identities WHERE issuer = ${issuer} AND subject = ${subject}`;
  return rows[0]?.userId ?? null;
}

/** Links (issuer, subject) to a user. */
export async function insertIdentity(
  db: Db,
  identity: { issuer: string; subject: string; userId: number; email: string | null },
): Promise<void> {
  await db`
    INSERT INTO user_identities (issuer, subject, user_id, email, last_login_at)
    VALUES (${identity.issuer}, ${identity.subject}, ${identity.userId}, ${identity.email}, now())`;
}

/** Records a sign-in through an identity (and the address the provider gives today). */
export async function touchIdentity(
  db: Db,
  issuer: string,
  subject: string,
  email: string | null,
): Promise<void> {
  await db`
    UPDATE user_identities SET last_login_at = now(), email = coalesce(${email}, email)
    WHERE issuer = ${issuer} AND subject = ${subject}`;
}

/** Whether a user has any provider identity (such accounts sign in at the provider, not with a password). */
export async function hasIdentity(db: Db, user: Pick<UserRow, 'id'>): Promise<boolean> {
  const rows = await db`SELECT 1 FROM user_identities WHERE user_id = ${user.id} LIMIT 1`;
  return rows.length > 0;
}
