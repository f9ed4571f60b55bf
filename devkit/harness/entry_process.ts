import { type ChildProcess, spawn } from 'node:child_process';
import { delimiter, dirname } from 'node:path';
import { getFreePort } from '../../scripts/dev_server.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { HARNESS_ADMIN, type Harness } from './harness.ts';
import { listChildPids } from './process_tree.ts';

/** A real entry (main.ts, workers/main.ts) in a child process, started as production starts it. */
export interface EntryProcess {
  child: ChildProcess;
  /** Its stdout and stderr as they arrived (the last `keepChars` characters of each view). */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Its exit code; null when a signal ended it. */
  exited: Promise<number | null>;
  /**
   * Resolves once its output shows `text` (checked as each chunk arrives, so nothing scrolls past unseen);
   * rejects with the output's tail when it exits first or `timeoutMs` passes (Infinity: never).
   */
  waitForOutput(text: string | RegExp, options?: { timeoutMs?: number; what?: string }): Promise<void>;
  /** SIGTERM, and SIGKILL if it still runs after `killAfterMs` (default: wait); its exit code. */
  stop(options?: { killAfterMs?: number }): Promise<number | null>;
  /** SIGKILL to it and its direct children (the web processes of a WEB_CONCURRENCY primary), if it runs. */
  kill(): void;
}

export interface EntryOptions {
  /** Its environment: PATH and HOME of this process, then these (or all of this process's: `inheritEnv`). */
  env: Record<string, string>;
  inheritEnv?: boolean;
  /** Node flags before tsx; modules imported after it (a probe). */
  nodeFlags?: string[];
  imports?: string[];
  /** An IPC channel (child.send / 'message'). */
  ipc?: boolean;
  /** How much of each output view to keep; unbounded by default (long e2e runs bound it). */
  keepChars?: number;
  /**
   * Run the built entry instead of the source: `scripts/lifeline.sh <role>` on dist/ (`npm run build` first),
   * with the Node of this process first on PATH; `nodeFlags` and `imports` do not apply (the script sets the
   * entry's flags, as in production).
   */
  built?: 'web' | 'worker';
}

/** Starts `node --import tsx <script>` in the repository root. */
export function startEntry(script: string, options: EntryOptions): EntryProcess {
  const keep = options.keepChars ?? Number.POSITIVE_INFINITY;
  const base = options.inheritEnv
    ? process.env
    : { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' };
  const stdio = ['ignore', 'pipe', 'pipe', ...(options.ipc ? (['ipc'] as const) : [])] as const;
  const env = { ...base, ...options.env };
  const child = options.built
    ? spawn('sh', ['scripts/lifeline.sh', options.built], {
        cwd: ROOT,
        stdio: [...stdio],
        env: { ...env, PATH: `${dirname(process.execPath)}${delimiter}${env.PATH ?? ''}` },
      })
    : spawn(
        process.execPath,
        [
          ...(options.nodeFlags ?? []),
          '--import',
          'tsx',
          ...(options.imports ?? []).flatMap((module) => ['--import', module]),
          script,
        ],
        { cwd: ROOT, stdio: [...stdio], env },
      );
  const views = { output: '', stdout: '', stderr: '' };
  const watchers = new Set<() => void>();
  const trim = (text: string) => (text.length > keep ? text.slice(-keep) : text);
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream]!.on('data', (chunk: Buffer) => {
      views[stream] = trim(views[stream] + chunk);
      views.output = trim(views.output + chunk);
      for (const watcher of watchers) watcher();
    });
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // 'close' comes after the last chunk of output, 'exit' may come before it.
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const running = () => child.exitCode === null && child.signalCode === null;

  return {
    child,
    output: () => views.output,
    stdout: () => views.stdout,
    stderr: () => views.stderr,
    exited,
    waitForOutput(text, { timeoutMs = 90_000, what = `${script} to print ${text}` } = {}) {
      const shows = () => (typeof text === 'string' ? views.output.includes(text) : text.test(views.output));
      return new Promise<void>((resolve, reject) => {
        const done = (error?: Error) => {
          watchers.delete(watcher);
          clearTimeout(timer);
          if (error) reject(error);
          else resolve();
        };
        const watcher = () => {
          if (shows()) done();
        };
        const timer = Number.isFinite(timeoutMs)
          ? setTimeout(
              () => done(new Error(`timed out waiting for ${what}:\n${views.output.slice(-3000)}`)),
              timeoutMs,
            )
          : undefined;
        timer?.unref();
        watchers.add(watcher);
        void closed.then((code) => {
          if (shows()) done();
          else done(new Error(`${script} exited (${code}) before ${what}:\n${views.output.slice(-3000)}`));
        });
        watcher();
      });
    },
    async stop({ killAfterMs } = {}) {
      if (!running()) return child.exitCode;
      child.kill('SIGTERM');
      const timer =
        killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    kill() {
      if (!child.pid || !running()) return;
      for (const pid of listChildPids(child.pid)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone since it was listed.
        }
      }
      child.kill('SIGKILL');
    },
  };
}

/**
 * A web entry on its own: a port on loopback, a database, and a Temporal address nothing answers (the web tier
 * connects lazily, and these processes start no workflow); it stops at once on SIGTERM.
 */
export async function standaloneWebEnv(port: number, databaseUrl: string): Promise<Record<string, string>> {
  return {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: `127.0.0.1:${await getFreePort()}`,
    SHUTDOWN_DELAY_MS: '0',
    LOG_LEVEL: 'info',
  };
}

/** What an entry needs to join a harness's world: its database, Temporal, task queue and credentials. */
export function harnessEntryEnv(h: Harness): Record<string, string> {
  return {
    DATABASE_URL: h.db.url,
    TEMPORAL_ADDRESS: h.temporal.address,
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    SHORT_BASE_URL: h.config.shortBaseUrl,
    BOOTSTRAP_API_KEY: h.apiKey,
    WORDPRESS_WEBHOOK_SECRET: h.webhookSecret,
    ADMIN_EMAIL: HARNESS_ADMIN.email,
    ADMIN_PASSWORD: HARNESS_ADMIN.password,
    LOG_LEVEL: 'info',
  };
}

/**
 * harnessEntryEnv for a web entry answering at `url` (its port, on loopback; the short base URL), with no load
 * balancer to wait for: it stops at once on SIGTERM.
 */
export function harnessWebEnv(h: Harness, url: string): Record<string, string> {
  return {
    ...harnessEntryEnv(h),
    PORT: new URL(url).port,
    HOST: '127.0.0.1',
    SHORT_BASE_URL: url,
    SHUTDOWN_DELAY_MS: '0',
  };
}
