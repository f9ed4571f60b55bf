import type { MessageKey } from './messages_en.ts';

// The lib and its zod schemas state problems in English, once, for the API (problem+json stays English).
// Editors see them translated: each known message is matched here and mapped to a catalogue key, its
// variable parts becoming arguments. A message not listed is shown in English, marked as such.

interface ProblemPattern {
  re: RegExp;
  key: MessageKey;
  /** Argument names of the capture groups, in order; a name ending in "*" is itself a problem (translated). */
  args?: string[];
}

export const PROBLEM_PATTERNS: ProblemPattern[] = [
  { re: /^must be at most (\d+) bytes$/, key: 'problem.maxBytes', args: ['max'] },
  { re: /^must not contain spaces or control characters$/, key: 'problem.noSpacesOrControls' },
  { re: /^must be an absolute URL$/, key: 'problem.absoluteUrl' },
  { re: /^must use http or https$/, key: 'problem.httpOrHttps' },
  { re: /^must be an absolute http\(s\) URL with a host$/, key: 'problem.absoluteHttpUrl' },
  { re: /^must have a host$/, key: 'problem.needsHost' },
  { re: /^must not contain credentials$/, key: 'problem.noCredentials' },
  { re: /^must not be empty$/, key: 'problem.empty' },
  { re: /^must be at most (\d+) characters$/, key: 'problem.maxChars', args: ['max'] },
  { re: /^must be at least (\d+) characters$/, key: 'problem.minChars', args: ['min'] },
  { re: /^must be one line without control characters$/, key: 'problem.oneLine' },
  { re: /^must not contain control characters$/, key: 'problem.noControls' },
  { re: /^must not contain bidirectional formatting characters/, key: 'problem.noBidiControls' },
  { re: /^must be valid Unicode text$/, key: 'problem.validUnicode' },
  { re: /^must not contain spaces or commas$/, key: 'problem.noSpacesOrCommas' },
  { re: /^may contain only letters, digits, "-" and "_"$/, key: 'problem.codeChars' },
  { re: /^may contain only letters, digits, "\.", "-" and "_"$/, key: 'problem.siteChars' },
  { re: /^must not start with "_"$/, key: 'problem.noUnderscoreStart' },
  { re: /^is a reserved word$/, key: 'problem.reserved' },
  { re: /^is taken$/, key: 'problem.taken' },
  { re: /^must be in the future$/, key: 'problem.future' },
  { re: /^already has the link (\S+)$/, key: 'problem.postHasLink', args: ['code'] },
  { re: /^is decided by WordPress for a post-bound link/, key: 'problem.postDecided' },
  {
    re: /^Run (\S+) needs a second administrator's approval: (.+) asked for it/,
    key: 'problem.secondAdmin',
    args: ['run', 'actor'],
  },
  { re: /^at most (\d+) tags$/, key: 'problem.maxTags', args: ['max'] },
  { re: /^site and postId go together$/, key: 'problem.sitePostTogether' },
  { re: /^send at least one field to change$/, key: 'problem.nothingToChange' },
  { re: /^must be an ISO 8601 date-time with a zone$/, key: 'problem.isoDate' },
  { re: /^is not a cursor this server issued$/, key: 'problem.badCursor' },
  { re: /^is not a known field$/, key: 'problem.unknownField' },
  { re: /^must be a date and time$/, key: 'problem.dateTime' },
  { re: /^the link is blocked by the safety check/, key: 'problem.stillBlocked' },
  { re: /^the link is still being minted/, key: 'problem.stillMinting' },
  { re: /^is in the past; move or clear it/, key: 'problem.expiryPast' },
  { re: /^must not point at the short domain itself$/, key: 'problem.shortDomain' },
  { re: /^host (\S+) is not in ALLOWED_TARGET_HOSTS$/, key: 'problem.hostNotAllowed', args: ['host'] },
  { re: /^is blocked: (.*)$/s, key: 'problem.blocked', args: ['reason'] },
  {
    re: /^must be a clean destination \(it is served without a warning page\): (.*)$/s,
    key: 'problem.fallbackNotClean',
    args: ['reason'],
  },
  { re: /^must be an email address$/, key: 'problem.email' },
  { re: /^belongs to an existing user$/, key: 'problem.emailTaken' },
  { re: /^you cannot disable or demote yourself$/, key: 'problem.notYourself' },
  { re: /^this is the last administrator$/, key: 'problem.lastAdmin' },
  { re: /^choose at least one scope$/, key: 'problem.chooseScope' },
  { re: /^say why, for the history$/, key: 'detail.reasonMissing' },
  { re: /^tag (\d+) (.*)$/s, key: 'problem.tagN', args: ['n', 'problem*'] },
  // zod's own messages for values a form cannot normally send (an unknown option, a wrong type).
  { re: /^is not a valid value$/, key: 'problem.invalid' },
  { re: /^(Invalid|Too small|Too big|Expected)\b/, key: 'problem.invalid' },
];

/** The catalogue key and arguments for an English problem message, or null when it is not a known one. */
export function matchProblem(
  message: string,
): { key: MessageKey; args: Record<string, string | number>; nested: Record<string, string> } | null {
  const text = message.trim().replace(/\.$/, '');
  for (const pattern of PROBLEM_PATTERNS) {
    const m = pattern.re.exec(text);
    if (!m) continue;
    const args: Record<string, string | number> = {};
    const nested: Record<string, string> = {};
    for (const [i, name] of (pattern.args ?? []).entries()) {
      const value = m[i + 1] ?? '';
      if (name.endsWith('*')) nested[name.slice(0, -1)] = value;
      else args[name] = /^\d+$/.test(value) ? Number(value) : value;
    }
    return { key: pattern.key, args, nested };
  }
  return null;
}
