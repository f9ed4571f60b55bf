import { AppError } from '../shared/errors.ts';
import type { RateLimits } from '../shared/rate_limits.ts';
import type { Sql } from '../stores/sql.ts';
import { getUserByEmail, type UserRow, updateUser } from '../stores/user_store.ts';
import { hashPassword, verifyPassword } from './passwords.ts';

/** Wrong email, wrong password and disabled account all look the same from outside. */
export class LoginFailedError extends AppError {
  constructor() {
    super(401, 'login-failed', 'Login failed', 'The email or password is not right.');
  }
}

// Unknown emails are checked against this hash so they take as long as known ones (no account probing).
let dummyHash: Promise<string> | undefined;

/**
 * Checks an email and password: rate-limited per account and per client IP before any work (429), the
 * password verified with scrypt in constant time; the last-login time recorded on success.
 */
export async function logIn(
  deps: { sql: Sql; rateLimits: RateLimits },
  email: string,
  password: string,
  ip: string,
): Promise<UserRow> {
  const account = email.trim().toLowerCase();
  await deps.rateLimits.beginLogin(account, ip);
  const user = await getUserByEmail(deps.sql, account);
  dummyHash ??= hashPassword('lifeline-dummy-password');
  const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyHash));
  if (!user || !ok || user.disabledAt) throw new LoginFailedError();
  await deps.rateLimits.endLoginSuccessfully(account, ip);
  return (await updateUser(deps.sql, user.id, { lastLoginAt: new Date() })) ?? user;
}
