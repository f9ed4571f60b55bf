import type { StaticAnswer } from './static_answer.ts';

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
}

/** One format's writer: answers arrive in code order, once each. */
export interface SnapshotWriter {
  add(answer: StaticAnswer): Promise<void>;
  /** Writes what depends on all answers; returns the files (relative to outDir) and what it left out. */
  finish(): Promise<{ files: string[]; entries: number; skipped: string[] }>;
  abort(): void;
}
