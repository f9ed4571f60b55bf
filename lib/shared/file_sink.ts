import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';

/** A file written in pieces with backpressure (memory stays flat), counting bytes and hashing what it wrote. */
export interface FileSink {
  write(data: string | Buffer): Promise<void>;
  /** Flushes and closes; returns the byte count and SHA-256 (hex) of everything written. */
  close(): Promise<{ bytes: number; sha256: string }>;
  /** Closes without waiting for anything (after a failure). */
  abort(): void;
}

/**
 * Opens `path` for writing; `exclusive`: refuse a file that already exists; `mode`: the permissions a new file is
 * created with (narrowed further by the umask; default 0o666 & ~umask).
 */
export async function openFileSink(
  path: string,
  options: { exclusive?: boolean; mode?: number } = {},
): Promise<FileSink> {
  const out: WriteStream = createWriteStream(path, {
    flags: options.exclusive ? 'wx' : 'w',
    highWaterMark: 1 << 20,
    ...(options.mode !== undefined ? { mode: options.mode } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    out.once('open', () => resolve());
    out.once('error', reject);
  });
  const hash = createHash('sha256');
  let bytes = 0;
  let failure: Error | undefined;
  out.on('error', (error) => {
    failure = error;
  });
  return {
    write(data) {
      if (failure) return Promise.reject(failure);
      const chunk = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      hash.update(chunk);
      bytes += chunk.length;
      if (out.write(chunk)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const onError = (error: Error) => {
          out.off('drain', onDrain);
          reject(error);
        };
        const onDrain = () => {
          out.off('error', onError);
          resolve();
        };
        out.once('drain', onDrain);
        out.once('error', onError);
      });
    },
    close() {
      return new Promise((resolve, reject) => {
        if (failure) {
          reject(failure);
          return;
        }
        out.end(() => (failure ? reject(failure) : resolve({ bytes, sha256: hash.digest('hex') })));
      });
    },
    abort() {
      out.destroy();
    },
  };
}
