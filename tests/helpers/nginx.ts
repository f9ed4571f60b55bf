import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { connect } from 'node:net';

/** Debian's nginx (`nginx-light`, installed by .ci/run). */
export const NGINX = '/usr/sbin/nginx';

/**
 * Runs nginx in the foreground on `configPath` with its own prefix (pid, logs, temp files) — one worker, as the
 * current user, never the system service — and waits until `port` accepts connections.
 */
export async function startNginx(options: { prefix: string; configPath: string; port: number }): Promise<{
  process: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}> {
  if (!existsSync(NGINX))
    throw new Error(`${NGINX} is missing: apt-get install -y nginx-light (.ci/run does it)`);
  mkdirSync(`${options.prefix}/logs`, { recursive: true });
  const child = spawn(
    NGINX,
    ['-p', options.prefix, '-e', 'stderr', '-c', options.configPath, '-g', 'daemon off;'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (d) => {
    output += d;
  });
  child.stderr!.on('data', (d) => {
    output += d;
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${output}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: options.port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not listen on ${options.port} within 60 s: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    process: child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
