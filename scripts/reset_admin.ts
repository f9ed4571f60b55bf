// `npm run admin:reset -- <email>`: gives an administrator account a new generated password (printed once on
// stdout), the admin role, and enables it; creates it when missing. For when nobody can sign in: the bootstrap
// never resets an existing account (ADMIN_PASSWORD is applied once, when the account is created).

import { loadConfigOrExit, requireSetting } from '../boot/load_config.ts';
import { resetAdminAccess } from '../lib/auth/reset_admin.ts';
import { createSql } from '../lib/stores/sql.ts';

const email = process.argv[2];
if (!email || !/^[^@\s]+@[^@\s]+$/.test(email)) {
  console.error('Usage: npm run admin:reset -- <email>');
  process.exit(64); // EX_USAGE
}
const config = loadConfigOrExit(process.env);
const url = requireSetting(config.databaseUrl, 'DATABASE_URL', 'for `npm run admin:reset`');
const sql = createSql({ url, max: 1, applicationName: 'lifeline-admin-reset' });
try {
  const result = await resetAdminAccess(sql, email);
  console.error(result.created ? `Created administrator ${result.email}.` : `Reset ${result.email}.`);
  console.log(`New password (shown once): ${result.password}`);
} finally {
  await sql.end({ timeout: 5 });
}
