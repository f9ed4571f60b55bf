import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { getFreePort } from '../../scripts/dev_server.ts';

/** A redis-server of this test's own on a free port, so a test may stop, freeze or kill it. */
export interface PrivateRedis {
  url: string;
  port: number;
  process: ChildProcess;
  /** SIGSTOP / SIGCONT: the server keeps its sockets but answers nothing (a hung Redis). */
  freeze(): void;
  thaw(): void;
  /** Kills it and waits for the exit. */
  stop(): Promise<void>;
}

/** Starts a private redis-server (no persistence) and waits until it accepts connections. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await getFreePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) break;
    if (Date.now() > deadline) throw new Error('private redis-server did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    process: child,
    freeze: () => child.kill('SIGSTOP'),
    thaw: () => child.kill('SIGCONT'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
