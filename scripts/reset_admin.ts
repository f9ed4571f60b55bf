// `npm run admin:reset -- <email>`: gives an administrator account a new generated password (printed once on
// stdout), the admin role, and enables it; creates it when missing. For when nobody can sign in: the bootstrap
// never resets an existing account (ADMIN_PASSWORD is applied once, when the account is created). Works on
// DATABASE_URL, or on the embedded database of `npm start` (running or not), like the other operator CLIs.

import { loadConfigOrExit } from '../boot/load_config.ts';
import { resetAdminAccess } from '../lib/auth/reset_admin.ts';
import { CliError, openCliDatabase, runCli } from './cli_database.ts';

runCli(
  async () => {
    const email = process.argv[2];
    if (!email || !/^[^@\s]+@[^@\s]+$/.test(email)) {
      throw new CliError('Usage: npm run admin:reset -- <email>', 2);
    }
    const config = loadConfigOrExit(process.env);
    const db = await openCliDatabase(config, { migrate: true, applicationName: 'lifeline-admin-reset' });
    try {
      const result = await resetAdminAccess(db.sql, email);
      process.stderr.write(
        `${result.created ? 'Created administrator' : 'Reset'} ${result.email} in ${db.describe}.\n`,
      );
      process.stdout.write(`New password (shown once): ${result.password}\n`);
      return 0;
    } finally {
      await db.close();
    }
  },
  () => false,
);
