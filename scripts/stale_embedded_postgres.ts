// A PGlite process an earlier `npm start` left behind: stopped and waited for, so two never open one data directory.
import { existsSync, readFileSync, rmSync } from 'node:fs';

/** Whether `pid` runs (a zombie, gone but not yet reaped by whoever inherited it, does not). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return true; // no /proc: the signal's answer stands
  }
}

/** Whether `pid` runs our PGlite entry (where /proc says; elsewhere the pid file is trusted). */
function isEmbeddedPostgres(pid: number): boolean {
  if (!existsSync('/proc/self/cmdline')) return true;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('embedded_postgres_main');
  } catch {
    return false;
  }
}

/**
 * Stops a PGlite process an earlier start left behind (it was told to close when that start exited, and may still
 * be closing), and waits until it is gone: two processes must never open the data directory at once.
 */
export async function stopStaleEmbeddedPostgres(
  pidFile: string,
  graceMs: number,
  say: (msg: string) => void,
): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (pid > 0 && isAlive(pid) && isEmbeddedPostgres(pid)) {
    say(`Waiting for the embedded Postgres of an earlier start to close (pid ${pid}).`);
    for (const signal of ['SIGCONT', 'SIGTERM'] as const) {
      try {
        process.kill(pid, signal);
      } catch {}
    }
    const deadline = Date.now() + graceMs;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (isAlive(pid)) {
      say(`It did not close within ${graceMs / 1000} s: killing it.`);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
      const killedAt = Date.now();
      while (isAlive(pid) && Date.now() - killedAt < 5_000) await new Promise((r) => setTimeout(r, 50));
    }
  }
  rmSync(pidFile, { force: true });
}
