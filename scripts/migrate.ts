// `npm run migrate` (the image's `migrate`, the compose and Helm migration job): apply pending migrations to
// DATABASE_URL, then review the stored targets under this deployment's target rule and policy (ADR 0017), so the
// web and worker processes that start after it find both done. They still do both at start when this step did
// not run; the review is then a full read of the links inside the first process to start (ADR 0102).

import { loadConfigOrExit, requireSetting } from '../boot/load_config.ts';
import { reviewStoredTargets } from '../lib/links/review_stored_targets.ts';
import { createLogger } from '../lib/shared/logger.ts';
import { migrateDatabase } from '../lib/stores/migrate.ts';
import { createSql } from '../lib/stores/sql.ts';
import { createCanonicalTargetPolicy } from '../lib/targets/target_rule.ts';

const config = loadConfigOrExit(process.env);
const url = requireSetting(config.databaseUrl, 'DATABASE_URL', 'for `npm run migrate`');
const ran = await migrateDatabase(url, (m) => console.error(m));
console.error(ran.length ? `applied: ${ran.join(', ')}` : 'nothing to apply');

const logger = createLogger({ level: config.logLevel, name: 'lifeline-migrate' });
const sql = createSql({ url, max: 2, applicationName: 'lifeline-migrate' });
try {
  const review = await reviewStoredTargets(sql, createCanonicalTargetPolicy(config), logger);
  console.error(
    review === null
      ? 'stored targets: already reviewed under this rule and policy'
      : `stored targets: ${review.read} links read, ${review.canonicalised} rewritten to their canonical form, ` +
          `${review.refused} refused (answered 404 until an editor fixes them; listed in the log)`,
  );
} finally {
  await sql.end({ timeout: 5 });
}
