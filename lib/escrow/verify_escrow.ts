import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { EscrowError, type EscrowManifest, escrowManifestSchema, MANIFEST_FILE } from './escrow_manifest.ts';
import {
  checkManifestSignature,
  SIGNATURE_FILE,
  type SignatureOptions,
  type SignatureState,
} from './escrow_signature.ts';

const NEWLINE = 0x0a;

/** An export that matches its manifest, and how its signature was found. */
export interface VerifiedEscrow {
  manifest: EscrowManifest;
  signature: SignatureState;
}

/**
 * Checks an export folder before anything is loaded from it: with a signing key, the manifest's signature first
 * (escrow_signature.ts); then the manifest parses and describes a Lifeline escrow, and every file it lists is there
 * with exactly its size, SHA-256 and number of lines. Every problem is reported at once (EscrowError); the manifest
 * is returned when there is none.
 */
export async function verifyEscrow(dir: string, options: SignatureOptions = {}): Promise<VerifiedEscrow> {
  let text: string;
  try {
    const info = await stat(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') throw new EscrowError(`${dir} does not exist`);
      throw error;
    });
    if (!info.isDirectory()) throw new EscrowError(`${dir} is not a directory`);
    text = await readFile(join(dir, MANIFEST_FILE), 'utf8');
  } catch (error) {
    if (error instanceof EscrowError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new EscrowError(
        `no ${MANIFEST_FILE} in ${dir}: not an escrow export, or an export that did not finish`,
      );
    }
    throw new EscrowError(`cannot read ${dir}: ${(error as Error).message}`);
  }
  const signature = checkManifestSignature(dir, text, await readSignature(dir), options);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new EscrowError(`${MANIFEST_FILE} in ${dir} is not JSON: ${(error as Error).message}`);
  }
  const parsed = escrowManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(manifest)'}: ${i.message}`);
    throw new EscrowError(
      `${MANIFEST_FILE} in ${dir} is not a Lifeline escrow manifest:\n  ${problems.join('\n  ')}`,
    );
  }
  const manifest = parsed.data;
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const file of manifest.files) {
    if (seen.has(file.table)) problems.push(`${file.name}: table ${file.table} is listed twice`);
    seen.add(file.table);
    const path = join(dir, file.name);
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch {
      problems.push(`${file.name}: missing`);
      continue;
    }
    if (size !== file.bytes) {
      problems.push(`${file.name}: ${size} bytes, the manifest says ${file.bytes}`);
      continue;
    }
    const { sha256, lines } = await hashFile(path);
    if (sha256 !== file.sha256)
      problems.push(`${file.name}: SHA-256 ${sha256}, the manifest says ${file.sha256}`);
    else if (lines !== file.rows)
      problems.push(`${file.name}: ${lines} lines, the manifest says ${file.rows}`);
  }
  if (!seen.has('links')) problems.push('links.jsonl is not listed: nothing to restore');
  if (problems.length > 0) {
    throw new EscrowError(`the export in ${dir} does not match its manifest:\n  ${problems.join('\n  ')}`);
  }
  return { manifest, signature };
}

/** The signature file's text, or null when there is none. */
async function readSignature(dir: string): Promise<string | null> {
  try {
    return await readFile(join(dir, SIGNATURE_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new EscrowError(`cannot read ${SIGNATURE_FILE} in ${dir}: ${(error as Error).message}`);
  }
}

/** SHA-256 and line count of a file, streamed. */
async function hashFile(path: string): Promise<{ sha256: string; lines: number }> {
  const hash = createHash('sha256');
  let lines = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    const bytes = chunk as Buffer;
    hash.update(bytes);
    for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) lines++;
  }
  return { sha256: hash.digest('hex'), lines };
}
