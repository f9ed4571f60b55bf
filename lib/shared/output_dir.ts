import { mkdir, readdir } from 'node:fs/promises';

/** An output directory that cannot be used (not empty, not a directory, not writable). */
export class OutputDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutputDirError';
  }
}

/**
 * Makes `dir` ready for a new set of files: creates it (returns true) or accepts an existing empty one (false);
 * anything else is refused, so nothing of an earlier run is ever mixed in or overwritten.
 */
export async function prepareOutputDir(dir: string, what: string): Promise<boolean> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      try {
        await mkdir(dir, { recursive: true });
      } catch (mkdirError) {
        throw new OutputDirError(`cannot create ${dir}: ${(mkdirError as Error).message}`);
      }
      return true;
    }
    if (code === 'ENOTDIR') throw new OutputDirError(`${dir} is not a directory`);
    throw new OutputDirError(`cannot read ${dir}: ${(error as Error).message}`);
  }
  if (entries.length > 0) {
    throw new OutputDirError(
      `${dir} is not empty (${entries.length} entries); ${what} goes into a new or empty directory`,
    );
  }
  return false;
}
