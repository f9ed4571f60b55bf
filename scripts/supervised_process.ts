// The child processes `npm start` supervises (scripts/start.ts; ADR 0022): each in a session of its own (a
// terminal's Ctrl-C reaches npm start alone, which stops them in order), with an IPC channel (a child notices when
// npm start is gone), its output line by line with a prefix, and a niceness for background work.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { Readable } from 'node:stream';

export interface SupervisedProcess {
  /** How its lines are prefixed and how messages name it ("web", "worker", "pglite"). */
  name: string;
  child: ChildProcess;
  pid: number;
  /** Its niceness (0: as npm start's own). */
  nice: number;
  /** Resolves once it has exited, saying how ("exit 0", "signal SIGKILL"). */
  exited: Promise<string>;
  /** Whether it has exited. */
  gone(): boolean;
  /** True once `stop` was called: its exit from then on is expected. */
  stopping: boolean;
  /** SIGTERM (or `signal`), then SIGKILL after `graceMs`; resolves with how it ended. */
  stop(graceMs: number, signal?: NodeJS.Signals): Promise<string>;
  /** Sends a signal now, ignoring a process that is gone (for the last resort on exit). */
  signal(signal: NodeJS.Signals): void;
}

/** Copies `from` to `to` line by line, each line prefixed (a last line without newline is kept until the end). */
function prefixLines(from: Readable, to: NodeJS.WritableStream, prefix: string): void {
  let rest = '';
  from.setEncoding('utf8');
  from.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    if (lines.length > 0) to.write(lines.map((line) => `${prefix}${line}\n`).join(''));
  });
  from.on('end', () => {
    if (rest) to.write(`${prefix}${rest}\n`);
    rest = '';
  });
}

const NICE_BINARY = ['/usr/bin/nice', '/bin/nice'].find((path) => existsSync(path));

/**
 * Lowers a child's priority: `nice` starts it niced, so every thread it makes is (os.setPriority changes one
 * thread only: Node's own threads, started before we could call it, would keep running at full priority). Where
 * the kernel groups tasks by session (autogroup: a desktop Linux), niceness only counts inside the group, and
 * each child has a session of its own, so the group's niceness is set too.
 */
function lowerPriority(pid: number, nice: number, viaBinary: boolean): void {
  if (!viaBinary) {
    try {
      setPriority(pid, nice);
    } catch {}
  }
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {}
}

/** Starts `node <args>` (process.execPath) under supervision. */
export function spawnSupervised(options: {
  name: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  nice?: number;
}): SupervisedProcess {
  const nice = options.nice ?? 0;
  const viaBinary = nice > 0 && NICE_BINARY !== undefined && process.platform !== 'win32';
  const [command, args]: [string, string[]] = viaBinary
    ? [NICE_BINARY!, ['-n', String(nice), process.execPath, ...options.args]]
    : [process.execPath, options.args];
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const prefix = `[${options.name}] `;
  prefixLines(child.stdout!, process.stdout, prefix);
  prefixLines(child.stderr!, process.stderr, prefix);
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code !== null ? `exit ${code}` : `signal ${signal}`));
    child.once('error', (error) => resolve(`failed to start: ${error.message}`));
  });
  let isGone = false;
  void exited.then(() => {
    isGone = true;
  });
  if (child.pid && nice > 0) lowerPriority(child.pid, nice, viaBinary);
  const supervised: SupervisedProcess = {
    name: options.name,
    child,
    pid: child.pid ?? 0,
    nice,
    exited,
    gone: () => isGone,
    stopping: false,
    async stop(graceMs, signal = 'SIGTERM') {
      supervised.stopping = true;
      if (isGone) return exited;
      supervised.signal(signal);
      const timer = setTimeout(() => supervised.signal('SIGKILL'), graceMs);
      const how = await exited;
      clearTimeout(timer);
      return how;
    },
    signal(signal) {
      if (isGone || !child.pid) return;
      try {
        process.kill(child.pid, signal);
      } catch {}
    },
  };
  return supervised;
}
