import { isPossibleCode } from '../codes/code_rules.ts';
import type { StaticAnswer } from './static_answer.ts';

/**
 * Snapshot files are served by a web server's own user, so they are readable by others; never group- or
 * world-writable whatever the umask (nginx includes its configuration from here as root).
 */
export const SNAPSHOT_FILE_MODE = 0o644;
export const SNAPSHOT_FOLDER_MODE = 0o755;

/**
 * A code as it may appear in a file name, a rule or a map key: write_snapshot.ts admits only codes that pass the
 * code rule, and a writer refuses anything else rather than trust its caller with a path.
 */
export function requireSnapshotCode(code: string): string {
  if (!isPossibleCode(code)) throw new Error('a snapshot writer was given a code that breaks the code rule');
  return code;
}

/** What every format's writer is given. */
export interface SnapshotWriterOptions {
  /** Where the files are written (`<outDir>/<format>/`). */
  outDir: string;
  /** Where they will be served from (absolute paths in nginx's configuration); default `outDir`. */
  publicDir: string;
  shortBaseUrl: string;
  /** nginx `listen` and `server_name`. */
  listen: string;
  serverName: string;
  generatedAt: string;
  /** What an unknown code answers. */
  notFound: { status: number; cacheControl: string };
  rootRedirectUrl: string | undefined;
  /** Length of the longest code in the snapshot. */
  longestCode: number;
  /** The prefix of the nginx writer's variables (nginxPrefixOf the domain); default `lifeline`. */
  nginxPrefix?: string;
}

/** One format's writer: answers arrive in code order, once each. */
export interface SnapshotWriter {
  add(answer: StaticAnswer): Promise<void>;
  /** Writes what depends on all answers; returns the files (relative to outDir) and what it left out. */
  finish(): Promise<{ files: string[]; entries: number; skipped: string[] }>;
  abort(): void;
}
