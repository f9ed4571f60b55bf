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
      () => process.exit(0),
      (error) => {
        console.error('shutdown failed', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
