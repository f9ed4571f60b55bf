// `npm run migrate`: apply pending migrations to DATABASE_URL (web and worker also do this at start).

import { loadConfigOrExit, requireSetting } from '../boot/load_config.ts';
import { migrateDatabase } from '../lib/stores/migrate.ts';

const config = loadConfigOrExit(process.env);
const url = requireSetting(config.databaseUrl, 'DATABASE_URL', 'for `npm run migrate`');
const ran = await migrateDatabase(url, (m) => console.error(m));
console.error(ran.length ? `applied: ${ran.join(', ')}` : 'nothing to apply');
