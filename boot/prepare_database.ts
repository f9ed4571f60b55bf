import { ensureBootstrap, type GeneratedCredentials } from '../lib/auth/bootstrap.ts';
import { reviewStoredTargets } from '../lib/links/review_stored_targets.ts';
import { createTargetPolicy } from '../lib/links/target_policy.ts';
import type { Config } from '../lib/shared/config.ts';
import type { Logger } from '../lib/shared/logger.ts';
import { migrateDatabase } from '../lib/stores/migrate.ts';
import type { Sql } from '../lib/stores/sql.ts';

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
  await reviewStoredTargets(sql, createTargetPolicy(config), logger);
  return generated;
}

/**
 * Prints first-run credentials once, on stderr and outside the structured log (so log shipping never
 * keeps them). Nothing is printed on later starts: only hashes are stored.
 */
export function printGeneratedCredentials(
  generated: GeneratedCredentials,
  write = (s: string) => process.stderr.write(s),
): void {
  const lines: string[] = [];
  if (generated.adminEmail)
    lines.push(`  Admin login:     ${generated.adminEmail} / ${generated.adminPassword}`);
  if (generated.apiKey) lines.push(`  Admin API key:   ${generated.apiKey}`);
  if (generated.webhookSecret) lines.push(`  Webhook secret:  ${generated.webhookSecret}`);
  if (lines.length === 0) return;
  write(`\nFirst run — these credentials are shown once; store them now:\n${lines.join('\n')}\n\n`);
}
