import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { getDevServerArgs } from './temporal_cli.ts';

export interface DevServer {
  address: string;
  child: ChildProcess;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Kills a dev server a previous run left behind (its pid file survived a hard kill, or a second Ctrl-C made
 * that run exit without waiting for the dev server's own shutdown), and waits until it is gone: its ports are
 * free only then.
 */
async function killStale(pidFile: string, log: (msg: string) => void): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (pid > 0 && isAlive(pid)) {
    log(`Stopping a Temporal dev server left running by an earlier start (pid ${pid}).`);
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    const deadline = Date.now() + 10_000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  }
  rmSync(pidFile, { force: true });
}

/** The dev server exited before it served; `output` is the end of what it wrote to stderr. */
export class DevServerExitedError extends Error {
  constructor(
    readonly code: number | null,
    readonly output: string,
  ) {
    const lastLine = output.trim().split('\n').at(-1) ?? '';
    super(`the Temporal dev server exited with ${code}${lastLine ? `: ${lastLine.slice(0, 600)}` : ''}`);
  }
}

/** Waits until the frontend answers a health check (the CLI takes a few seconds on 2 cores). */
async function waitUntilServing(address: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    // Its output is added by the caller, once the last of it has been read.
    if (child.exitCode !== null) throw new DevServerExitedError(child.exitCode, '');
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.healthService.check({});
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(
    `the Temporal dev server did not answer at ${address} within ${timeoutMs} ms: ${lastError}`,
  );
}

/**
 * The ports we give the CLI are checked free; the others it needs (its HTTP API and each internal service's gRPC
 * and membership ports) it picks itself, from the same ephemeral range that every outgoing connection on the
 * machine draws its local port from. Between its pick and its bind, seconds apart on 2 busy cores, another process
 * can take one, and the CLI exits with "bind: address already in use". A new start picks new ports, so that exit
 * is met by starting again, a bounded number of times.
 */
const LOST_PORT = /bind: address already in use/;
const START_ATTEMPTS = 3;
/** How much of the CLI's stderr is kept for an error message. */
const OUTPUT_TAIL_CHARS = 8_192;

// On Linux the dev server is started through util-linux's `setpriv --pdeathsig SIGTERM`, which asks the kernel to
// send it SIGTERM the moment the process that started it dies, however it dies (SIGKILL included), and then execs
// the CLI (the pid stays the CLI's). Without it a hard-killed `npm start` left the dev server holding its ports,
// and a start in any other checkout then refused with "Port 7233 is taken". Elsewhere (no setpriv: macOS) the
// pid file below is the only cleanup: the next start in the same data directory stops what was left.
const SETPRIV =
  process.platform === 'linux' ? ['/usr/bin/setpriv', '/bin/setpriv'].find(existsSync) : undefined;

/** The command that runs `cli args`, ended by the kernel when this process dies where that is possible. */
export function getDevServerCommand(cli: string, args: string[]): [string, string[]] {
  return SETPRIV ? [SETPRIV, ['--pdeathsig', 'SIGTERM', '--', cli, ...args]] : [cli, args];
}

/**
 * Starts `temporal server start-dev` in its own process group (so a terminal's Ctrl-C reaches only us and
 * we stop it last, after the worker drained), ended by the kernel if we die first (above), records its pid, and
 * waits until it serves.
 */
export async function startDevServer(options: {
  cli: string;
  port: number;
  uiPort?: number;
  dbFilename?: string;
  pidFile?: string;
  log: (msg: string) => void;
  output?: 'inherit' | 'ignore';
}): Promise<DevServer> {
  if (options.pidFile) await killStale(options.pidFile, options.log);
  if (options.dbFilename) mkdirSync(dirname(options.dbFilename), { recursive: true });
  for (let attempt = 1; ; attempt++) {
    await assertOwnPortsFree(options);
    try {
      return await startOnce(options);
    } catch (error) {
      if (
        !(error instanceof DevServerExitedError) ||
        !LOST_PORT.test(error.output) ||
        attempt >= START_ATTEMPTS
      )
        throw error;
      const lost = /listen tcp ([^:\s]+:\d+): bind: address already in use/.exec(error.output)?.[1];
      options.log(
        `The Temporal dev server lost a port it had picked${lost ? ` (${lost})` : ''} to another process; ` +
          `starting it again (attempt ${attempt + 1} of ${START_ATTEMPTS}).`,
      );
    }
  }
}

async function assertOwnPortsFree(options: { port: number; uiPort?: number }): Promise<void> {
  for (const port of [options.port, options.uiPort].filter((p): p is number => p !== undefined)) {
    if (!(await isPortFree(port))) {
      throw new Error(
        `Port ${port} is taken, so the Temporal dev server cannot start. Stop what uses it, ` +
          'or set TEMPORAL_ADDRESS to use a Temporal server that is already running.',
      );
    }
  }
}

async function startOnce(options: Parameters<typeof startDevServer>[0]): Promise<DevServer> {
  const args = getDevServerArgs(options);
  const [command, commandArgs] = getDevServerCommand(options.cli, args);
  // stderr comes through a pipe, copied on unless the caller ignores it, so that an early exit can say why. (If
  // we exit while it is still stopping, as on a second Ctrl-C, a late write ends it by SIGPIPE: it was being
  // stopped, and the next start clears what is left, above.)
  const child = spawn(command, commandArgs, {
    detached: true,
    stdio: ['ignore', options.output ?? 'ignore', 'pipe'],
  });
  let output = '';
  let serving = false;
  child.stderr!.on('data', (chunk: Buffer) => {
    if (options.output !== 'ignore') process.stderr.write(chunk);
    if (!serving) output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  });
  if (options.pidFile && child.pid) writeFileSync(options.pidFile, String(child.pid));
  const address = `127.0.0.1:${options.port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (graceMs = 10_000) => {
    if (child.exitCode === null && child.signalCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {}
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {}
      }, graceMs);
      await exited;
      clearTimeout(timer);
    }
    if (options.pidFile) rmSync(options.pidFile, { force: true });
  };
  try {
    await waitUntilServing(address, child, 60_000);
  } catch (error) {
    await stop(1_000);
    // The exit code is set a moment before the last of stderr is read: wait (briefly) for the stream to close.
    if (error instanceof DevServerExitedError && !child.stderr!.closed)
      await new Promise((resolve) => {
        child.stderr!.once('close', resolve);
        setTimeout(resolve, 2_000).unref();
      });
    throw error instanceof DevServerExitedError ? new DevServerExitedError(error.code, output) : error;
  }
  serving = true;
  return { address, child, stop };
}

/** A free TCP port on loopback. */
export async function getFreePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
