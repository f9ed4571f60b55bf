// The newsroom's logo for print QR codes (ADR 0079): uploaded once by an admin, stored in Postgres
// (newsroom_logo), put in the middle of every print QR unless the editor or the API caller chooses no logo or
// another one. Accepted as the per-code upload is (lib/links/print_qr.ts: PNG or SVG by their first bytes, 256
// KiB, a PNG at most 2048 pixels per side); since it is kept and reused for every code, an SVG must also be a
// plain drawing. That check refuses, it does not rewrite: the SVG only ever goes into our SVG as an <image>,
// where browsers neither run scripts nor load anything, and the check keeps it so if it is ever used elsewhere.
import { ValidationError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import {
  deleteNewsroomLogo,
  getNewsroomLogo,
  putNewsroomLogo,
  type StoredNewsroomLogo,
} from '../stores/newsroom_logo_store.ts';
import type { Db } from '../stores/sql.ts';
import { decodeLogo, LOGO_MAX_BYTES, type QrFormat, type QrLogo, sniffLogo } from './print_qr.ts';

export type { StoredNewsroomLogo };

/**
 * What an SVG logo may not hold: scripts and event handlers, documents inside it, entity declarations, and any
 * reference that leaves the file (an href other than a fragment or an embedded raster, url() other than a
 * fragment, @import, javascript:).
 */
const ACTIVE_SVG = [
  /<\s*(?:[\w-]+:)?(?:script|foreignObject|iframe|embed|object|handler|listener)\b/i,
  /[\s"'/]on[a-z]+\s*=/i,
  /<!ENTITY/i,
  /<!DOCTYPE[^>]*\[/i,
  /javascript\s*:/i,
  /(?:^|[\s"'])(?:xlink:)?href\s*=\s*["']?\s*(?!["'#\s]|data:image\/(?:png|jpeg|gif|webp);base64,)/i,
  /url\(\s*["']?\s*(?!["'#\s])/i,
  /@import/i,
  /<\?xml-stylesheet/i,
];

/** True when an SVG's text holds nothing but a drawing (see ACTIVE_SVG). */
export function isPlainSvg(text: string): boolean {
  return !ACTIVE_SVG.some((pattern) => pattern.test(text));
}

/** Checks an uploaded logo file as the newsroom's logo (422 on the `logo` field); the logo to store. */
export function checkNewsroomLogo(bytes: Uint8Array): QrLogo {
  const refuse = (message: string) => new ValidationError([{ path: 'logo', message }]);
  if (bytes.byteLength === 0) throw refuse(fieldProblem('logoChooseFile'));
  if (bytes.byteLength > LOGO_MAX_BYTES)
    throw refuse(fieldProblem('logoTooLarge', { kib: LOGO_MAX_BYTES / 1024 }));
  const type = sniffLogo(bytes);
  if (!type) throw refuse(fieldProblem('logoType'));
  const logo: QrLogo = { type, bytes };
  if (type === 'image/png') decodeLogo(logo);
  else {
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw refuse(fieldProblem('logoType'));
    }
    if (!isPlainSvg(text)) throw refuse(fieldProblem('logoActiveContent'));
  }
  return logo;
}

/** Stores `bytes` as the newsroom's logo after checkNewsroomLogo; `actor` is who uploaded it. */
export async function setNewsroomLogo(db: Db, bytes: Uint8Array, actor: string): Promise<void> {
  const logo = checkNewsroomLogo(bytes);
  await putNewsroomLogo(db, { contentType: logo.type, bytes: logo.bytes, uploadedBy: actor });
}

/** Removes the newsroom's logo. */
export async function removeNewsroomLogo(db: Db): Promise<void> {
  await deleteNewsroomLogo(db);
}

/** The newsroom's logo with who uploaded it and when, or null. */
export function readNewsroomLogo(db: Db): Promise<StoredNewsroomLogo | null> {
  return getNewsroomLogo(db);
}

/** The newsroom's logo as a print QR takes it, or null when none was uploaded. */
export async function getNewsroomQrLogo(db: Db): Promise<QrLogo | null> {
  const stored = await getNewsroomLogo(db);
  return stored ? { type: stored.contentType, bytes: stored.bytes } : null;
}

/**
 * The logo of a print QR whose caller chose none: the newsroom's when one is stored and goes into `format` (an SVG
 * logo only into an SVG code), else no logo.
 */
export async function defaultQrLogo(db: Db, format: QrFormat): Promise<QrLogo | null> {
  const logo = await getNewsroomQrLogo(db);
  return logo && (logo.type === 'image/png' || format === 'svg') ? logo : null;
}

/** What a print QR's logo is: the newsroom's (stored), none, or one uploaded for this code. */
export type QrLogoChoice = 'newsroom' | 'none' | 'upload';

/**
 * The logo of a print QR: `newsroom` reads the stored one (422 on `logo` when there is none), `none` is no logo;
 * an uploaded file is the caller's to pass as `uploaded`.
 */
export async function resolveQrLogo(db: Db, choice: Exclude<QrLogoChoice, 'upload'>): Promise<QrLogo | null> {
  if (choice === 'none') return null;
  const logo = await getNewsroomQrLogo(db);
  if (!logo) throw new ValidationError([{ path: 'logo', message: fieldProblem('logoMissing') }]);
  return logo;
}
