import { chmod, mkdir, readdir } from 'node:fs/promises';

/** An output directory that cannot be used (not empty, not a directory, not writable). */
export class OutputDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutputDirError';
  }
}

/**
 * Makes `dir` ready for a new set of files: creates it (returns true) or accepts an existing empty one (false);
 * anything else is refused, so nothing of an earlier run is ever mixed in or overwritten. `mode`: the permissions
 * of the folder (and of parents it creates), also applied to an existing empty one, so an export never sits in a
 * folder others can list.
 */
export async function prepareOutputDir(
  dir: string,
  what: string,
  options: { mode?: number } = {},
): Promise<boolean> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      try {
        await mkdir(dir, { recursive: true, ...(options.mode !== undefined ? { mode: options.mode } : {}) });
        // mkdir's mode is narrowed by the umask; the folder itself gets exactly `mode`.
        if (options.mode !== undefined) await chmod(dir, options.mode);
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
  if (options.mode !== undefined) {
    try {
      await chmod(dir, options.mode);
    } catch (error) {
      throw new OutputDirError(
        `cannot set the permissions of ${dir} to ${options.mode.toString(8)}: ${(error as Error).message}`,
      );
    }
  }
  return false;
}
