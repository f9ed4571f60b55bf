import type { DrainState } from '../lib/health/drain_state.ts';

/**
 * Runs `stop` once on SIGINT/SIGTERM, then exits; a second signal exits at once. Each entry decides the
 * order: stop accepting requests first, then drain workers, then close stores.
 */
export function onShutdownSignal(stop: (signal: string) => Promise<void>, log: (msg: string) => void): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      log(`${signal} again: exiting now`);
      process.exit(130);
    }
    stopping = true;
    log(`${signal}: shutting down`);
    stop(signal).then(
      () => {
        log(`${signal}: drained, exiting 0`);
        process.exit(0);
      },
      (error) => {
        console.error('shutdown failed', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

/**
 * The first step of stopping a process that sits behind a load balancer: readiness turns 503 at once (`drain`),
 * and the process keeps serving for `delayMs` so the balancer takes it out before it stops accepting
 * connections (SHUTDOWN_DELAY_MS; Kubernetes removes an endpoint only after its probe fails or the pod is
 * marked terminating, and proxies learn of it a moment later). Then the caller closes the server and drains.
 */
export async function startDraining(
  drain: DrainState | undefined,
  delayMs: number,
  log: (msg: string) => void,
): Promise<void> {
  drain?.startDraining();
  if (delayMs <= 0) return;
  log(`readiness now answers 503; still serving for ${delayMs} ms before closing`);
  await new Promise((resolve) => setTimeout(resolve, delayMs));
}
