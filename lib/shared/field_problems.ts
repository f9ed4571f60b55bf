// Problems we state about a request, each with a stable code. The English text is the API's contract (problem+json
// `errors[].message`, unchanged); the code is what clients and the editor UI go by (the UI shows
// `problem.<code>` from lib/i18n's catalogues). Raise one with fieldProblem(code, args). Its text maps back to
// its code exactly (problemCodeOf): a problem that travelled as text (a zod message, a retarget change's stored
// problem) keeps its code as well.

export const PROBLEM_TEXTS = {
  maxBytes: 'must be at most {max} bytes',
  noSpacesOrControls: 'must not contain spaces or control characters',
  absoluteUrl: 'must be an absolute URL',
  httpOrHttps: 'must use http or https',
  absoluteHttpUrl: 'must be an absolute http(s) URL with a host',
  needsHost: 'must have a host',
  noCredentials: 'must not contain credentials',
  empty: 'must not be empty',
  maxChars: 'must be at most {max} characters',
  minChars: 'must be at least {min} characters',
  maxNumber: 'must be at most {max}',
  minNumber: 'must be at least {min}',
  oneLine: 'must be one line without control characters',
  noControls: 'must not contain control characters',
  noBidiControls: 'must not contain bidirectional formatting characters (U+202A–U+202E, U+2066–U+2069)',
  validUnicode: 'must be valid Unicode text',
  noSpacesOrCommas: 'must not contain spaces or commas',
  codeChars: 'may contain only letters, digits, "-" and "_"',
  siteChars: 'may contain only letters, digits, ".", "-" and "_"',
  noUnderscoreStart: 'must not start with "_"',
  reserved: 'is a reserved word',
  taken: 'is taken',
  future: 'must be in the future',
  postHasLink: 'already has the link {code}',
  postDecided: 'is decided by WordPress for a post-bound link (admin scope only)',
  secondAdmin:
    "Run {run} needs a second administrator's approval: {actor} asked for it, so another administrator must approve it.",
  maxTags: 'at most {max} tags',
  sitePostTogether: 'site and postId go together',
  unknownDomain: 'is not one of the short domains (SHORT_DOMAINS)',
  nothingToChange: 'send at least one field to change',
  isoDate: 'must be an ISO 8601 date-time with a zone',
  badCursor: 'is not a cursor this server issued',
  unknownField: 'is not a known field',
  dateTime: 'must be a date and time',
  stillBlocked: 'the link is blocked by the safety check; it becomes active again only when a scan clears it',
  stillMinting: 'the link is still being minted; it activates on its own',
  expiryPast: 'is in the past; move or clear it to reactivate the link',
  shortDomain: 'must not point at the short domain itself',
  hostNotAllowed: 'host {host} is not in ALLOWED_TARGET_HOSTS',
  blocked: 'is blocked: {reason}',
  fallbackNotClean: 'must be a clean destination (it is served without a warning page): {reason}',
  email: 'must be an email address',
  emailTaken: 'belongs to an existing user',
  notYourself: 'you cannot disable or demote yourself',
  lastAdmin: 'this is the last administrator',
  chooseScope: 'choose at least one scope',
  reasonMissing: 'say why, for the history',
  /** `problem` is itself a problem's text (translated in turn). */
  tagN: 'tag {n} {problem}',
  invalid: 'is not a valid value',
  noNul: 'must not contain a NUL character',
  sameAsFrom: 'is the same as rule.from',
  csvTooLarge: 'is too large (1 MiB at most; split it into several runs)',
  csvLine: 'line {line} {problem}',
  csvRowTarget: 'row {row}: the new URL {problem}',
  csvTwoFields: 'must be two fields: old URL,new URL',
  csvBothUrls: 'both URLs are required',
  csvRepeats: 'repeats the old URL of line {line}',
  csvTooManyRows: 'has more than {max} rows',
  csvNoRows: 'has no rows',
  csvQuoteNotClosed: 'opens a quoted field that is never closed',
  csvQuoteOutOfPlace: 'has a quote out of place (quote the whole field, and write a quote inside it twice)',
  proposalStale: 'changed since the retarget was proposed; look at the link again',
  chooseEvent: 'choose at least one event',
  outgoingRefused: 'is not an address Lifeline may send to: {reason}',
  codesOrFilter: 'send either codes or filter',
  requiredFor: 'is required for {action}',
  qrSize: 'must be {min}–{max} {unit}',
  qrDarkOnLight: 'must be darker than the background (dark modules on a light ground)',
  qrContrast: 'has too little contrast with the background ({ratio}:1; at least {least}:1)',
  colourHex: 'must be a colour as #rrggbb',
  wholeNumber: 'must be a whole number',
  logoTooLarge: 'must be at most {kib} KiB',
  logoPixels: 'must be at most {side} pixels per side',
  logoType: 'must be a PNG or SVG image',
  logoNotPng: 'is not a PNG image that can be read',
  calendarDay: 'must be a calendar day (YYYY-MM-DD)',
  notAfterTo: 'must not be after the end day',
  spanDays: 'the window may span at most {max} days',
  importTooLarge: 'is too large ({mib} MiB at most; split it into several files)',
  importUnknownColumns: 'has columns Lifeline does not know: {columns}',
  importNeedsUrl: 'needs a url column (the first row names the columns)',
  importUnreadable: 'cannot be read as CSV from line {line}',
  importExtraFields: 'has more fields than the header: {fields}',
  logoSvgOnly: 'an SVG logo goes into an SVG code only; upload a PNG logo for PNG or PDF',
  logoActiveContent:
    'must be a plain SVG drawing (no scripts, event handlers, embedded documents or outside references)',
  logoMissing: 'is the newsroom logo, and none has been uploaded (an admin uploads it in Settings)',
  logoChooseFile: 'is required: choose a file to upload',
  ruleLanguage: 'must be a primary language tag of 2–3 letters ({examples})',
  ruleDevice: 'must be one of {devices}',
  ruleCountry: 'must be an ISO 3166-1 alpha-2 country code ({examples})',
  maxRules: 'at most {max} rules',
  ruleValuesMissing: 'name at least one value',
} as const;

export type ProblemCode = keyof typeof PROBLEM_TEXTS;
export type ProblemArgs = Record<string, string | number>;

/** The English text of problem `code`, its `{name}` placeholders filled from `args` (as a template literal would). */
export function fieldProblem(code: ProblemCode, args: Record<string, string | number | null> = {}): string {
  return PROBLEM_TEXTS[code].replace(/\{(\w+)\}/g, (_, name: string) => String(args[name]));
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A final full stop is not part of what a problem says ("… is taken." reads as "… is taken"). */
const withoutStop = (text: string) => text.trim().replace(/\.$/, '');

/** Placeholders that are always numbers (a bound, a line or row, a tag's position). */
const NUMERIC = new Set(['max', 'min', 'n', 'line', 'row']);
/** A number as a text states it: "2048" or "2,048". */
const NUMBER = '\\d{1,3}(?:,\\d{3})+|\\d+';

/** Each text as an anchored pattern, its placeholders as groups (the last one takes the rest). */
const READERS = (Object.entries(PROBLEM_TEXTS) as [ProblemCode, string][]).map(([code, text]) => {
  const names: string[] = [];
  const parts = withoutStop(text).split(/\{(\w+)\}/);
  const source = parts
    .map((part, i) => {
      if (i % 2 === 0) return escapeRegExp(part);
      names.push(part);
      if (NUMERIC.has(part)) return `(${NUMBER})`;
      return i === parts.length - 2 ? '(.+)' : '(.+?)';
    })
    .join('');
  return { code, names, re: new RegExp(`^${source}$`, 's') };
});

/** The code and arguments of a problem's English text, or null when the text is not one of ours. */
export function problemCodeOf(message: string): { code: ProblemCode; args: ProblemArgs } | null {
  const text = withoutStop(message);
  for (const { code, names, re } of READERS) {
    const m = re.exec(text);
    if (!m) continue;
    const args: ProblemArgs = {};
    for (const [i, name] of names.entries()) {
      const value = m[i + 1] ?? '';
      args[name] = NUMERIC.has(name) ? Number(value.replaceAll(',', '')) : value;
    }
    return { code, args };
  }
  return null;
}
