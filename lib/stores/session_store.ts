import type { Db } from './sql.ts';
import type { UserRole, UserRow } from './user_store.ts';

/** How far sign-in got: 'mfa' between a right password and a right code; 'signed-in' after. */
export type SessionStage = 'mfa' | 'signed-in';
/** How the person proved who they are. */
export type SessionMethod = 'password' | 'oidc';

export interface SessionRow {
  idHash: string;
  userId: number;
  csrfToken: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  stage: SessionStage;
  method: SessionMethod;
}

/** A session as its owner's (or an admin's) list shows it. */
export interface SessionListRow {
  idHash: string;
  createdAt: Date;
  lastSeenAt: Date;
  userAgent: string | null;
  ip: string | null;
  method: SessionMethod;
}

/** Stores a session by the SHA-256 of its id (the cookie holds the only copy of the id). */
export async function insertSession(
  db: Db,
  session: {
    idHash: string;
    userId: number;
    csrfToken: string;
    expiresAt: Date;
    userAgent: string | null;
    ip: string | null;
    stage: SessionStage;
    method: SessionMethod;
  },
): Promise<void> {
  await db`
    INSERT INTO sessions (id_hash, user_id, csrf_token, expires_at, user_agent, ip, stage, method)
    VALUES (${session.idHash}, ${session.userId}, ${session.csrfToken}, ${session.expiresAt},
            ${session.userAgent?.slice(0, 300) ?? null}, ${session.ip}, ${session.stage}, ${session.method})`;
}

/** The live session with this hash and its enabled user, or null (expired, unknown, user disabled). */
export async function getSessionWithUser(
  db: Db,
  idHash: string,
): Promise<{ session: SessionRow; user: UserRow; mfaEnrolled: boolean } | null> {
  const rows = await db<
    (SessionRow & {
      email: string;
      name: string | null;
      role: UserRole;
      userCreatedAt: Date;
      lastLoginAt: Date | null;
      locale: string | null;
      mfaEnrolled: boolean;
    })[]
  >`
    SELECT s.id_hash AS "idHash", s.user_id AS "userId", s.csrf_token AS "csrfToken", s.created_at AS "createdAt",
           s.last_seen_at AS "lastSeenAt", s.expires_at AS "expiresAt",
           s.stage, s.method,
           EXISTS (SELECT 1 FROM user_totp t WHERE t.user_id = u.id AND t.confirmed_at IS NOT NULL)
             AS "mfaEnrolled",
           u.email, u.name, u.role, u.created_at AS "userCreatedAt", u.last_login_at AS "lastLoginAt",
           u.locale
    FROM sessions s JOIN users u ON u.id = s.user_id
    WHERE s.id_hash = ${idHash} AND s.expires_at > now() AND u.disabled_at IS NULL`;
  const row = rows[0];
  if (!row) return null;
  const { email, name, role, userCreatedAt, lastLoginAt, locale, mfaEnrolled, ...session } = row;
  return {
    session,
    mfaEnrolled,
    // The password hash never leaves the login path.
    user: {
      id: row.userId,
      email,
      name,
      role,
      passwordHash: '',
      disabledAt: null,
      lastLoginAt,
      createdAt: userCreatedAt,
      locale,
    },
  };
}

/** Slides a session's expiry forward (never past `maxExpiresAt`). */
export async function touchSession(db: Db, idHash: string, expiresAt: Date): Promise<void> {
  await db`UPDATE sessions SET last_seen_at = now(), expires_at = ${expiresAt} WHERE id_hash = ${idHash}`;
}

/** Ends one session. */
export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db`DELETE FROM sessions WHERE id_hash = ${idHash}`;
}

/** Ends every session of a user (disabled, or password reset). */
export async function deleteUserSessions(db: Db, userId: number): Promise<void> {
  await db`DELETE FROM sessions WHERE user_id = ${userId}`;
}

/** Forgets expired sessions. */
export async function deleteExpiredSessions(db: Db): Promise<void> {
  await db`DELETE FROM sessions WHERE expires_at < now()`;
}

/** A user's live sessions, newest first (signed-in ones: a session waiting for its code is not a session yet). */
export async function listUserSessions(db: Db, userId: number): Promise<SessionListRow[]> {
  return db<SessionListRow[]>`
    SELECT id_hash AS "idHash", created_at AS "createdAt", last_seen_at AS "lastSeenAt",
           user_agent AS "userAgent", ip, method
    FROM sessions
    WHERE user_id = ${userId} AND expires_at > now() AND stage = 'signed-in'
    ORDER BY last_seen_at DESC
    LIMIT 200`;
}

/** Ends one session of a user (never another user's); true when there was one. */
export async function deleteUserSession(db: Db, userId: number, idHash: string): Promise<boolean> {
  const rows = await db`DELETE FROM sessions WHERE user_id = ${userId} AND id_hash = ${idHash} RETURNING 1`;
  return rows.length > 0;
}

/** Ends every session of a user but one (sign out everywhere else); the number ended. */
export async function deleteOtherUserSessions(db: Db, userId: number, keepIdHash: string): Promise<number> {
  const rows =
    await db`DELETE FROM sessions WHERE user_id = ${userId} AND id_hash <> ${keepIdHash} RETURNING 1`;
  return rows.length;
}
