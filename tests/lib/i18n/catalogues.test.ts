// The catalogues, the message format, locale negotiation and the translation of the lib's English problems.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createApiKeyInputSchema } from '../../../lib/auth/issue_api_key.ts';
import { createUserInputSchema } from '../../../lib/auth/manage_users.ts';
import { aliasSchema } from '../../../lib/codes/code_rules.ts';
import {
  formatParts,
  getArgumentNames,
  getPluralOptions,
  MessageSyntaxError,
  parseMessage,
} from '../../../lib/i18n/format_message.ts';
import { LOCALE_INFO, LOCALES, negotiateLocale, pickLocale } from '../../../lib/i18n/locales.ts';
import { en, type MessageKey } from '../../../lib/i18n/messages_en.ts';
import { matchProblem } from '../../../lib/i18n/problems.ts';
import { CATALOGUES, createI18n } from '../../../lib/i18n/translator.ts';
import { createLinkInputSchema, updateLinkInputSchema } from '../../../lib/links/link.ts';
import { linkListQuerySchema } from '../../../lib/links/list_links.ts';
import { ValidationError } from '../../../lib/shared/errors.ts';
import {
  fieldProblem,
  PROBLEM_TEXTS,
  type ProblemCode,
  problemCodeOf,
} from '../../../lib/shared/field_problems.ts';
import { toProblem } from '../../../lib/shared/problem.ts';
import { toFieldErrors } from '../../../lib/shared/validation.ts';
import { toFieldMap } from '../../../lib/ui/link_form.ts';
import { ROOT } from '../../../scripts/temporal_cli.ts';

const keys = Object.keys(en) as MessageKey[];

describe('catalogues', () => {
  test('every locale has every key, each message parses, and uses the same arguments as English', () => {
    for (const locale of LOCALES) {
      const messages = CATALOGUES[locale];
      assert.deepEqual(Object.keys(messages).sort(), [...keys].sort(), `${locale}: the same keys as English`);
      for (const key of keys) {
        assert.doesNotThrow(() => parseMessage(messages[key]), `${locale} ${key}`);
        assert.deepEqual(
          [...getArgumentNames(messages[key])].sort(),
          [...getArgumentNames(en[key])].sort(),
          `${locale} ${key}: arguments`,
        );
      }
    }
  });

  test("plurals cover every plural category of the locale (Arabic's six)", () => {
    for (const locale of LOCALES) {
      const categories = new Intl.PluralRules(LOCALE_INFO[locale].intl).resolvedOptions().pluralCategories;
      for (const key of keys) {
        for (const [arg, options] of getPluralOptions(CATALOGUES[locale][key])) {
          for (const category of categories) {
            const exact = { zero: '=0', one: '=1', two: '=2' }[category as string];
            assert.ok(
              options.has(category) || (exact !== undefined && options.has(exact)),
              `${locale} ${key}: {${arg}} lacks "${category}"`,
            );
          }
        }
      }
    }
    assert.deepEqual(new Intl.PluralRules('ar').resolvedOptions().pluralCategories.sort(), [
      'few',
      'many',
      'one',
      'other',
      'two',
      'zero',
    ]);
  });

  test('Arabic is a translation: no message left in English (names and codes aside)', () => {
    const same = keys.filter(
      (k) => CATALOGUES.ar[k] === en[k] && /[a-z]{3}/.test(en[k].replace(/\{[^}]*\}/g, '')),
    );
    // Browser and operating system names are products' own names in every language (the families' "other"
    // and in-app entries are translated, so they are not in this list).
    const products = new Set([
      'Chrome',
      'Safari',
      'Firefox',
      'Edge',
      'Samsung Internet',
      'Opera',
      'UC Browser',
    ]);
    const systems = new Set(['iOS', 'Android', 'Windows', 'macOS', 'Linux', 'ChromeOS']);
    const families = same.filter((k) => k.startsWith('family.'));
    for (const k of families)
      assert.ok(products.has(en[k]) || systems.has(en[k]), `${k} ("${en[k]}") left in English in Arabic`);
    // What stays the same in every language: product names and a format.
    assert.deepEqual(
      same.filter((k) => !k.startsWith('family.')).sort(),
      [
        'actor.system',
        'actor.wordpress',
        'comparison.front.inhouse',
        'document.title',
        'ops.temporalUi',
        'origin.wordpress',
        'vendor.bitly',
      ].sort(),
    );
  });

  test('every key the UI uses exists, and every key exists for a reason', () => {
    // Keys are written literally, or built from a prefix and an enumeration (`status.${status}`).
    const sources: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        const path = join(dir, name.name);
        if (name.isDirectory()) walk(path);
        else if (/\.tsx?$/.test(name.name) && !path.startsWith('lib/i18n/messages_')) {
          sources.push(readFileSync(join(ROOT, path), 'utf8'));
        }
      }
    };
    for (const dir of ['components', 'routes', 'lib']) walk(dir);
    const code = sources.join('\n');
    const literal = new Set([...code.matchAll(/\bt\(\s*'([a-zA-Z0-9_.:-]+)'/g)].map((m) => m[1]!));
    const rich = new Set([...code.matchAll(/\brich\(\s*'([a-zA-Z0-9_.:-]+)'/g)].map((m) => m[1]!));
    const built = [...code.matchAll(/\bt\(\s*`([a-zA-Z0-9_.:-]+)\.\$\{/g)].map((m) => `${m[1]}.`);
    // Problems are translated by their codes (`problem.<code>`).
    const problemKeys = new Set(Object.keys(PROBLEM_TEXTS).map((code) => `problem.${code}`));
    for (const key of [...literal, ...rich])
      assert.ok(key in en, `the code uses "${key}", which no catalogue has`);
    const unused = keys.filter(
      (k) =>
        !literal.has(k) &&
        !code.includes(`'${k}'`) &&
        !rich.has(k) &&
        !problemKeys.has(k) &&
        !built.some((prefix) => k.startsWith(prefix)) &&
        !/^(chart\.(people|previews|bots))$/.test(k),
    );
    assert.deepEqual(unused, [], 'keys no code uses');
  });
});

describe('the message format', () => {
  const ctx = (locale: string) => ({
    plural: new Intl.PluralRules(locale),
    number: new Intl.NumberFormat(locale),
  });
  const format = (message: string, values: Record<string, string | number>, locale = 'en') =>
    formatParts(parseMessage(message), values, ctx(locale)).join('');

  test('arguments, numbers, plural with exact matches and #, select, nesting', () => {
    assert.equal(format('Hello {name}', { name: 'Ana' }), 'Hello Ana');
    assert.equal(format('{n} links', { n: 12345 }), '12,345 links');
    const plural = '{n, plural, =0 {none} one {# link} other {# links}}';
    assert.deepEqual(
      [0, 1, 2, 1000].map((n) => format(plural, { n })),
      ['none', '1 link', '2 links', '1,000 links'],
    );
    assert.equal(format('{k, select, admin {an admin} other {someone}}', { k: 'admin' }), 'an admin');
    assert.equal(format('{k, select, admin {an admin} other {someone}}', { k: 'x' }), 'someone');
    assert.equal(
      format('{m, plural, =0 {{s, plural, one {# second} other {# seconds}}} other {# minutes}}', {
        m: 0,
        s: 1,
      }),
      '1 second',
    );
    // Arabic plural categories pick the right form.
    const ar = '{n, plural, zero {z} one {o} two {t} few {f} many {m} other {x}}';
    assert.deepEqual(
      [0, 1, 2, 3, 10, 11, 99, 100, 101, 102, 103].map((n) => format(ar, { n }, 'ar')),
      ['z', 'o', 't', 'f', 'f', 'm', 'm', 'x', 'x', 'x', 'f'],
    );
  });

  test('a missing argument shows as itself; elements pass through; RTL isolates text arguments', () => {
    assert.equal(format('Hi {who}', {}), 'Hi {who}');
    const el = { type: 'code' };
    assert.deepEqual(formatParts(parseMessage('see {x} now'), { x: el }, ctx('en')), ['see ', el, ' now']);
    const rtl = formatParts(
      parseMessage('{url} مستخدم'),
      { url: 'sho.rt/x' },
      { ...ctx('ar'), isolate: true },
    );
    assert.deepEqual(rtl, ['\u2068sho.rt/x\u2069 مستخدم']);
  });

  test('malformed messages are refused', () => {
    for (const bad of [
      '{',
      '}',
      '{n, plural, one {x}}',
      '{n, plural, other {x}',
      '{ 1bad }',
      '{n, select,}',
    ]) {
      assert.throws(() => parseMessage(bad), MessageSyntaxError, bad);
    }
  });
});

describe('choosing the language', () => {
  test('Accept-Language: q-values, order, regions, wildcards, garbage', () => {
    assert.equal(negotiateLocale('ar-EG,ar;q=0.9,en;q=0.8'), 'ar');
    assert.equal(negotiateLocale('en-GB,en;q=0.9,ar;q=0.8'), 'en');
    assert.equal(negotiateLocale('fr-FR, ar;q=0.5, en;q=0.4'), 'ar');
    assert.equal(negotiateLocale('en;q=0.2, ar;q=0.9'), 'ar');
    assert.equal(negotiateLocale('ar;q=0, en'), 'en');
    assert.equal(negotiateLocale('fr, de'), null);
    assert.equal(negotiateLocale('fr, *;q=0.1'), 'en');
    assert.equal(negotiateLocale(''), null);
    assert.equal(negotiateLocale(undefined), null);
    assert.equal(negotiateLocale(';;;,q=,ar'), 'ar');
    assert.equal(negotiateLocale(`${'x,'.repeat(5000)}ar`), null, 'only the first 1,000 characters are read');
  });

  test("the user's setting, then the browser, then English", () => {
    assert.equal(pickLocale('ar', 'en-GB'), 'ar');
    assert.equal(pickLocale('en', 'ar'), 'en');
    assert.equal(pickLocale(null, 'ar-SA'), 'ar');
    assert.equal(pickLocale('fr', 'ar'), 'ar', 'an unsupported setting falls through');
    assert.equal(pickLocale(null, 'de'), 'en');
    assert.equal(pickLocale(undefined, undefined), 'en');
  });

  test('dates and numbers: Latin digits, Gregorian calendar, the reader’s time zone, 24-hour clock', () => {
    const at = new Date('2026-11-21T09:04:00Z');
    const ar = createI18n('ar', 'Africa/Cairo');
    assert.equal(ar.number(1234567), '1,234,567');
    assert.match(ar.dateTime(at), /^21 نوفمبر 2026، 11:04$/);
    assert.equal(ar.day('2026-11-21'), '21 نوفمبر');
    const en = createI18n('en', 'America/New_York');
    assert.equal(en.dateTime(at), '21 Nov 2026, 04:04');
    assert.equal(en.date(at), '21 Nov 2026');
    assert.equal(ar.region('EG'), 'مصر');
    assert.equal(en.region('EG'), 'Egypt');
    assert.doesNotMatch(ar.dateTime(at) + ar.number(9876), /[\u0660-\u0669]/, 'no Arabic-Indic digits');
  });
});

describe("the lib's English problems, for editors", () => {
  /** Every message a form of the UI can get back from the shared schemas for typical bad input. */
  function problemsFromSchemas(): string[] {
    const messages: string[] = [];
    const collect = (result: { success: boolean; error?: unknown }) => {
      if (!result.success) {
        for (const e of toFieldErrors(result.error as never)) messages.push(e.message);
        // The form's own prefixes too ("tag 2 …").
        for (const m of Object.values(toFieldMap(toFieldErrors(result.error as never)))) messages.push(m);
      }
    };
    for (const input of [
      { url: 'ftp://x' },
      { url: 'not a url' },
      { url: `https://x.example/${'a'.repeat(2100)}` },
      { url: 'https://user:pw@x.example/' },
      { url: 'https:///path' },
      { url: 'https://x.example/', alias: 'ab' },
      { url: 'https://x.example/', alias: '_ab' },
      { url: 'https://x.example/', alias: 'api' },
      { url: 'https://x.example/', alias: 'a b c' },
      { url: 'https://x.example/', tags: ['ok', 'two words'] },
      { url: 'https://x.example/', tags: ['x'.repeat(65)] },
      { url: 'https://x.example/', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) },
      { url: 'https://x.example/', title: '' },
      { url: 'https://x.example/', title: 'a\nb' },
      { url: 'https://x.example/', title: 'x'.repeat(501) },
      { url: 'https://x.example/', title: '\u202e' },
      { url: 'https://x.example/', expiresAt: 'tomorrow' },
      { url: 'https://x.example/', site: 'news' },
      { url: 'https://x.example/', site: 'a b', postId: 1 },
      { url: 'https://x.example/', colour: 'red' },
      { url: 'https://x.example/', utm: { campaign: '' } },
      { url: 'https://x.example/', utm: { source: 'x'.repeat(101) } },
      { url: 'https://x.example/', utm: { medium: 'a\u0007b' } },
      { url: 'https://x.example/', utm: { term: 'x' } },
    ]) {
      collect(createLinkInputSchema.safeParse(input));
    }
    collect(updateLinkInputSchema.safeParse({ reason: 'only a reason' }));
    collect(updateLinkInputSchema.safeParse({ utm: { campaign: 'x'.repeat(101), medium: '' } }));
    collect(aliasSchema.safeParse('x'.repeat(70)));
    collect(linkListQuerySchema.safeParse({ q: 'x'.repeat(201), cursor: 'x'.repeat(601) }));
    collect(
      createUserInputSchema.safeParse({
        email: 'nope',
        name: 'x'.repeat(101),
        role: 'editor',
        password: 'short',
      }),
    );
    collect(createApiKeyInputSchema.safeParse({ name: '', scopes: [] }));
    collect(createApiKeyInputSchema.safeParse({ name: 'x'.repeat(101), scopes: ['links:read'] }));
    return [...new Set(messages)];
  }

  /** Messages lib/ functions raise as field errors (not from a schema). */
  const RAISED = [
    'must be in the future',
    'is taken',
    'already has the link Ab3dE',
    'the link is blocked by the safety check; it becomes active again only when a scan clears it',
    'the link is still being minted; it activates on its own',
    'is in the past; move or clear it to reactivate the link',
    'must not point at the short domain itself',
    'host evil.example is not in ALLOWED_TARGET_HOSTS',
    'is blocked: listed in the local blocklist',
    'must be a clean destination (it is served without a warning page): looks like paypal.com',
    'belongs to an existing user',
    'you cannot disable or demote yourself',
    'this is the last administrator',
    'must be a date and time',
    'say why, for the history',
  ];

  test('each is known, and reads as Arabic in the Arabic UI', () => {
    const ar = createI18n('ar');
    const all = [...problemsFromSchemas(), ...RAISED];
    assert.ok(all.length > 30, `${all.length} messages`);
    for (const message of all) {
      assert.ok(matchProblem(message), `no translation for "${message}"`);
      const shown = ar.problem(message);
      assert.notEqual(shown, message, message);
      assert.match(shown, /[\u0600-\u06ff]/, `${message} → ${shown}`);
    }
    // Sentences name the field, in Arabic order; details that are data stay as they are.
    assert.equal(
      ar.fieldSentence('الاسم المستعار', 'is taken'),
      '\u2068الاسم المستعار\u2069: \u2068مستخدم من قبل\u2069.',
    );
    assert.match(ar.problem('host evil.example is not in ALLOWED_TARGET_HOSTS'), /evil\.example/);
    assert.equal(
      ar.problem('tag 2 must not contain spaces or commas'),
      'الوسم 2: \u2068يجب ألا يحتوي على مسافات أو فواصل\u2069',
    );
  });

  test('English is unchanged: the same sentences as before', () => {
    const en = createI18n('en');
    assert.equal(en.fieldSentence('Custom alias', 'is taken'), 'Custom alias is taken.');
    assert.equal(en.fieldSentence('Tags', 'tag 2 must not contain spaces'), 'Tag 2 must not contain spaces.');
    assert.equal(en.problem('must use http or https'), 'must use http or https');
  });
});

describe('problem codes', () => {
  const codes = Object.keys(PROBLEM_TEXTS) as ProblemCode[];
  const sample = (code: ProblemCode) =>
    Object.fromEntries(
      [...PROBLEM_TEXTS[code].matchAll(/\{(\w+)\}/g)].map(([, name]) => [
        name,
        name === 'problem'
          ? fieldProblem('taken')
          : /^(max|min|n|line|row)$/.test(name!)
            ? 12
            : 'x-1.example',
      ]),
    );

  test('every code has an English and an Arabic message, with the arguments of its text', () => {
    for (const code of codes) {
      const key = `problem.${code}` as MessageKey;
      for (const locale of LOCALES) assert.ok(CATALOGUES[locale][key], `${locale}: no ${key}`);
      assert.deepEqual(
        [...getArgumentNames(en[key])].sort(),
        [...PROBLEM_TEXTS[code].matchAll(/\{(\w+)\}/g)].map(([, name]) => name).sort(),
        `${key}: the arguments of its English text`,
      );
    }
  });

  test("a problem's text maps back to its code and arguments; the Arabic UI shows the code's message", () => {
    const ar = createI18n('ar');
    for (const code of codes) {
      const args = sample(code);
      const text = fieldProblem(code, args);
      assert.deepEqual(problemCodeOf(text), { code, args }, text);
      assert.match(ar.problem({ message: text, code, args }), /[\u0600-\u06ff]/, text);
    }
    // The code decides, not the text; without a code, a text that is not ours stays English.
    assert.equal(ar.problem({ message: 'anything', code: 'taken' }), ar.t('problem.taken'));
    assert.equal(ar.problem('is odd in a way no code names'), 'is odd in a way no code names');
    assert.equal(
      ar.problem(fieldProblem('csvLine', { line: 4, problem: fieldProblem('csvTwoFields') })),
      ar.t('problem.csvLine', { line: 4, problem: ar.t('problem.csvTwoFields') }),
    );
  });

  test('errors[] carry codes: derived from zod checks, from our texts, and on errors raised in code', () => {
    const parsed = createLinkInputSchema.safeParse({
      url: 'https://x.example/',
      alias: 'a b c',
      title: 'x'.repeat(501),
      colour: 'red',
    });
    assert.ok(!parsed.success);
    const byPath = Object.fromEntries(toFieldErrors(parsed.error).map((e) => [e.path, e]));
    assert.equal(byPath.alias?.code, 'codeChars');
    assert.deepEqual([byPath.title?.code, byPath.title?.args], ['maxChars', { max: 500 }]);
    assert.equal(byPath.colour?.code, 'unknownField');
    const raised = new ValidationError([
      { path: 'url', message: fieldProblem('hostNotAllowed', { host: 'evil.example' }) },
      { path: 'note', message: 'something no code names' },
    ]);
    assert.deepEqual(toProblem(raised).body.errors, [
      {
        path: 'url',
        message: 'host evil.example is not in ALLOWED_TARGET_HOSTS',
        code: 'hostNotAllowed',
        args: { host: 'evil.example' },
      },
      { path: 'note', message: 'something no code names' },
    ]);
  });
});
