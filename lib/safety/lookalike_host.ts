import punycode from 'punycode.js';
import type { ScanFinding } from './scan_result.ts';

// Scripts a host label may be written in; anything else counts as "Other". Common (digits, hyphen) and
// Inherited (combining marks) characters belong to no script and never make a label mixed.
const SCRIPTS = [
  'Latin',
  'Cyrillic',
  'Greek',
  'Armenian',
  'Georgian',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Khmer',
  'Mongolian',
  'Ethiopic',
  'Cherokee',
  'Canadian_Aboriginal',
  'Han',
  'Hiragana',
  'Katakana',
  'Hangul',
  'Bopomofo',
].map((name) => [name, new RegExp(`^\\p{Script=${name}}$`, 'u')] as const);
const NO_SCRIPT = /^[\p{Script=Common}\p{Script=Inherited}]$/u;

// UTS #39 "highly restrictive": one script, or Latin with the scripts East Asian writing combines.
const ALLOWED_MIXES: readonly (readonly string[])[] = [
  ['Latin', 'Han', 'Hiragana', 'Katakana'],
  ['Latin', 'Han', 'Bopomofo'],
  ['Latin', 'Han', 'Hangul'],
];

// Letters of other scripts that render like a Latin letter (the lower-case subset of Unicode's
// confusables.txt that matters once a host is lower-cased), keyed by script.
const LATIN_LOOKALIKES: Record<string, Record<string, string>> = {
  Cyrillic: {
    а: 'a',
    в: 'b',
    с: 'c',
    ԁ: 'd',
    е: 'e',
    ҽ: 'e',
    һ: 'h',
    і: 'i',
    ӏ: 'l',
    ј: 'j',
    к: 'k',
    м: 'm',
    п: 'n',
    о: 'o',
    р: 'p',
    ԛ: 'q',
    г: 'r',
    ѕ: 's',
    т: 't',
    ц: 'u',
    ѵ: 'v',
    ԝ: 'w',
    х: 'x',
    у: 'y',
    ү: 'y',
    ь: 'b',
  },
  Greek: {
    α: 'a',
    β: 'b',
    ϲ: 'c',
    ε: 'e',
    η: 'n',
    ι: 'i',
    ϳ: 'j',
    κ: 'k',
    ν: 'v',
    ο: 'o',
    ρ: 'p',
    τ: 't',
    υ: 'u',
    χ: 'x',
    γ: 'y',
    ω: 'w',
  },
  Armenian: { ա: 'w', հ: 'h', ո: 'n', ս: 'u', օ: 'o', զ: 'q', ց: 'g', ք: 'p', ե: 't' },
};
// Latin letters that pass for a plain ASCII one (dotless i, script g, ...), and the dot below.
const LATIN_LOOKALIKE_LETTERS: Record<string, string> = {
  ı: 'i',
  ɩ: 'i',
  ɡ: 'g',
  ɑ: 'a',
  ȷ: 'j',
  ʏ: 'y',
  ɒ: 'a',
  ƅ: 'b',
  ꞁ: 'l',
  ꜱ: 's',
};
const DOT_BELOW = '\u0323';

function getScript(ch: string): string | null {
  if (NO_SCRIPT.test(ch)) return null;
  for (const [name, re] of SCRIPTS) if (re.test(ch)) return name;
  return 'Other';
}

/** The scripts a label uses, in order of first appearance. */
export function getLabelScripts(label: string): string[] {
  const scripts = new Set<string>();
  for (const ch of label) {
    const script = getScript(ch);
    if (script) scripts.add(script);
  }
  return [...scripts];
}

/**
 * A warning when a host (as the URL parser leaves it: lower case, punycode) is an internationalised name
 * built to look like another: a label mixing scripts (Latin with Cyrillic, say) outside the combinations
 * East Asian names use; a label wholly in Cyrillic, Greek or Armenian made only of letters that look Latin
 * (`аррӏе.com`), unless the TLD is in that script too; Latin look-alike letters (dotless i, script g, dot
 * below); or a malformed punycode label. Legitimate IDNs (`münchen.de`, `пример.рф`) pass.
 */
export function checkLookalikeHost(host: string): ScanFinding | null {
  const labels = host.split('.').filter(Boolean);
  const unicodeLabels: string[] = [];
  for (const label of labels) {
    if (!label.startsWith('xn--')) {
      unicodeLabels.push(label);
      continue;
    }
    try {
      unicodeLabels.push(punycode.decode(label.slice(4)).normalize('NFC'));
    } catch {
      return warn(`the host label ${label} is not valid punycode`);
    }
  }
  if (unicodeLabels.every((l) => /^[\x21-\x7e]*$/.test(l))) return null;
  const display = unicodeLabels.join('.');
  const tldScripts = getLabelScripts(unicodeLabels.at(-1) ?? '');

  for (const label of unicodeLabels) {
    const scripts = getLabelScripts(label);
    if (scripts.length > 1 && !ALLOWED_MIXES.some((mix) => scripts.every((s) => mix.includes(s)))) {
      return warn(`the host ${display} mixes ${scripts.join(' and ')} letters in "${label}"`);
    }
    const script = scripts[0];
    if (script === undefined) continue;
    const lookalikes = LATIN_LOOKALIKES[script];
    if (lookalikes && !(tldScripts.length === 1 && tldScripts[0] === script)) {
      const letters = [...label].filter((ch) => getScript(ch) !== null);
      if (letters.length > 0 && letters.every((ch) => lookalikes[ch] !== undefined)) {
        const skeleton = [...label].map((ch) => lookalikes[ch] ?? ch).join('');
        return warn(
          `the host ${display} is written in ${script} letters that read as the Latin "${skeleton}"`,
        );
      }
    }
    if (script === 'Latin') {
      const decomposed = label.normalize('NFD');
      const odd = [...label].find((ch) => LATIN_LOOKALIKE_LETTERS[ch] !== undefined);
      if (odd)
        return warn(`the host ${display} uses "${odd}", which passes for "${LATIN_LOOKALIKE_LETTERS[odd]}"`);
      if (decomposed.includes(DOT_BELOW)) {
        return warn(`the host ${display} hides a dot below a letter in "${label}"`);
      }
    }
  }
  return null;
}

function warn(reason: string): ScanFinding {
  return { verdict: 'warn', rule: 'lookalike', reason };
}
