import { getClientNetwork } from '../shared/client_ip.ts';
import { AppError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { LOGIN_ACCOUNT_MAX_LENGTH, type RateLimits } from '../shared/rate_limits.ts';
import type { Sql } from '../stores/sql.ts';
import { getUserByEmail, type UserRow, updateUser } from '../stores/user_store.ts';
import {
  hashPassword,
  isPasswordTooLong,
  needsRehash,
  PASSWORD_MAX_BYTES,
  verifyPassword,
} from './passwords.ts';

/** Wrong email, wrong password and disabled account all look the same from outside. */
export class LoginFailedError extends AppError {
  constructor() {
    super(401, 'login-failed', 'Login failed', 'The email or password is not right.');
  }
}

/** A typed password longer than any password can be (PASSWORD_MAX_BYTES): refused before any work. */
export class PasswordTooLongError extends AppError {
  constructor() {
    super(
      400,
      'password-too-long',
      'Password too long',
      `A password is at most ${PASSWORD_MAX_BYTES} bytes.`,
    );
  }
}

// Unknown emails are checked against this hash so they take as long as known ones (no account probing).
let dummyHash: Promise<string> | undefined;

/**
 * Checks an email and password. A password longer than PASSWORD_MAX_BYTES is refused first (400), before it is
 * counted or hashed: no account has one. Then rate-limited per client network, then per account, before any
 * work (429); the password verified with scrypt in constant time, in the process's bounded hash queue (at most
 * `hashQueueMax` sign-ins waiting, one per network; beyond it, after a wait past HASH_WAIT_MAX_MS or when
 * `signal` says the client went away: HashBusyError, 503); on success the last-login time recorded and a hash
 * made with weaker parameters than today's replaced (needsRehash).
 */
export async function logIn(
  deps: { sql: Sql; rateLimits: RateLimits; logger?: Logger; hashQueueMax: number },
  email: string,
  password: string,
  ip: string,
  signal?: AbortSignal,
): Promise<UserRow> {
  if (isPasswordTooLong(password)) throw new PasswordTooLongError();
  const account = email.trim().toLowerCase();
  await deps.rateLimits.beginLogin(account, ip);
  // No account has an address this long: refused without a lookup or a hash (the IP's attempt is counted).
  if (account.length > LOGIN_ACCOUNT_MAX_LENGTH) throw new LoginFailedError();
  const user = await getUserByEmail(deps.sql, account);
  dummyHash ??= hashPassword('lifeline-dummy-password');
  const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyHash), {
    network: getClientNetwork(ip),
    maxWaiting: deps.hashQueueMax,
    ...(signal ? { signal } : {}),
  });
  if (!user || !ok || user.disabledAt) throw new LoginFailedError();
  await deps.rateLimits.endLoginSuccessfully(account, ip);
  const changes: { lastLoginAt: Date; passwordHash?: string } = { lastLoginAt: new Date() };
  if (needsRehash(user.passwordHash)) {
    changes.passwordHash = await hashPassword(password);
    deps.logger?.info({ user: user.id }, 'password hash upgraded to the current scrypt parameters');
  }
  return (await updateUser(deps.sql, user.id, changes)) ?? user;
}
