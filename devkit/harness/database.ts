import { userInfo } from 'node:os';
import postgres from 'postgres';
import { migrateDatabase } from '../../lib/stores/migrate.ts';
import { createSql, type Sql } from '../../lib/stores/sql.ts';

export interface TestDatabase {
  name: string;
  url: string;
  sql: Sql;
  drop(): Promise<void>;
}

const adminUrl = () =>
  process.env.LIFELINE_TEST_POSTGRES_ADMIN_URL ?? `postgres://${userInfo().username}@127.0.0.1:5432/postgres`;

/**
 * A database of its own for one test file, on the local server (or LIFELINE_TEST_POSTGRES_ADMIN_URL):
 * cloned from the run's migrated template when the runner made one, else created and migrated here.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const runId = process.env.LIFELINE_TEST_RUN_ID ?? 'adhoc';
  const name = `lifeline_t_${runId}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
  const template = process.env.LIFELINE_TEST_DATABASE_TEMPLATE;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.unsafe(
          template ? `CREATE DATABASE "${name}" TEMPLATE "${template}"` : `CREATE DATABASE "${name}"`,
        );
        break;
      } catch (error) {
        // Two files cloning the template at the same instant can collide; try again shortly.
        if (attempt >= 20 || !/being accessed by other users/.test(String(error))) throw error;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  if (!template) await migrateDatabase(url.toString());
  const sql = createSql({ url: url.toString(), max: 10, applicationName: 'lifeline-test' });
  return {
    name,
    url: url.toString(),
    sql,
    async drop() {
      await sql.end({ timeout: 2 });
      const a = postgres(adminUrl(), { max: 1, onnotice: () => {} });
      await a.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await a.end();
    },
  };
}
