import type { Db } from './sql.ts';

/** The staff roles, least to most (lib/auth/permissions.ts says what each may do). */
export const USER_ROLE_NAMES = ['viewer', 'editor', 'moderator', 'admin'] as const;
export type UserRole = (typeof USER_ROLE_NAMES)[number];

export interface UserRow {
  id: number;
  email: string;
  name: string | null;
  passwordHash: string;
  role: UserRole;
  disabledAt: Date | null;
  lastLoginAt: Date | null;
  createdAt: Date;
  /** The editor UI's language chosen by the user (a BCP 47 tag), or null to follow the browser. */
  locale: string | null;
}

const COLUMNS = `id, email, name, password_hash AS "passwordHash", role, disabled_at AS "disabledAt",
  last_login_at AS "lastLoginAt", created_at AS "createdAt", locale`;

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

/** Creates a user; null when the email is already taken. */
export async function insertUser(
  db: Db,
  user: { email: string; name: string | null; passwordHash: string; role: UserRole },
): Promise<UserRow | null> {
  const rows = await db<UserRow[]>`
    INSERT INTO users (email, name, password_hash, role)
    VALUES (${user.email.toLowerCase()}, ${user.name}, ${user.passwordHash}, ${user.role})
    ON CONFLICT (email) DO NOTHING
    RETURNING ${db.unsafe(COLUMNS)}`;
  return rows[0] ?? null;
}

/** Applies changes to a user; null when no such user. */
export async function updateUser(
  db: Db,
  id: number,
  changes: { role?: UserRole; disabledAt?: Date | null; passwordHash?: string; lastLoginAt?: Date },
): Promise<UserRow | null> {
  const set: Record<string, unknown> = {};
  if (changes.role !== undefined) set.role = changes.role;
  if (changes.disabledAt !== undefined) set.disabled_at = changes.disabledAt;
  if (changes.passwordHash !== undefined) set.password_hash = changes.passwordHash;
  if (changes.lastLoginAt !== undefined) set.last_login_at = changes.lastLoginAt;
  const columns = Object.keys(set);
  if (columns.length === 0) return getUserById(db, id);
  const rows = await db<UserRow[]>`
    UPDATE users SET ${db(set as Record<string, never>, ...columns)}, updated_at = now()
    WHERE id = ${id} RETURNING ${db.unsafe(COLUMNS)}`;
  return rows[0] ?? null;
}

/** How many enabled admins exist (the last one may not be disabled or demoted). */
export async function countActiveAdmins(db: Db): Promise<number> {
  const rows = await db<{ n: number }[]>`
    SELECT count(*) AS n FROM users WHERE role = 'admin' AND disabled_at IS NULL`;
  return rows[0]?.n ?? 0;
}

/** Sets the user's UI language (null: follow the browser); null when no such user. */
export async function updateUserLocale(db: Db, id: number, locale: string | null): Promise<UserRow | null> {
  const rows = await db<UserRow[]>`
    UPDATE users SET locale = ${locale}, updated_at = now() WHERE id = ${id} RETURNING ${db.unsafe(COLUMNS)}`;
  return rows[0] ?? null;
}
