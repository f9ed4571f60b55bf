import { randomToken, sha256Hex, timingSafeEqualString } from '../shared/crypto.ts';
import {
  deleteExpiredSessions,
  deleteSession,
  getSessionWithUser,
  insertSession,
  type SessionMethod,
  type SessionRow,
  type SessionStage,
  touchSession,
} from '../stores/session_store.ts';
import type { Db } from '../stores/sql.ts';
import type { UserRow } from '../stores/user_store.ts';

export type { SessionMethod, SessionStage };

/** A session ends after this long without a request... */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** ...and in any case this long after login. */
export const SESSION_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/** Sliding the expiry costs a write, so it happens at most this often per session. */
const SESSION_TOUCH_INTERVAL_MS = 5 * 60 * 1000;
/** Between a right password and a right code: this long to type the code, never slid. */
export const MFA_PENDING_MS = 10 * 60 * 1000;

/** The hidden form field every UI form carries its CSRF token in. */
export const CSRF_FIELD = '_csrf';

/** A signed-in staff member, as the UI sees them. */
export interface UiSession {
  /** SHA-256 of the session id (the stored key). */
  idHash: string;
  csrfToken: string;
  user: UserRow;
  /** 'mfa': the password was right, the code is still owed; only the code form is open to such a session. */
  stage: SessionStage;
  method: SessionMethod;
  /** The user has a confirmed TOTP second factor. */
  mfaEnrolled: boolean;
}

/** `__Host-` pins the cookie to our exact origin (Secure, Path=/, no Domain); browsers allow it on https only. */
export function getSessionCookieName(secure: boolean): string {
  return secure ? '__Host-lifeline_session' : 'lifeline_session';
}

const hashSessionId = (id: string) => sha256Hex(`lifeline-session:${id}`);

/** Starts a session for `user`: a fresh 256-bit id (so a planted id is never reused) and CSRF token. */
export async function startSession(
  db: Db,
  user: UserRow,
  meta: { userAgent: string | null; ip: string | null; stage?: SessionStage; method?: SessionMethod },
): Promise<{ id: string; csrfToken: string; expiresAt: Date }> {
  const id = randomToken(43);
  const csrfToken = randomToken(32);
  const expiresAt = new Date(Date.now() + (meta.stage === 'mfa' ? MFA_PENDING_MS : SESSION_IDLE_MS));
  // Logins are rare enough to sweep expired sessions on each one (no scheduler needed).
  await deleteExpiredSessions(db);
  await insertSession(db, {
    idHash: await hashSessionId(id),
    userId: user.id,
    csrfToken,
    expiresAt,
    userAgent: meta.userAgent,
    ip: meta.ip,
    stage: meta.stage ?? 'signed-in',
    method: meta.method ?? 'password',
  });
  return { id, csrfToken, expiresAt };
}

/** The live session for a cookie value, sliding its idle expiry; null when unknown, expired or disabled. */
export async function loadSession(db: Db, id: string | undefined): Promise<UiSession | null> {
  if (!id || id.length > 100) return null;
  const idHash = await hashSessionId(id);
  const found = await getSessionWithUser(db, idHash);
  if (!found) return null;
  await slide(db, found.session);
  return {
    idHash,
    csrfToken: found.session.csrfToken,
    user: found.user,
    stage: found.session.stage,
    method: found.session.method,
    mfaEnrolled: found.mfaEnrolled,
  };
}

async function slide(db: Db, session: SessionRow): Promise<void> {
  if (session.stage === 'mfa') return;
  const now = Date.now();
  if (now - session.lastSeenAt.getTime() < SESSION_TOUCH_INTERVAL_MS) return;
  const cap = session.createdAt.getTime() + SESSION_MAX_AGE_MS;
  await touchSession(db, session.idHash, new Date(Math.min(now + SESSION_IDLE_MS, cap)));
}

/** Ends the session (logout). */
export async function endSession(db: Db, session: UiSession): Promise<void> {
  await deleteSession(db, session.idHash);
}

/** True when a submitted CSRF token matches the expected one (constant time). */
export function isValidCsrfToken(expected: string | undefined, submitted: unknown): boolean {
  return (
    typeof expected === 'string' &&
    expected.length >= 20 &&
    typeof submitted === 'string' &&
    timingSafeEqualString(expected, submitted)
  );
}
