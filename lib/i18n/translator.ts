import { toSentence } from './english_sentence.ts';
import { type FormatContext, formatParts, type MessageValue, parseMessage } from './format_message.ts';
import { DEFAULT_LOCALE, LOCALE_INFO, type Locale } from './locales.ts';
import { ar } from './messages_ar.ts';
import { en, type MessageKey, type Messages } from './messages_en.ts';
import { matchProblem, type ProblemInput } from './problems.ts';

/** Every catalogue, by locale. Adding a language: a catalogue file, an entry here and in LOCALE_INFO. */
export const CATALOGUES: Record<Locale, Messages> = { en, ar };

/** What a page needs to speak one language: messages, and dates and numbers formatted for it. */
export interface I18n {
  locale: Locale;
  /** `lang` and `dir` of the page's <html>. */
  lang: string;
  dir: 'ltr' | 'rtl';
  /** The IANA zone dates are shown in. */
  timeZone: string;
  /** A message as text. */
  t(key: MessageKey, values?: Record<string, string | number>): string;
  /** A message as parts, for values that are elements (a <code>, a link). */
  rich(key: MessageKey, values: Record<string, MessageValue>): (string | object)[];
  number(n: number): string;
  /** "21 Nov 2026, 09:34" / "21 نوفمبر 2026، 09:34" in the reader's zone. */
  dateTime(date: Date): string;
  date(date: Date): string;
  time(date: Date): string;
  /** A UTC calendar day ("2026-11-21") as day and short month. */
  day(isoDay: string): string;
  /** A region's name ("FR" → "France"), or the code when unknown. */
  region(code: string): string;
  /**
   * A problem from lib/ translated by its code (a field error's, or the one its English text is), or the English
   * when it has none (see problems.ts).
   */
  problem(problem: ProblemInput): string;
  /** A field's problem as a sentence that names the field ("Custom alias is taken."). */
  fieldSentence(label: string, problem: ProblemInput): string;
}

const cache = new Map<string, Omit<I18n, 'timeZone' | 'dateTime' | 'date' | 'time'>>();

function localeParts(locale: Locale) {
  let parts = cache.get(locale);
  if (parts) return parts;
  const info = LOCALE_INFO[locale];
  const messages = CATALOGUES[locale];
  const ctx: FormatContext = {
    plural: new Intl.PluralRules(info.intl),
    number: new Intl.NumberFormat(info.intl),
    // In a right-to-left language, text arguments (a URL, a code, an email, a name) are wrapped in
    // first-strong isolates, as Fluent does, so a left-to-right argument cannot reorder the sentence around it.
    isolate: info.dir === 'rtl',
  };
  const dayFormat = new Intl.DateTimeFormat(info.intl, { day: 'numeric', month: 'short', timeZone: 'UTC' });
  const regions = new Intl.DisplayNames([info.intl], { type: 'region' });
  const rich = (key: MessageKey, values: Record<string, MessageValue> = {}) =>
    formatParts(parseMessage(messages[key] ?? en[key]), values, ctx);
  const t = (key: MessageKey, values?: Record<string, string | number>) =>
    rich(key, values)
      .map((p) => (typeof p === 'string' ? p : String(p)))
      .join('');
  const englishOf = (p: ProblemInput) => (typeof p === 'string' ? p : p.message);
  const problem = (p: ProblemInput): string => {
    const found = matchProblem(p);
    if (!found) return englishOf(p);
    const nested = Object.fromEntries(Object.entries(found.nested).map(([k, v]) => [k, problem(v)]));
    return t(found.key, { ...found.args, ...nested });
  };
  parts = {
    locale,
    lang: locale,
    dir: info.dir,
    t,
    rich,
    number: (n) => ctx.number.format(n),
    day: (isoDay) => dayFormat.format(new Date(`${isoDay}T00:00:00Z`)),
    region: (code) => {
      try {
        return regions.of(code) ?? code;
      } catch {
        return code;
      }
    },
    problem: locale === 'en' ? englishOf : problem,
    fieldSentence:
      locale === 'en'
        ? (label, p) => toSentence(label, englishOf(p))
        : // A known problem names its field; anything else is already a sentence of its own.
          (label, p) =>
            matchProblem(p) ? t('form.fieldSentence', { label, problem: problem(p) }) : englishOf(p),
  };
  cache.set(locale, parts);
  return parts;
}

const dateFormats = new Map<
  string,
  { dateTime: Intl.DateTimeFormat; date: Intl.DateTimeFormat; time: Intl.DateTimeFormat }
>();

function dateFormatsFor(locale: Locale, timeZone: string) {
  const id = `${locale}|${timeZone}`;
  let found = dateFormats.get(id);
  if (!found) {
    const intl = LOCALE_INFO[locale].intl;
    // Explicit fields (not dateStyle) so both languages show the month's name, and a 24-hour clock.
    const date = { day: 'numeric', month: 'short', year: 'numeric', timeZone } as const;
    const time = { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone } as const;
    found = {
      dateTime: new Intl.DateTimeFormat(intl, { ...date, ...time }),
      date: new Intl.DateTimeFormat(intl, date),
      time: new Intl.DateTimeFormat(intl, time),
    };
    // Bounded: a zone per editor and locale; a process sees few.
    if (dateFormats.size > 500) dateFormats.clear();
    dateFormats.set(id, found);
  }
  return found;
}

/** The UI's language tools for one request: `locale`, with dates in `timeZone` (an IANA zone). */
export function createI18n(locale: Locale = DEFAULT_LOCALE, timeZone = 'UTC'): I18n {
  const formats = dateFormatsFor(locale, timeZone);
  return {
    ...localeParts(locale),
    timeZone,
    dateTime: (d) => formats.dateTime.format(d),
    date: (d) => formats.date.format(d),
    time: (d) => formats.time.format(d),
  };
}
