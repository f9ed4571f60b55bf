import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

/** Applies every pending migration in migrations/ (node-pg-migrate, advisory-locked); returns the names run. */
export async function migrateDatabase(
  databaseUrl: string,
  log: (message: string) => void = () => {},
): Promise<string[]> {
  const ran = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    migrationsTable: 'schema_migrations',
    // Only the .sql files are migrations (migrations/README.md explains the naming; hidden files are skipped too).
    ignorePattern: '\\..*|.*\\.md',
    direction: 'up',
    count: Number.POSITIVE_INFINITY,
    singleTransaction: true,
    // Several web replicas may start at once: wait for the one holding the lock instead of failing.
    advisoryLockMode: 'wait',
    checkOrder: true,
    logger: { info: log, warn: log, error: log, debug: () => {} },
  });
  return ran.map((m) => m.name);
}
