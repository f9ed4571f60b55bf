// The database an operator CLI (export, restore, snapshot) works on: DATABASE_URL, or else the embedded PGlite
// database `npm start` keeps under LIFELINE_DATA_DIR (opened here, so `npm start` must not be running).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { Config } from '../lib/shared/config.ts';
import { migrateDatabase } from '../lib/stores/migrate.ts';
import { createSql, type Sql } from '../lib/stores/sql.ts';
import { ROOT } from './temporal_cli.ts';

/** The file under LIFELINE_DATA_DIR where a running `npm start` says how to reach its embedded database. */
export const EMBEDDED_URL_FILE = 'pglite.url';
/** The file under LIFELINE_DATA_DIR naming the process of `npm start` that holds the embedded database (ADR 0022). */
export const EMBEDDED_PID_FILE = 'pglite.pid';

/** A refusal the CLI prints as it is (exit 1), or a usage problem (exit 2). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export interface CliDatabase {
  sql: Sql;
  /** Where the data is, for messages (never a password). */
  describe: string;
  close(): Promise<void>;
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
 * Opens the database: DATABASE_URL when set; else the embedded one, refusing while `npm start` holds it (its
 * Temporal dev server's pid file names a live process). `create`: an embedded database that does not exist yet
 * is created (a restore onto a fresh install). `migrate`: pending migrations are applied first.
 */
export async function openCliDatabase(
  config: Config,
  options: {
    create?: boolean;
    migrate?: boolean;
    applicationName: string;
    /** Connections to a DATABASE_URL server (default 4): a restore builds several indexes side by side. */
    connections?: number;
  },
): Promise<CliDatabase> {
  if (config.databaseUrl) {
    const url = config.databaseUrl;
    if (options.migrate) await migrateDatabase(url);
    const sql = createSql({
      url,
      max: Math.max(4, options.connections ?? 4),
      applicationName: options.applicationName,
    });
    await sql`SELECT 1`.catch((error: unknown) => {
      throw new CliError(`cannot reach DATABASE_URL: ${(error as Error).message}`);
    });
    return {
      sql,
      describe: `DATABASE_URL (${new URL(url).host}${new URL(url).pathname})`,
      close: () => sql.end({ timeout: 5 }),
    };
  }
  const dataDir = process.env.LIFELINE_DATA_DIR ?? join(ROOT, '.data');
  // A running `npm start` serves its embedded database on a loopback port and says where.
  const urlFile = join(dataDir, EMBEDDED_URL_FILE);
  if (existsSync(urlFile)) {
    const url = readFileSync(urlFile, 'utf8').trim();
    const sql = createSql({ url, max: 2, prepare: false, applicationName: options.applicationName });
    const reachable = await sql`SELECT 1`.then(
      () => true,
      () => false,
    );
    if (reachable) {
      if (options.migrate) await migrateDatabase(url);
      return {
        sql,
        describe: `the embedded database of the running \`npm start\` (${dataDir})`,
        close: () => sql.end({ timeout: 5 }),
      };
    }
    await sql.end({ timeout: 1 });
  }
  const pidFile = join(dataDir, 'temporal.pid');
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    if (pid > 0 && isAlive(pid)) {
      throw new CliError(
        `\`npm start\` is running in ${dataDir} (its dev server is pid ${pid}) but its database cannot be reached; ` +
          'wait until it has started, stop it (Ctrl-C), or point DATABASE_URL at a Postgres server.',
      );
    }
  }
  const holderFile = join(dataDir, EMBEDDED_PID_FILE);
  if (existsSync(holderFile)) {
    const pid = Number(readFileSync(holderFile, 'utf8').trim());
    if (pid > 0 && isAlive(pid)) {
      throw new CliError(
        `the embedded database in ${dataDir} is still held by a process of \`npm start\` (pid ${pid}); ` +
          'wait until it has started or closed, or point DATABASE_URL at a Postgres server.',
      );
    }
  }
  const pgliteDir = join(dataDir, 'pglite');
  if (!existsSync(pgliteDir) && !options.create) {
    throw new CliError(
      `no database: DATABASE_URL is not set and there is no embedded database in ${pgliteDir} (run \`npm start\` once, or set DATABASE_URL)`,
    );
  }
  // Loaded only here: PGlite's WebAssembly costs ~50 MiB of memory that a DATABASE_URL run never needs.
  const { startEmbeddedPostgres } = await import('./embedded_postgres.ts');
  const embedded = await startEmbeddedPostgres(pgliteDir);
  try {
    if (options.migrate) await migrateDatabase(embedded.url);
  } catch (error) {
    await embedded.stop();
    throw error;
  }
  const sql = createSql({
    url: embedded.url,
    max: 4,
    prepare: false,
    applicationName: options.applicationName,
  });
  return {
    sql,
    describe: `the embedded database in ${pgliteDir}`,
    async close() {
      await sql.end({ timeout: 5 });
      await embedded.stop();
    },
  };
}

/** Runs a CLI's main: a CliError or a known refusal prints its message alone, anything else its stack too. */
export function runCli(main: () => Promise<number | undefined>, known: (error: unknown) => boolean): void {
  main().then(
    (code) => process.exit(code ?? 0),
    (error: unknown) => {
      if (error instanceof CliError) {
        process.stderr.write(`${error.message}\n`);
        process.exit(error.exitCode);
      }
      if (known(error)) {
        process.stderr.write(`${(error as Error).message}\n`);
        process.exit(1);
      }
      console.error(error);
      process.exit(1);
    },
  );
}

/**
 * The CLI's arguments by `config` (node:util parseArgs, strict, with `--help`/`-h` added): undefined after printing
 * `usage` for --help; a usage problem is a CliError with exit code 2 that prints the reason and the usage.
 */
export function parseCliArgs<const T extends ParseArgsConfig>(
  config: T,
  usage: string,
): ReturnType<typeof parseArgs<T>> | undefined {
  let args: ReturnType<typeof parseArgs<T>>;
  try {
    args = parseArgs({
      ...config,
      options: { ...config.options, help: { type: 'boolean', short: 'h', default: false } },
      strict: true,
    } as T);
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n${usage}`, 2);
  }
  if ((args.values as { help?: boolean }).help) {
    process.stdout.write(`${usage}\n`);
    return undefined;
  }
  return args;
}
