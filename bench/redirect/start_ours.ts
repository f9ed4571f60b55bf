// Our production entry (main.ts) as a bench server on its own, for the modes that measure it alone.
import { type BenchServer, startNodeServer } from './bench_server.ts';
import { DATABASE_URL } from './bench_settings.ts';
import { QUIET_BOOTSTRAP_ENV } from './start_contestant.ts';

/**
 * main.ts with the bench's database, quiet bootstrap and `env` on top; with `builtEntry` (dist/web.mjs, built
 * beforehand), that file run by Node alone with the same flags, as the production start runs it; with
 * `migrateFirst`, after the migration step as a deployment's migrate job runs it (bench_server.ts).
 */
export function startOurs(
  env: Record<string, string>,
  nodeArgs: string[] = [],
  builtEntry?: string,
  migrateFirst = false,
): Promise<BenchServer> {
  return startNodeServer({
    name: 'ours',
    entry: 'main.ts',
    env: { ...QUIET_BOOTSTRAP_ENV, ...env },
    databaseUrl: DATABASE_URL,
    fillsCache: true,
    ours: true,
    nodeArgs,
    migrateFirst,
    ...(builtEntry ? { builtEntry } : {}),
  });
}
