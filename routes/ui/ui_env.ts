import type { UiSession } from '../../lib/auth/sessions.ts';
import type { I18n } from '../../lib/i18n/translator.ts';
import type { AppEnv } from '../app_env.ts';

/** Per-request values of the editor UI. */
export interface UiEnv {
  Variables: AppEnv['Variables'] & {
    /** The signed-in user's session, or null. */
    session: UiSession | null;
    /** The reader's IANA time zone (from the islands' cookie), UTC until known. */
    timeZone: string;
    /** The editor's language (their setting, else the browser's), with dates in `timeZone`. */
    i18n: I18n;
  };
}
