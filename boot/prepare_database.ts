import { ensureBootstrap, type GeneratedCredentials } from '../lib/auth/bootstrap.ts';
import { reviewStoredTargets } from '../lib/links/review_stored_targets.ts';
import type { Config } from '../lib/shared/config.ts';
import type { Logger } from '../lib/shared/logger.ts';
import { migrateDatabase } from '../lib/stores/migrate.ts';
import type { Sql } from '../lib/stores/sql.ts';
import { createCanonicalTargetPolicy } from '../lib/targets/target_rule.ts';
import { reportGeneratedCredentials, resolveDataDir } from './first_run_credentials.ts';

/**
 * Runs pending migrations, then the bootstrap (configured admin and key; first-run credentials), then the
 * review of stored targets against the target rule (once per rule version and policy; see
 * lib/links/review_stored_targets.ts).
 */
export async function prepareDatabase(
  config: Config,
  databaseUrl: string,
  sql: Sql,
  logger: Logger,
): Promise<GeneratedCredentials> {
  const ran = await migrateDatabase(databaseUrl, (message) => logger.debug({ migration: true }, message));
  if (ran.length > 0) logger.info({ migrations: ran }, 'migrations applied');
  const generated = await ensureBootstrap(sql, config, logger);
  await reviewStoredTargets(sql, createCanonicalTargetPolicy(config), logger);
  return generated;
}

/**
 * Hands over first-run credentials once (boot/first_run_credentials.ts): to a 0600 file in the data folder,
 * named on stderr, shown on stderr only when it is a terminal; never to the structured log. Nothing on later
 * starts: only hashes are stored.
 */
export function printGeneratedCredentials(
  generated: GeneratedCredentials,
  config: Pick<Config, 'dataDir'>,
): void {
  reportGeneratedCredentials(generated, {
    dataDir: resolveDataDir(config.dataDir),
    interactive: process.stderr.isTTY === true,
  });
}
