// A second factor for local (password) accounts: TOTP enrolment and checks, and single-use recovery codes.
// docs/adr/0084-staff-identity.md. OpenID Connect accounts get theirs from the identity provider.
import QRCode from 'qrcode';
import { sha256Hex } from '../shared/crypto.ts';
import { AppError, ValidationError } from '../shared/errors.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import {
  acceptTotpStep,
  countUnusedRecoveryCodes,
  deleteTotp,
  getTotp,
  putPendingTotp,
  replaceRecoveryCodes,
  useRecoveryCode,
} from '../stores/mfa_store.ts';
import type { Db, Sql } from '../stores/sql.ts';
import { generateTotpSecret, matchTotp, totpUri } from './totp.ts';

/** Recovery codes handed out at enrolment (and on each renewal). */
export const RECOVERY_CODE_COUNT = 10;
/** The issuer name authenticator apps show beside the account. */
export const TOTP_ISSUER = 'Lifeline';

/** A second factor is enrolled already: a new secret would silently replace the phone's. */
export class MfaAlreadyEnrolledError extends AppError {
  constructor() {
    super(409, 'mfa-enrolled', 'Second factor already set up', 'A second factor is already set up.');
  }
}

/** A recovery code: ten characters from 0-9 a-z without look-alikes, shown as two groups of five (≈ 50 bits). */
function newRecoveryCode(): string {
  const alphabet = '23456789abcdefghjkmnpqrstuvwxyz';
  // Rejection sampling: only bytes below the largest multiple of the alphabet's length, so no letter is likelier.
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < 10) {
    for (const b of crypto.getRandomValues(new Uint8Array(16))) {
      if (b < limit && out.length < 10) out += alphabet[b % alphabet.length];
    }
  }
  return `${out.slice(0, 5)}-${out.slice(5, 10)}`;
}

/** What is compared: lower case, no spaces or dashes (people type them as they like). */
function normaliseRecoveryCode(typed: string): string {
  return typed.toLowerCase().replace(/[\s-]/g, '');
}

const hashRecoveryCode = (code: string) => sha256Hex(`lifeline-recovery:${normaliseRecoveryCode(code)}`);

export interface MfaEnrolment {
  secret: string;
  uri: string;
  /** The URI as an SVG QR code in a data: URL, for the enrolment page's image (the CSP allows data: images). */
  qrDataUrl: string;
}

/** Whether `userId` has a confirmed second factor, and how many recovery codes are left. */
export async function getMfaState(
  db: Db,
  userId: number,
): Promise<{ enrolled: boolean; recoveryLeft: number }> {
  const totp = await getTotp(db, userId);
  const enrolled = Boolean(totp?.confirmedAt);
  return { enrolled, recoveryLeft: enrolled ? await countUnusedRecoveryCodes(db, userId) : 0 };
}

/** The pending enrolment of `userId`, made now or kept from before (a reload shows the same secret). */
export async function startMfaEnrolment(
  db: Db,
  user: { id: number; email: string },
  options: { fresh?: boolean } = {},
): Promise<MfaEnrolment> {
  const existing = await getTotp(db, user.id);
  if (existing?.confirmedAt) throw new MfaAlreadyEnrolledError();
  let secret = existing?.secret;
  if (!secret || options.fresh) {
    secret = generateTotpSecret();
    if (!(await putPendingTotp(db, user.id, secret))) throw new MfaAlreadyEnrolledError();
  }
  const uri = totpUri(secret, user.email, TOTP_ISSUER);
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return { secret, uri, qrDataUrl: `data:image/svg+xml;base64,${btoa(svg)}` };
}

/**
 * Confirms the pending secret with a code made from it (so the phone has it), and hands out the recovery codes
 * (shown once; only their hashes are kept). A wrong code: ValidationError naming `code`.
 */
export async function confirmMfaEnrolment(
  sql: Sql,
  user: { id: number; email: string },
  typed: string,
  now = Date.now(),
): Promise<string[]> {
  return sql.begin(async (tx) => {
    const totp = await getTotp(tx, user.id);
    if (!totp) throw new ValidationError([{ path: 'code', message: 'Start the set-up again.' }]);
    if (totp.confirmedAt) throw new MfaAlreadyEnrolledError();
    const step = await matchTotp(totp.secret, typed, now, totp.lastStep);
    if (step === null || !(await acceptTotpStep(tx, user.id, step, true))) {
      throw new ValidationError([{ path: 'code', message: 'That code is not right; type the newest one.' }]);
    }
    const codes = await issueRecoveryCodes(tx, user.id);
    await insertAuditEntry(tx, {
      code: null,
      actor: user.email,
      action: 'user.mfa_enrolled',
      after: { id: user.id },
    });
    return codes;
  });
}

async function issueRecoveryCodes(db: Db, userId: number): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await replaceRecoveryCodes(db, userId, await Promise.all(codes.map(hashRecoveryCode)));
  return codes;
}

/** New recovery codes for an enrolled user (the old ones stop working). */
export async function renewRecoveryCodes(sql: Sql, user: { id: number; email: string }): Promise<string[]> {
  return sql.begin(async (tx) => {
    if (!(await getTotp(tx, user.id))?.confirmedAt) {
      throw new ValidationError([{ path: 'code', message: 'Set up a second factor first.' }]);
    }
    const codes = await issueRecoveryCodes(tx, user.id);
    await insertAuditEntry(tx, {
      code: null,
      actor: user.email,
      action: 'user.recovery_codes_renewed',
      after: { id: user.id },
    });
    return codes;
  });
}

/**
 * Checks the second factor at sign-in: a current TOTP code (±1 step, never one already accepted), or an unused
 * recovery code (used up by this). Returns how it was met, or null.
 */
export async function verifySecondFactor(
  db: Db,
  userId: number,
  typed: string,
  now = Date.now(),
): Promise<'totp' | 'recovery' | null> {
  const totp = await getTotp(db, userId);
  if (!totp?.confirmedAt) return null;
  const trimmed = typed.trim();
  if (/^\d{6}$/.test(trimmed.replace(/\s/g, ''))) {
    const step = await matchTotp(totp.secret, trimmed, now, totp.lastStep);
    return step !== null && (await acceptTotpStep(db, userId, step, false)) ? 'totp' : null;
  }
  if (normaliseRecoveryCode(trimmed).length !== 10) return null;
  return (await useRecoveryCode(db, userId, await hashRecoveryCode(trimmed))) ? 'recovery' : null;
}

/** An admin removes a user's second factor (a lost phone and no recovery codes left); they enrol again. */
export async function resetSecondFactor(
  sql: Sql,
  userId: number,
  actor: { id: number; name: string },
): Promise<boolean> {
  return sql.begin(async (tx) => {
    const removed = await deleteTotp(tx, userId);
    if (removed) {
      await insertAuditEntry(tx, {
        code: null,
        actor: actor.name,
        action: 'user.mfa_reset',
        after: { id: userId },
      });
    }
    return removed;
  });
}
