import { createReadStream, existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { insertAuditEntry } from '../stores/audit_store.ts';
import type { Db } from '../stores/sql.ts';
import { listFinishedExports } from './escrow_folders.ts';
import {
  CHECKSUMS_FILE,
  type EscrowManifest,
  escrowManifestSchema,
  MANIFEST_FILE,
} from './escrow_manifest.ts';
import { SIGNATURE_FILE } from './escrow_signature.ts';

const BLOCK = 512;
const encoder = new TextEncoder();

/** A finished export as a download: a POSIX tar of its folder, streamed file by file (nothing is buffered). */
export interface ExportArchive {
  /** `lifeline-escrow-<time>.tar` */
  filename: string;
  folder: string;
  manifest: EscrowManifest;
  /** Exact length of the tar in bytes (Content-Length). */
  size: number;
  stream(): ReadableStream<Uint8Array>;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** A ustar header block; sizes past 8 GiB use the base-256 form GNU tar and bsdtar read. */
function header(name: string, size: number, mtime: number): Uint8Array {
  const block = new Uint8Array(BLOCK);
  const put = (text: string, at: number) => block.set(encoder.encode(text), at);
  put(name, 0);
  put(octal(0o600, 8), 100);
  put(octal(0, 8), 108);
  put(octal(0, 8), 116);
  if (size < 8 ** 11) put(octal(size, 12), 124);
  else {
    block[124] = 0x80;
    let rest = BigInt(size);
    for (let i = 135; i > 124; i--) {
      block[i] = Number(rest & 0xffn);
      rest >>= 8n;
    }
  }
  put(octal(Math.floor(mtime / 1000), 12), 136);
  put('        ', 148);
  block[156] = 0x30; // '0': a regular file
  put('ustar\0', 257);
  put('00', 263);
  put('lifeline', 265);
  put('lifeline', 297);
  let sum = 0;
  for (const byte of block) sum += byte;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return block;
}

/**
 * The newest finished export under ESCROW_DIR as a tar (manifest, its signature when there is one, SHA256SUMS and
 * the files the manifest lists, under one folder; entries 0600 as on disk), or null when there is none. The
 * manifest is read first and only the files it names are sent, so nothing else in the directory can leak into a
 * download.
 */
export async function openLatestExportArchive(escrowDir: string): Promise<ExportArchive | null> {
  const [folder] = await listFinishedExports(escrowDir);
  if (!folder) return null;
  const root = join(escrowDir, folder);
  const manifest = escrowManifestSchema.parse(JSON.parse(await readFile(join(root, MANIFEST_FILE), 'utf8')));
  const signed = existsSync(join(root, SIGNATURE_FILE));
  const names = [
    MANIFEST_FILE,
    ...(signed ? [SIGNATURE_FILE] : []),
    CHECKSUMS_FILE,
    ...manifest.files.map((f) => f.name),
  ];
  const entries: { name: string; size: number; mtime: number }[] = [];
  for (const name of names) {
    const info = await stat(join(root, name));
    entries.push({ name, size: info.size, mtime: info.mtimeMs });
  }
  const size = entries.reduce((sum, e) => sum + BLOCK + Math.ceil(e.size / BLOCK) * BLOCK, 0) + 2 * BLOCK;
  return {
    filename: `${folder}.tar`,
    folder,
    manifest,
    size,
    stream() {
      async function* blocks(): AsyncGenerator<Uint8Array> {
        for (const entry of entries) {
          yield header(`${folder}/${entry.name}`, entry.size, entry.mtime);
          let sent = 0;
          for await (const chunk of createReadStream(join(root, entry.name), { highWaterMark: 1 << 20 })) {
            const bytes = chunk as Buffer;
            // An export never changes after its manifest; if a file grew anyway, the tar stays well-formed.
            const room = entry.size - sent;
            if (room <= 0) break;
            const piece = bytes.length > room ? bytes.subarray(0, room) : bytes;
            sent += piece.length;
            yield new Uint8Array(piece.buffer, piece.byteOffset, piece.length);
          }
          if (sent < entry.size) throw new Error(`${entry.name} shrank while being sent`);
          const pad = (BLOCK - (entry.size % BLOCK)) % BLOCK;
          if (pad > 0) yield new Uint8Array(pad);
        }
        yield new Uint8Array(2 * BLOCK);
      }
      const source = blocks();
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await source.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
        async cancel() {
          await source.return(undefined);
        },
      });
    },
  };
}

/**
 * The latest export for an admin's download, audited (`escrow.downloaded`: who took a copy of every link, and
 * which), or null when ESCROW_DIR is unset or holds no finished export.
 */
export async function openExportDownload(
  deps: { sql: Db; escrowDir: string | undefined },
  actor: string,
): Promise<ExportArchive | null> {
  if (!deps.escrowDir) return null;
  const archive = await openLatestExportArchive(deps.escrowDir);
  if (!archive) return null;
  await insertAuditEntry(deps.sql, {
    code: null,
    actor,
    action: 'escrow.downloaded',
    after: { folder: archive.folder, snapshotAt: archive.manifest.snapshotAt, bytes: archive.size },
  });
  return archive;
}
