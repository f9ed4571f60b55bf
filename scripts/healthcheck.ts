// The container image's HEALTHCHECK (`scripts/lifeline.sh healthcheck`): exit 0 when this container's Lifeline
// process answers /readyz with 200, 1 otherwise. Which process that is, web or worker, is read from the processes
// this container can see (its own PID namespace), because a health check gets the container's environment but
// not its command; with --network host the other tier's port may be answered by another container.
import { readdirSync, readFileSync } from 'node:fs';
import { parseConfig } from '../lib/shared/config.ts';

function runningRole(): 'web' | 'worker' | undefined {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let command = '';
    try {
      command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (command.includes('dist/worker.mjs')) return 'worker';
    if (command.includes('dist/web.mjs')) return 'web';
  }
  return undefined;
}

const config = parseConfig(process.env);
const role = runningRole();
const loopback = (host: string) => (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);
const target =
  role === 'worker'
    ? `http://${loopback(config.workerHealth.host)}:${config.workerHealth.port}/readyz`
    : `http://${loopback(config.host)}:${config.port}/readyz`;
try {
  const response = await fetch(target, { signal: AbortSignal.timeout(3_000) });
  await response.body?.cancel();
  console.log(`${role ?? 'web'} ${target}: ${response.status}`);
  process.exit(response.status === 200 ? 0 : 1);
} catch (error) {
  console.log(`${role ?? 'web'} ${target}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
