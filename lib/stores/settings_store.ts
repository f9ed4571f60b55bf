import type { Db } from './sql.ts';

/** A deployment-wide setting, or null. */
export async function getSetting<T>(db: Db, key: string): Promise<T | null> {
  const rows = await db<{ value: T }[]>`SELECT value FROM settings WHERE key = ${key}`;
  return rows[0]?.value ?? null;
}

/** Sets a deployment-wide setting. */
export async function upsertSetting(db: Db, key: string, value: unknown): Promise<void> {
  await db`
    INSERT INTO settings (key, value) VALUES (${key}, ${db.json(value as never)})
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`;
}

/** Sets a setting only if absent; returns the value that is stored afterwards. */
export async function insertSettingIfAbsent<T>(db: Db, key: string, value: T): Promise<T> {
  await db`INSERT INTO settings (key, value) VALUES (${key}, ${db.json(value as never)}) ON CONFLICT (key) DO NOTHING`;
  return (await getSetting<T>(db, key)) as T;
}

/** Removes a setting (nothing when absent). */
export async function deleteSetting(db: Db, key: string): Promise<void> {
  await db`DELETE FROM settings WHERE key = ${key}`;
}
