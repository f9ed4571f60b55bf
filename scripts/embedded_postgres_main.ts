// `npm start`'s embedded Postgres in a process of its own (scripts/start.ts spawns it; ADR 0022): PGlite behind our
// wire front (scripts/embedded_postgres.ts) on a loopback port. Usage: embedded_postgres_main.ts <dataDir> <urlFile>
// <pidFile>. It records its pid (so a later start can stop one left behind), then, once serving, writes its URL to
// <urlFile> (what the operator CLIs read, scripts/cli_database.ts) and tells its parent over IPC. It stops on
// SIGTERM or SIGINT, or when its parent is gone: the server closes, the database checkpoints and closes, the
// files go. Exit 0 after a clean stop, 1 when the database cannot be opened.
import { rmSync, writeFileSync } from 'node:fs';
import { startEmbeddedPostgres } from './embedded_postgres.ts';

/** The IPC message the parent waits for. */
export interface EmbeddedPostgresReady {
  kind: 'ready';
  url: string;
}

const [dataDir, urlFile, pidFile] = process.argv.slice(2);
if (!dataDir || !urlFile || !pidFile) {
  process.stderr.write('usage: embedded_postgres_main.ts <dataDir> <urlFile> <pidFile>\n');
  process.exit(2);
}
const say = (msg: string) => process.stderr.write(`${msg}\n`);

writeFileSync(pidFile, String(process.pid));
let stopRequested = false;
let stopping: Promise<void> | undefined;
let stopNow: (() => Promise<void>) | undefined;
const requestStop = (why: string) => {
  if (stopRequested) return;
  stopRequested = true;
  say(`${why}: closing the database`);
  if (stopNow) stopping = stopNow();
};
process.on('SIGTERM', () => requestStop('SIGTERM'));
process.on('SIGINT', () => requestStop('SIGINT'));
// The parent (npm start) is gone without telling us: do not hold the data directory for nobody.
process.on('disconnect', () => requestStop('npm start is gone'));
process.channel?.unref();

try {
  const pg = await startEmbeddedPostgres(dataDir);
  stopNow = async () => {
    rmSync(urlFile, { force: true });
    try {
      await pg.stop();
    } catch (error) {
      say(`closing the database failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    }
    rmSync(pidFile, { force: true });
    say('closed cleanly');
    process.exit(0);
  };
  writeFileSync(urlFile, `${pg.url}\n`);
  if (stopRequested) stopping = stopNow();
  else if (process.send) process.send({ kind: 'ready', url: pg.url } satisfies EmbeddedPostgresReady);
  else say(`serving ${pg.url}`);
  await stopping;
} catch (error) {
  rmSync(pidFile, { force: true });
  say(`cannot open the database in ${dataDir}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
