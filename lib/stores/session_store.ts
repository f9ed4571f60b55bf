import type { Db } from './sql.ts';
import type { UserRole, UserRow } from './user_store.ts';

export interface SessionRow {
  idHash: string;
  userId: number;
  csrfToken: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
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
  },
): Promise<void> {
  await db`
    INSERT INTO sessions (id_hash, user_id, csrf_token, expires_at, user_agent, ip)
    VALUES (${session.idHash}, ${session.userId}, ${session.csrfToken}, ${session.expiresAt},
            ${session.userAgent?.slice(0, 300) ?? null}, ${session.ip})`;
}

/** The live session with this hash and its enabled user, or null (expired, unknown, user disabled). */
export async function getSessionWithUser(
  db: Db,
  idHash: string,
): Promise<{ session: SessionRow; user: UserRow } | null> {
  const rows = await db<
    (SessionRow & {
      email: string;
      name: string | null;
      role: UserRole;
      userCreatedAt: Date;
      lastLoginAt: Date | null;
      locale: string | null;
    })[]
  >`
    SELECT s.id_hash AS "idHash", s.user_id AS "userId", s.csrf_token AS "csrfToken", s.created_at AS "createdAt",
           s.last_seen_at AS "lastSeenAt", s.expires_at AS "expiresAt",
           u.email, u.name, u.role, u.created_at AS "userCreatedAt", u.last_login_at AS "lastLoginAt",
           u.locale
    FROM sessions s JOIN users u ON u.id = s.user_id
    WHERE s.id_hash = ${idHash} AND s.expires_at > now() AND u.disabled_at IS NULL`;
  const row = rows[0];
  if (!row) return null;
  const { email, name, role, userCreatedAt, lastLoginAt, locale, ...session } = row;
  return {
    session,
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
