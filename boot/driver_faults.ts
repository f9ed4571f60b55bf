import type { Logger } from '../lib/shared/logger.ts';

/**
 * postgres.js 3.4.9 throws from a timer, where no caller can catch it, when a connection dies while a
 * transaction is in flight: its own ROLLBACK is written to a socket already set to null
 * ("Cannot read properties of null (reading 'write')" in `nextWrite`; porsager/postgres#1208 and #1154, open).
 * The query itself has already been rejected with CONNECTION_CLOSED and the pool reconnects, so the
 * process can safely carry on. Nothing else is recognised here.
 */
export function isKnownDriverFault(error: unknown): boolean {
  return (
    error instanceof TypeError &&
    /reading 'write'/.test(error.message) &&
    /nextWrite/.test(error.stack ?? '') &&
    /postgres[\\/]src[\\/]connection\.js/.test(error.stack ?? '')
  );
}

/**
 * Keeps a web or worker process alive through a database outage despite the driver fault above; any other
 * uncaught exception is logged and ends the process with exit code 1, as Node would.
 */
export function guardKnownDriverFaults(logger: Logger): void {
  process.on('uncaughtException', (error, origin) => {
    if (isKnownDriverFault(error)) {
      logger.warn(
        { err: error },
        'postgres.js lost a connection inside a transaction (porsager/postgres#1208); carrying on',
      );
      return;
    }
    logger.fatal({ err: error, origin }, 'uncaught exception; exiting');
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
