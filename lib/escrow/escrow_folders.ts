import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { MANIFEST_FILE } from './escrow_manifest.ts';

/** Folders the Schedule writes under ESCROW_DIR: `lifeline-escrow-20261123T164000Z`. */
export const EXPORT_FOLDER_PATTERN = /^lifeline-escrow-\d{8}T\d{6}Z$/;

/** A folder name for a run at `at` (UTC, to the second; sorts by time). */
export function toExportFolderName(at: Date, prefix = 'lifeline-escrow'): string {
  const stamp = at
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
  return `${prefix}-${stamp}`;
}

async function hasFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Finished exports in `dir` (a manifest written), newest first; none when the directory does not exist. */
export async function listFinishedExports(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const finished: string[] = [];
  for (const name of names
    .filter((n) => EXPORT_FOLDER_PATTERN.test(n))
    .sort()
    .reverse()) {
    if (await hasFile(join(dir, name, MANIFEST_FILE))) finished.push(name);
  }
  return finished;
}

/**
 * Keeps the newest `keep` finished folders matching `pattern` (and `protect`, the one just written or served);
 * removes older ones, and unfinished ones (no `marker` file) older than the newest finished. Returns the names
 * removed.
 */
export async function pruneFolders(
  dir: string,
  options: { pattern: RegExp; marker: string; keep: number; protect?: string },
): Promise<string[]> {
  const names = (await readdir(dir))
    .filter((n) => options.pattern.test(n))
    .sort()
    .reverse();
  const removed: string[] = [];
  let finished = 0;
  let newestFinished: string | undefined;
  for (const name of names) {
    if (name === options.protect) {
      finished++;
      newestFinished ??= name;
      continue;
    }
    const done = await hasFile(join(dir, name, options.marker));
    if (done) {
      finished++;
      newestFinished ??= name;
      if (finished <= options.keep) continue;
    } else if (newestFinished === undefined || name > newestFinished) {
      continue;
    }
    await rm(join(dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
