// The editor UI's languages and how one is chosen for a request (docs/UI.md, "Languages").

/** Languages the editor UI speaks; the first is the fallback. */
export const LOCALES = ['en', 'ar'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

export interface LocaleInfo {
  /** The language's name in itself, for the language picker. */
  name: string;
  dir: 'ltr' | 'rtl';
  /**
   * The tag Intl formats with. Arabic uses Latin digits (`nu-latn`) and the Gregorian calendar: codes,
   * URLs, post ids and the numbers editors compare with Bitly and GA4 are all written in Latin digits, and
   * one table should not mix two digit systems. English uses British conventions (day before month).
   */
  intl: string;
}

export const LOCALE_INFO: Record<Locale, LocaleInfo> = {
  en: { name: 'English', dir: 'ltr', intl: 'en-GB' },
  ar: { name: 'العربية', dir: 'rtl', intl: 'ar-u-ca-gregory-nu-latn' },
};

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** The supported language a stored preference or a language tag names ("ar-EG" → ar), or null. */
export function toLocale(tag: string | null | undefined): Locale | null {
  if (!tag) return null;
  const primary = tag.trim().toLowerCase().split(/[-_]/)[0];
  return isLocale(primary) ? primary : null;
}

/**
 * The best supported language for an Accept-Language header (RFC 9110: q-values, "*", ranges like ar-EG
 * matching ar), or null when it names none of ours. Ties keep the header's order.
 */
export function negotiateLocale(acceptLanguage: string | null | undefined): Locale | null {
  if (!acceptLanguage) return null;
  const ranges = acceptLanguage
    .slice(0, 1000)
    .split(',')
    .map((part, order) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p)).find(Boolean);
      return { tag: tag.trim(), q: q ? Number(q[1]) : 1, order };
    })
    .filter((r) => r.tag && r.q > 0)
    .sort((a, b) => b.q - a.q || a.order - b.order);
  for (const range of ranges) {
    if (range.tag === '*') return DEFAULT_LOCALE;
    const locale = toLocale(range.tag);
    if (locale) return locale;
  }
  return null;
}

/** The UI language of a request: the user's own setting, then the browser's languages, then English. */
export function pickLocale(
  userLocale: string | null | undefined,
  acceptLanguage: string | null | undefined,
): Locale {
  return toLocale(userLocale) ?? negotiateLocale(acceptLanguage) ?? DEFAULT_LOCALE;
}
