import { toSentence } from '../i18n/english_sentence.ts';
import type { I18n } from '../i18n/translator.ts';
import type { FieldError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { fromLocalInput } from './time_zone.ts';

/** A submitted form: every value a string (files are not accepted). */
export type FormValues = Record<string, string>;

/** Flattens a parsed form body to strings (repeated fields keep their last value; files are dropped). */
export function toFormValues(body: Record<string, unknown>): FormValues {
  const out: FormValues = {};
  for (const [key, value] of Object.entries(body)) {
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (typeof last === 'string') out[key] = last;
  }
  return out;
}

/** "politics, Election-2026 ,  " → ["politics", "Election-2026"]; the Arabic comma "،" separates too. */
export function parseTags(value: string | undefined): string[] {
  return (value ?? '')
    .split(/[,\u060c\n]/)
    .map((t) => t.trim())
    .filter(Boolean);
}

const blank = (v: string | undefined) => v === undefined || v.trim() === '';

/**
 * The link form's values as API input: the same zod schemas then judge them, so the UI and the API accept
 * exactly the same links. Local date-times are read in the editor's time zone. Problems only the form can
 * have (an unreadable date) come back as field errors.
 */
export function toLinkInput(
  form: FormValues,
  timeZone: string,
  mode: 'create' | 'edit',
): { input: Record<string, unknown>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const input: Record<string, unknown> = { url: (form.url ?? '').trim() };
  if (mode === 'create' && !blank(form.alias)) input.alias = form.alias!.trim();
  if (mode === 'create' && !blank(form.domain)) input.domain = form.domain!.trim();
  if (!blank(form.title)) input.title = form.title;
  else if (mode === 'edit' && form.title !== undefined) input.title = null;
  if (!blank(form.expiresAt)) {
    const date = fromLocalInput(form.expiresAt!, timeZone);
    if (date) input.expiresAt = date.toISOString();
    else errors.push({ path: 'expiresAt', message: fieldProblem('dateTime') });
  } else if (mode === 'edit') {
    input.expiresAt = null;
  }
  if (!blank(form.expiredUrl)) input.expiredUrl = form.expiredUrl!.trim();
  else if (mode === 'edit') input.expiredUrl = null;
  if (!blank(form.redirectStatus)) input.redirectStatus = Number(form.redirectStatus);
  else if (mode === 'edit') input.redirectStatus = null;
  input.tags = parseTags(form.tags);
  const utm = toUtmInput(form, mode);
  if (utm) input.utm = utm;
  if (mode === 'edit') {
    if (!blank(form.status)) input.status = form.status;
    input.reason = (form.reason ?? '').trim();
  }
  return { input, errors };
}

/** The form fields of a link's own UTM values, and the `utm` key each fills. */
export const UTM_FORM_FIELDS = [
  ['utmCampaign', 'campaign'],
  ['utmSource', 'source'],
  ['utmMedium', 'medium'],
] as const;

/**
 * The UTM fields as the API's `utm`: on create, the filled ones (none: no `utm`); on edit, all three, an empty
 * field clearing its value (PATCH's merge patch).
 */
function toUtmInput(form: FormValues, mode: 'create' | 'edit'): Record<string, string | null> | undefined {
  const utm: Record<string, string | null> = {};
  for (const [field, key] of UTM_FORM_FIELDS) {
    if (!blank(form[field])) utm[key] = form[field]!.trim();
    else if (mode === 'edit') utm[key] = null;
  }
  return Object.keys(utm).length > 0 ? utm : undefined;
}

/** Field errors keyed by the form field they belong to (tags.2 → tags); the first message per field wins. */
export function toFieldMap(errors: FieldError[] | undefined): Record<string, string> {
  const map: Record<string, string> = {};
  for (const e of errors ?? []) {
    const utmField = UTM_FORM_FIELDS.find(([, key]) => e.path === `utm.${key}`)?.[0];
    const field = utmField ?? (e.path.split('.')[0] || 'form');
    const key = field === '(body)' ? 'form' : field;
    const tag = /^tags\.(\d+)$/.exec(e.path);
    map[key] ??= tag ? fieldProblem('tagN', { n: Number(tag[1]) + 1, problem: e.message }) : e.message;
  }
  return map;
}

export { toSentence };

/** Field errors as sentences that name their field, for people (in the editor's language with `i18n`). */
export function toFieldSentences(
  errors: Record<string, string>,
  labels: Record<string, string>,
  i18n?: Pick<I18n, 'fieldSentence'>,
): Record<string, string> {
  const sentence = i18n ? i18n.fieldSentence : toSentence;
  return Object.fromEntries(
    Object.entries(errors).map(([field, msg]) => [field, sentence(labels[field] ?? field, msg)]),
  );
}
