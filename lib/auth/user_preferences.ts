import { z } from 'zod';
import { LOCALES, type Locale } from '../i18n/locales.ts';
import { NotFoundError } from '../shared/errors.ts';
import type { Db } from '../stores/sql.ts';
import { updateUserLocale } from '../stores/user_store.ts';

/** The settings form: the UI language, or "browser" to follow the browser's. */
export const userPreferencesInputSchema = z.strictObject({
  locale: z
    .union([z.enum(LOCALES), z.literal('browser')])
    .transform((v): Locale | null => (v === 'browser' ? null : v)),
});
export type UserPreferencesInput = z.infer<typeof userPreferencesInputSchema>;

/** Saves a user's own preferences (only the user themselves changes them; nothing to audit). */
export async function setUserPreferences(db: Db, userId: number, input: UserPreferencesInput): Promise<void> {
  const user = await updateUserLocale(db, userId, input.locale);
  if (!user) throw new NotFoundError(`No user ${userId}.`);
}
