import type { Db } from './sql.ts';

export type UserRole = 'editor' | 'admin';

export interface UserRow {
  id: number;
  email: string;
  name: string | null;
  passwordHash: string;
  role: UserRole;
  disabledAt: Date | null;
  lastLoginAt: Date | null;
  createdAt: Date;
}

const COLUMNS = `id, email, name, password_hash AS "passwordHash", role, disabled_at AS "disabledAt",
  last_login_at AS "lastLoginAt", created_at AS "createdAt"`;

/** The user with this (lower-cased) email, or null. */
export async function getUserByEmail(db: Db, email: string): Promise<UserRow | null> {
  const rows = await db<
    UserRow[]
  >`SELECT ${db.unsafe(COLUMNS)} FROM users WHERE email = ${email.toLowerCase()}`;
  return rows[0] ?? null;
}

/** The user with this id, or null. */
export async function getUserById(db: Db, id: number): Promise<UserRow | null> {
  const rows = await db<UserRow[]>`SELECT ${db.unsafe(COLUMNS)} FROM users WHERE id = ${id}`;
  return rows[0] ?? null;
}

/** Creates a user, or (upsert) resets an existing one's password and role. */
export async function upsertUser(
  db: Db,
  user: { email: string; name?: string | null; passwordHash: string; role: UserRole },
): Promise<UserRow> {
  const rows = await db<UserRow[]>`
    INSERT INTO users (email, name, password_hash, role)
    VALUES (${user.email.toLowerCase()}, ${user.name ?? null}, ${user.passwordHash}, ${user.role})
    ON CONFLICT (email) DO UPDATE
      SET password_hash = EXCLUDED.password_hash, role = EXCLUDED.role, disabled_at = NULL, updated_at = now()
    RETURNING ${db.unsafe(COLUMNS)}`;
  return rows[0]!;
}

/** Every user, oldest first. */
export async function listUsers(db: Db): Promise<UserRow[]> {
  return db<UserRow[]>`SELECT ${db.unsafe(COLUMNS)} FROM users ORDER BY id`;
}

/** How many users exist at all (first-run detection). */
export async function countUsers(db: Db): Promise<number> {
  const rows = await db<{ n: number }[]>`SELECT count(*) AS n FROM users`;
  return rows[0]?.n ?? 0;
}
