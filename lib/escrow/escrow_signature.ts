import { createHmac, timingSafeEqual } from 'node:crypto';
import { EscrowError, MANIFEST_FILE } from './escrow_manifest.ts';

/** The manifest's signature, beside it: written before the manifest, so a finished export is signed whole. */
export const SIGNATURE_FILE = `${MANIFEST_FILE}.sig`;
const SIGNATURE_FORMAT = 'lifeline-escrow-signature';
const ALGORITHM = 'hmac-sha256';

/**
 * A short, stable name for a signing key (an HMAC of a fixed text, not the key's hash): an operator can tell
 * which key signed an export without the signature file revealing anything about the key.
 */
export function toSigningKeyId(key: string): string {
  return createHmac('sha256', key).update('lifeline escrow signing key id').digest('hex').slice(0, 16);
}

function mac(key: string, manifestText: string): string {
  return createHmac('sha256', key).update(manifestText, 'utf8').digest('hex');
}

/**
 * The signature file's text for a manifest: `lifeline-escrow-signature 1 hmac-sha256 <key id> <HMAC-SHA256 of
 * the manifest's bytes, hex>`. The manifest lists every file's size and SHA-256, so the signature covers them too.
 */
export function signManifest(manifestText: string, key: string): string {
  return `${SIGNATURE_FORMAT} 1 ${ALGORITHM} ${toSigningKeyId(key)} ${mac(key, manifestText)}\n`;
}

/** How an export's signature was found. */
export type SignatureState =
  /** Signed with the configured key, and the manifest is exactly what was signed. */
  | 'valid'
  /** No signature file, and no key configured: nothing to check. */
  | 'unsigned'
  /** No signature file although a key is configured; the operator allowed it (--allow-unsigned). */
  | 'unsigned-allowed'
  /** A signature file, but no key configured to check it with. */
  | 'not-checked';

export interface SignatureOptions {
  /** ESCROW_SIGNING_KEY: when set, an export must carry a valid signature made with it. */
  signingKey?: string | undefined;
  /** Restore an export without a signature file although a key is set (the operator's explicit choice). */
  allowUnsigned?: boolean;
}

/**
 * Checks `signatureText` (the signature file, null when absent) against the manifest's exact bytes. With a key,
 * a missing signature is refused unless `allowUnsigned`, and a wrong one always (another key, or a manifest
 * changed after signing); without a key nothing can be checked, and the state says so.
 */
export function checkManifestSignature(
  dir: string,
  manifestText: string,
  signatureText: string | null,
  options: SignatureOptions,
): SignatureState {
  const key = options.signingKey;
  if (!key) return signatureText === null ? 'unsigned' : 'not-checked';
  if (signatureText === null) {
    if (options.allowUnsigned) return 'unsigned-allowed';
    throw new EscrowError(
      `the export in ${dir} is not signed (no ${SIGNATURE_FILE}) but ESCROW_SIGNING_KEY is set: it may not be ` +
        'the export it claims to be. Restore it anyway only if you know where it came from: --allow-unsigned',
    );
  }
  const parts = signatureText.trim().split(' ');
  const [format, version, algorithm, keyId, signature] = parts;
  if (
    parts.length !== 5 ||
    format !== SIGNATURE_FORMAT ||
    version !== '1' ||
    algorithm !== ALGORITHM ||
    !/^[0-9a-f]{16}$/.test(keyId!)
  ) {
    throw new EscrowError(`${SIGNATURE_FILE} in ${dir} is not a Lifeline escrow signature`);
  }
  const expected = Buffer.from(mac(key, manifestText), 'hex');
  const given = /^[0-9a-f]{64}$/.test(signature!) ? Buffer.from(signature!, 'hex') : Buffer.alloc(0);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    const otherKey = keyId !== toSigningKeyId(key);
    throw new EscrowError(
      `the signature ${SIGNATURE_FILE} does not match the manifest in ${dir} under ESCROW_SIGNING_KEY: ` +
        (otherKey
          ? `it was signed with another key (key id ${keyId}, this one is ${toSigningKeyId(key)})`
          : 'the manifest was changed after it was signed') +
        '; nothing was restored',
    );
  }
  return 'valid';
}
