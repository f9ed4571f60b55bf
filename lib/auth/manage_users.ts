import { z } from 'zod';
import { randomToken } from '../shared/crypto.ts';
import { ConflictError, NotFoundError, ValidationError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import { deleteUserSessions } from '../stores/session_store.ts';
import type { Db, Sql } from '../stores/sql.ts';
import {
  countActiveAdmins,
  getUserById,
  insertUser,
  type UserRole,
  type UserRow,
  updateUser,
} from '../stores/user_store.ts';
import { resetSecondFactor } from './mfa.ts';
import { hashPassword } from './passwords.ts';
import { USER_ROLES } from './permissions.ts';
import { revokeSessions } from './staff_sessions.ts';

export { USER_ROLES };

export const PASSWORD_MIN_LENGTH = 10;

/** The operations page's "add a user" form. An empty password means "generate one and show it once". */
export const createUserInputSchema = z.strictObject({
  email: z
    .email(fieldProblem('email'))
    .max(254)
    .transform((e) => e.toLowerCase()),
  name: z
    .string()
    .trim()
    .max(100, 'must be at most 100 characters')
    .transform((v) => v || null),
  role: z.enum(USER_ROLES),
  password: z
    .string()
    .max(200)
    .refine(
      (p) => p === '' || p.length >= PASSWORD_MIN_LENGTH,
      `must be at least ${PASSWORD_MIN_LENGTH} characters`,
    ),
});
export type CreateUserInput = z.infer<typeof createUserInputSchema>;

/** Creates an editor or admin; returns the generated password when none was given (to show once). */
export async function createUser(
  sql: Sql,
  input: CreateUserInput,
  actor: string,
): Promise<{ user: UserRow; generatedPassword: string | null }> {
  const generatedPassword = input.password === '' ? randomToken(20) : null;
  const passwordHash = await hashPassword(generatedPassword ?? input.password);
  const user = await sql.begin(async (tx) => {
    const user = await insertUser(tx, {
      email: input.email,
      name: input.name,
      passwordHash,
      role: input.role,
    });
    if (!user) {
      throw new ConflictError(`A user with the email ${input.email} exists already.`, [
        { path: 'email', message: fieldProblem('emailTaken') },
      ]);
    }
    await insertAuditEntry(tx, {
      code: null,
      actor,
      action: 'user.created',
      after: { id: user.id, email: user.email, role: user.role },
    });
    return user;
  });
  return { user, generatedPassword };
}

/** Makes sure a change leaves at least one enabled admin, and that nobody locks themselves out. */
async function guard(tx: Db, target: UserRow, actorId: number, losesAdmin: boolean): Promise<void> {
  if (target.id === actorId) {
    throw new ValidationError([{ path: 'user', message: fieldProblem('notYourself') }]);
  }
  if (losesAdmin && target.role === 'admin' && !target.disabledAt && (await countActiveAdmins(tx)) <= 1) {
    throw new ValidationError([{ path: 'user', message: fieldProblem('lastAdmin') }]);
  }
}

async function getOrThrow(tx: Db, id: number): Promise<UserRow> {
  const user = await getUserById(tx, id);
  if (!user) throw new NotFoundError(`No user ${id}.`);
  return user;
}

/** Disables (signing them out everywhere) or re-enables a user. */
export async function setUserDisabled(
  sql: Sql,
  id: number,
  disabled: boolean,
  actor: { id: number; name: string },
): Promise<UserRow> {
  return sql.begin(async (tx) => {
    const user = await getOrThrow(tx, id);
    if (disabled) await guard(tx, user, actor.id, true);
    const updated = (await updateUser(tx, id, { disabledAt: disabled ? new Date() : null }))!;
    if (disabled) await deleteUserSessions(tx, id);
    await insertAuditEntry(tx, {
      code: null,
      actor: actor.name,
      action: disabled ? 'user.disabled' : 'user.enabled',
      after: { id, email: user.email },
    });
    return updated;
  });
}

/** Changes a user's role (never the last admin's, never one's own) and signs them out everywhere. */
export async function setUserRole(
  sql: Sql,
  id: number,
  role: UserRole,
  actor: { id: number; name: string },
): Promise<UserRow> {
  return sql.begin(async (tx) => {
    const user = await getOrThrow(tx, id);
    await guard(tx, user, actor.id, role !== 'admin');
    const updated = (await updateUser(tx, id, { role }))!;
    // What their open sessions showed and allowed was for the old role: they sign in again.
    if (role !== user.role) await deleteUserSessions(tx, id);
    await insertAuditEntry(tx, {
      code: null,
      actor: actor.name,
      action: 'user.role_changed',
      before: { role: user.role },
      after: { id, email: user.email, role },
    });
    return updated;
  });
}

/** Gives a user a new generated password (shown once) and signs them out everywhere. */
export async function resetUserPassword(
  sql: Sql,
  id: number,
  actor: { id: number; name: string },
): Promise<{ user: UserRow; password: string }> {
  const password = randomToken(20);
  const passwordHash = await hashPassword(password);
  const user = await sql.begin(async (tx) => {
    const user = await getOrThrow(tx, id);
    await updateUser(tx, id, { passwordHash });
    await deleteUserSessions(tx, id);
    await insertAuditEntry(tx, {
      code: null,
      actor: actor.name,
      action: 'user.password_reset',
      after: { id, email: user.email },
    });
    return user;
  });
  return { user, password };
}

/** An admin signs a user out everywhere (a lost laptop, a departure). */
export async function revokeUserSessionsAsAdmin(
  sql: Sql,
  id: number,
  actor: { id: number; name: string },
): Promise<number> {
  await getOrThrow(sql, id);
  return revokeSessions(sql, id, actor.name);
}

/** An admin removes a user's second factor (lost phone, no recovery code left) and signs them out everywhere. */
export async function resetSecondFactorAsAdmin(
  sql: Sql,
  id: number,
  actor: { id: number; name: string },
): Promise<void> {
  const user = await getOrThrow(sql, id);
  if (user.id === actor.id)
    throw new ValidationError([{ path: 'user', message: fieldProblem('notYourself') }]);
  await resetSecondFactor(sql, id, actor);
  await revokeSessions(sql, id, actor.name);
}
