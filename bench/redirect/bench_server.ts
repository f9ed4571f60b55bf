// A server under test, each in its own process: started, probed until it redirects, measured from /proc, stopped.

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { listChildPids } from '../../devkit/harness/process_tree.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { webNodeFlags } from '../../scripts/web_node_flags.ts';
import { CODE_PREFIX, ROOT, sleep } from './bench_settings.ts';

export interface BenchServer {
  /** Short key used in tables and logs (`ours`, `bare-map`, `nginx`…). */
  name: string;
  port: number;
  url: string;
  /** The process that serves requests (nginx: its worker), for CPU, RSS and context switches. */
  pid: number;
  /** What runs, for the report (entry file or binary). */
  what: string;
  /** Whether the server fills a cache from requests (a full in-order warm-up pass makes every lookup a hit). */
  fillsCache: boolean;
  /** Our own code (main.ts or scripts/start.ts): has /metrics with lookup counters. */
  ours: boolean;
  /**
   * The processes that serve requests when there are several (WEB_CONCURRENCY > 1: the web processes under the
   * primary): their CPU and RSS are summed. Absent: `pid` alone.
   */
  servingPids?: () => number[];
  /** Stops it (SIGTERM or the server's own graceful signal, SIGKILL after a grace period); how it exited. */
  /** SIGTERM, then SIGKILL after `graceMs` (10 s unless given); says how it ended. */
  stop(graceMs?: number): Promise<string>;
}

/** The bearer token our servers require on /metrics (METRICS_TOKEN); readOurCounters sends it. */
export const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789';

/** Environment every Node server of the bench starts with; the path adds its own. */
export function baseServerEnv(databaseUrl: string, port: number): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    // No load balancer: stop at once on SIGTERM (the default keeps serving 5 s with /readyz at 503).
    SHUTDOWN_DELAY_MS: '0',
    // Nothing in the bench talks to Temporal; a closed port keeps the lazy clients from finding a real one.
    TEMPORAL_ADDRESS: '127.0.0.1:9',
    METRICS_TOKEN: BENCH_METRICS_TOKEN,
  };
}

/** Keeps the last few KiB of a child's stderr, to explain a failed start. */
function tailStderr(child: ChildProcess): () => string {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  return () => stderr;
}

/** Polls `GET /<prefix>1` until it answers 301; throws with the child's stderr if it exits or never does. */
export async function waitForRedirect(
  name: string,
  url: string,
  child: ChildProcess,
  stderr: () => string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}): ${stderr()}`);
    const status = await httpGet(`${url}/${CODE_PREFIX}1`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 301) return;
    await sleep(200);
  }
  throw new Error(`${name} did not answer a redirect within ${timeoutMs / 1000} s: ${stderr()}`);
}

/** Sends `signal` and waits for the exit (SIGKILL after `graceMs`); returns how it exited ("exit 0"…). */
export async function stopChild(
  child: ChildProcess,
  graceMs = 10_000,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<string> {
  const describe = () => (child.exitCode !== null ? `exit ${child.exitCode}` : `signal ${child.signalCode}`);
  if (child.exitCode !== null || child.signalCode !== null) return `already gone (${describe()})`;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  return describe();
}

/**
 * Starts a TypeScript entry with `node --import tsx`. `root` is the checkout it belongs to (its cwd, so tsx and
 * every import resolve from that checkout's node_modules); its own node_modules/.bin/node runs it when present.
 */
export async function startNodeServer(options: {
  name: string;
  entry: string;
  env: Record<string, string>;
  databaseUrl: string;
  fillsCache: boolean;
  ours: boolean;
  root?: string;
  nodeArgs?: string[];
  /** Where the server's stdout goes (e.g. V8's --trace-deopt lines); discarded when unset. */
  stdoutFile?: string;
  startTimeoutMs?: number;
  /** The entry forks the processes that serve (WEB_CONCURRENCY > 1): count them, not the primary. */
  servedByChildren?: boolean;
  /**
   * Run this built file of `root` (e.g. dist/web.mjs, `npm run build`) with Node alone instead of the TypeScript
   * entry through tsx, as the production start does (scripts/lifeline.sh).
   */
  builtEntry?: string;
  /**
   * Run the migration step first, with the same settings (the port, and so the short domain, included), as the
   * image's migrate job runs before the web processes: its review of the stored targets is then done when the
   * server starts (ADR 0102). Without it, a start on a port the database has not seen reviews every link itself.
   */
  migrateFirst?: boolean;
}): Promise<BenchServer> {
  const root = options.root ?? ROOT;
  const port = await getFreePort();
  const ownNode = join(root, 'node_modules/.bin/node');
  const node = root !== ROOT && existsSync(ownNode) ? ownNode : process.execPath;
  // Ours runs with the web tier's Node flags from its checkout's package.json, as `npm run web` starts it.
  const flags = options.ours ? webNodeFlags(root) : [];
  const entry = options.builtEntry ? [options.builtEntry] : ['--import', 'tsx', options.entry];
  const env = { ...baseServerEnv(options.databaseUrl, port), ...options.env };
  if (options.migrateFirst) {
    const migrate = options.builtEntry
      ? [join(dirname(options.builtEntry), 'migrate.mjs')]
      : ['--import', 'tsx', 'scripts/migrate.ts'];
    await promisify(execFile)(node, migrate, { cwd: root, env }).catch((error: { stderr?: string }) => {
      throw new Error(`${options.name}: the migration step failed: ${error.stderr ?? String(error)}`);
    });
  }
  const child = spawn(node, [...flags, ...(options.nodeArgs ?? []), ...entry], {
    cwd: root,
    env,
    stdio: ['ignore', options.stdoutFile ? openSync(options.stdoutFile, 'w') : 'ignore', 'pipe'],
  });
  const stderr = tailStderr(child);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForRedirect(options.name, url, child, stderr, options.startTimeoutMs);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    name: options.name,
    port,
    url,
    pid: child.pid!,
    what:
      root === ROOT
        ? (options.builtEntry ?? options.entry)
        : `${join(root, options.builtEntry ?? options.entry)} (node ${node})`,
    fillsCache: options.fillsCache,
    ours: options.ours,
    ...(options.servedByChildren ? { servingPids: () => listChildPids(child.pid!) } : {}),
    stop: (graceMs?: number) => stopChild(child, graceMs),
  };
}

/** The processes whose CPU and RSS a server's figures are (see BenchServer.servingPids). */
export function servingPidsOf(server: BenchServer): number[] {
  const pids = server.servingPids?.() ?? [];
  return pids.length > 0 ? pids : [server.pid];
}

/** CPU time of several processes, summed (microseconds). */
export function readCpuMicrosOf(pids: number[]): { user: number; system: number } {
  let user = 0;
  let system = 0;
  for (const pid of pids) {
    const cpu = readCpuMicros(pid);
    user += cpu.user;
    system += cpu.system;
  }
  return { user, system };
}

/** RSS of several processes, summed (MiB, one decimal; shared pages count once per process). */
export function readRssMiBOf(pids: number[]): number {
  return Math.round(pids.reduce((n, pid) => n + readRssMiB(pid), 0) * 10) / 10;
}

/** A GET without keep-alive: status and body. */
export function httpGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.setTimeout(5_000, () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/** Resident memory of a process, MiB (one decimal). */
export function readRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round((kib / 1024) * 10) / 10;
}

/**
 * Context switches of the process's main thread (the event loop): `slept` when it waited for work (epoll),
 * `preempted` when the scheduler took the CPU away (e.g. to run the woken load generator on the same core).
 */
export function readSwitches(pid: number): { slept: number; preempted: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    slept: Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0),
    preempted: Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0),
  };
}

/** CPU time the process has used in user space and in the kernel (socket calls), in microseconds. */
export function readCpuMicros(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
}

/**
 * Minor page faults of several processes, summed: a fault per page of memory touched for the first time since
 * the kernel last took it back (a young generation the engine keeps releasing and touching again shows here).
 */
export function readMinorFaultsOf(pids: number[]): number {
  let faults = 0;
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    faults += Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
  }
  return faults;
}
