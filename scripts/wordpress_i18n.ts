// The WordPress plugin's translations (integrations/wordpress/lifeline/languages/), made with GNU gettext as
// WP-CLI's `wp i18n` would (no wp-cli package is reachable here): lifeline.pot from every gettext call in the
// PHP and the editor panel's JavaScript (xgettext with WordPress's keywords), each lifeline-<locale>.po brought
// up to date with it (msgmerge: translations kept, new strings empty), its .mo (msgfmt), and the editor panel's
// strings as lifeline-<locale>-lifeline-editor.json, the Jed file wp_set_script_translations() loads by handle.
// Run it after changing a user-visible string, translate the new entries in each .po, run it again and commit.
// `--check` writes nothing and fails when a committed file is stale or a .po has untranslated or fuzzy entries
// (tests/e2e/wordpress_package.test.ts).
//
//   npx tsx scripts/wordpress_i18n.ts [--check]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './temporal_cli.ts';

export const PLUGIN_DIR = join(ROOT, 'integrations', 'wordpress', 'lifeline');
export const LANGUAGES_DIR = join(PLUGIN_DIR, 'languages');
export const TEXT_DOMAIN = 'lifeline';
/** The editor panel: its script handle (Lifeline_Shortlink::EDITOR_SCRIPT) and file. */
export const EDITOR_SCRIPT = { handle: 'lifeline-editor', file: 'assets/editor.js' } as const;

// WordPress's gettext functions (wp-includes/l10n.php and @wordpress/i18n), as xgettext keywords.
const PHP_KEYWORDS = [
  '__',
  '_e',
  '_x:1,2c',
  '_ex:1,2c',
  '_n:1,2',
  '_nx:1,2,4c',
  '_n_noop:1,2',
  '_nx_noop:1,2,3c',
  'esc_attr__',
  'esc_html__',
  'esc_attr_e',
  'esc_html_e',
  'esc_attr_x:1,2c',
  'esc_html_x:1,2c',
];
const JS_KEYWORDS = ['__', '_x:1,2c', '_n:1,2', '_nx:1,2,4c'];

function pluginVersion(): string {
  const main = readFileSync(join(PLUGIN_DIR, 'lifeline.php'), 'utf8');
  const version = /^\s*\*\s*Version:\s*(\S+)/m.exec(main)?.[1];
  if (!version) throw new Error('lifeline.php has no Version header');
  return version;
}

function phpFiles(dir = PLUGIN_DIR): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...phpFiles(path));
    else if (entry.name.endsWith('.php')) out.push(relative(PLUGIN_DIR, path));
  }
  return out.sort();
}

function gettext(tool: string, args: string[], input?: string): Buffer {
  return execFileSync(tool, args, {
    cwd: PLUGIN_DIR,
    ...(input !== undefined ? { input } : {}),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** lifeline.pot: a fixed header (no creation date, so an unchanged catalog is byte-identical) and the strings. */
export function makePot(): string {
  const work = mkdtempSync(join(tmpdir(), 'lifeline-i18n-'));
  try {
    // With a header, so the catalogs declare UTF-8 (without one xgettext writes ASCII and drops "…", "→");
    // the header is replaced by a fixed one below.
    const common = [
      '--from-code=UTF-8',
      '--add-comments=translators:',
      '--add-location=file',
      '--sort-by-file',
      '--no-wrap',
      '--force-po',
    ];
    const php = join(work, 'php.pot');
    const js = join(work, 'js.pot');
    gettext('xgettext', [
      ...common,
      '--language=PHP',
      ...PHP_KEYWORDS.map((k) => `--keyword=${k}`),
      '-o',
      php,
      ...phpFiles(),
    ]);
    gettext('xgettext', [
      ...common,
      '--language=JavaScript',
      ...JS_KEYWORDS.map((k) => `--keyword=${k}`),
      '-o',
      js,
      EDITOR_SCRIPT.file,
    ]);
    const body = gettext('msgcat', [
      '--use-first',
      '--sort-by-file',
      '--no-wrap',
      '--add-location=file',
      php,
      js,
    ]).toString('utf8');
    // Everything after xgettext's header entry (the first blank line).
    return `${potHeader()}\n${body.slice(body.indexOf('\n\n') + 2)}`;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function potHeader(): string {
  return [
    '# Lifeline Short Links: the strings of the WordPress plugin.',
    '# This file is distributed under the same license as the plugin (GPL-2.0-or-later).',
    '# Made by scripts/wordpress_i18n.ts; do not edit.',
    'msgid ""',
    'msgstr ""',
    `"Project-Id-Version: Lifeline Short Links ${pluginVersion()}\\n"`,
    '"MIME-Version: 1.0\\n"',
    '"Content-Type: text/plain; charset=UTF-8\\n"',
    '"Content-Transfer-Encoding: 8bit\\n"',
    '"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\\n"',
    `"X-Domain: ${TEXT_DOMAIN}\\n"`,
    '',
  ].join('\n');
}

/** A .po brought up to date with the .pot: its translations kept, new strings untranslated, gone ones dropped. */
export function mergePo(po: string, pot: string): string {
  const work = mkdtempSync(join(tmpdir(), 'lifeline-i18n-'));
  try {
    writeFileSync(join(work, 'def.po'), po);
    writeFileSync(join(work, 'ref.pot'), pot);
    const merged = gettext('msgmerge', [
      '--quiet',
      '--no-fuzzy-matching',
      '--no-wrap',
      '--add-location=file',
      '--sort-by-file',
      join(work, 'def.po'),
      join(work, 'ref.pot'),
    ]).toString('utf8');
    // msgmerge drops entries no longer in the .pot as "#~" comments; they are gone for good.
    return gettext('msgattrib', ['--no-obsolete', '--no-wrap'], merged).toString('utf8');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function compileMo(po: string): Buffer {
  return gettext('msgfmt', ['--check-format', '-o', '-', '-'], po);
}

export interface PoEntry {
  context?: string;
  id: string;
  plural?: string;
  strings: string[];
  references: string[];
  fuzzy: boolean;
}

function unquote(line: string): string {
  const m = /^"(.*)"\s*$/.exec(line.trim());
  if (!m) throw new Error(`not a PO string: ${line}`);
  return m[1]!.replace(/\\(["\\ntr])/g, (_, c: string) =>
    c === 'n' ? '\n' : c === 't' ? '\t' : c === 'r' ? '\r' : c,
  );
}

/** Reads a .po's entries (the header is the entry with id ""). */
export function parsePo(text: string): PoEntry[] {
  const entries: PoEntry[] = [];
  let entry: PoEntry | undefined;
  let field: { set(value: string): void } | undefined;
  const begin = () => {
    if (!entry) entry = { id: '', strings: [], references: [], fuzzy: false };
    return entry;
  };
  const finish = () => {
    if (entry) entries.push(entry);
    entry = undefined;
    field = undefined;
  };
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (line === '') {
      finish();
      continue;
    }
    if (line.startsWith('#~')) continue;
    if (line.startsWith('#')) {
      if (entry && entry.strings.length > 0) finish();
      const e = begin();
      if (line.startsWith('#:')) e.references.push(...line.slice(2).trim().split(/\s+/));
      if (line.startsWith('#,') && /\bfuzzy\b/.test(line)) e.fuzzy = true;
      continue;
    }
    const m = /^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(".*")$/.exec(line);
    if (m) {
      if (m[1] === 'msgctxt' || (m[1] === 'msgid' && entry && entry.strings.length > 0)) finish();
      const e = begin();
      const value = unquote(m[3]!);
      if (m[1] === 'msgctxt') {
        e.context = value;
        field = { set: (v) => (e.context += v) };
      } else if (m[1] === 'msgid') {
        e.id = value;
        field = { set: (v) => (e.id += v) };
      } else if (m[1] === 'msgid_plural') {
        e.plural = value;
        field = { set: (v) => (e.plural += v) };
      } else {
        const index = m[2] === undefined ? 0 : Number(m[2]);
        e.strings[index] = value;
        field = { set: (v) => (e.strings[index] += v) };
      }
      continue;
    }
    if (line.startsWith('"') && field) {
      field.set(unquote(line));
      continue;
    }
    throw new Error(`unreadable PO line: ${line}`);
  }
  finish();
  return entries;
}

function headerField(entries: PoEntry[], name: string): string | undefined {
  const header = entries.find((e) => e.id === '' && e.context === undefined)?.strings[0] ?? '';
  return new RegExp(`^${name}:\\s*(.*)$`, 'mi').exec(header)?.[1]?.trim();
}

/** The translations of the strings `script` uses, as the Jed 1.x JSON wp_set_script_translations() loads. */
export function scriptJson(po: string, script: string): string {
  const entries = parsePo(po);
  const locale = headerField(entries, 'Language') ?? '';
  const messages: Record<string, unknown> = {
    '': {
      domain: 'messages',
      lang: locale,
      'plural-forms': headerField(entries, 'Plural-Forms') ?? 'nplurals=2; plural=(n != 1);',
    },
  };
  for (const e of entries) {
    if (e.id === '' || e.fuzzy || !e.references.some((r) => r === script || r.startsWith(`${script}:`)))
      continue;
    if (e.strings.every((s) => !s)) continue;
    const key = e.context === undefined ? e.id : `${e.context}\u0004${e.id}`;
    messages[key] = e.strings;
  }
  return `${JSON.stringify({ domain: 'messages', locale_data: { messages } })}\n`;
}

/** Every file of languages/ as this script makes it, and what a .po still lacks. */
export function renderLanguages(): { files: Map<string, Buffer>; untranslated: string[] } {
  const pot = makePot();
  const files = new Map<string, Buffer>([[`${TEXT_DOMAIN}.pot`, Buffer.from(pot)]]);
  const untranslated: string[] = [];
  for (const name of readdirSync(LANGUAGES_DIR).sort()) {
    const m = new RegExp(`^${TEXT_DOMAIN}-([A-Za-z_]+)\\.po$`).exec(name);
    if (!m) continue;
    const locale = m[1]!;
    const po = mergePo(readFileSync(join(LANGUAGES_DIR, name), 'utf8'), pot);
    files.set(name, Buffer.from(po));
    files.set(`${TEXT_DOMAIN}-${locale}.mo`, compileMo(po));
    files.set(
      `${TEXT_DOMAIN}-${locale}-${EDITOR_SCRIPT.handle}.json`,
      Buffer.from(scriptJson(po, EDITOR_SCRIPT.file)),
    );
    for (const e of parsePo(po)) {
      if (e.id !== '' && (e.fuzzy || e.strings.length === 0 || e.strings.some((s) => !s)))
        untranslated.push(`${name}: ${JSON.stringify(e.id)}`);
    }
  }
  return { files, untranslated };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const check = process.argv.includes('--check');
  const { files, untranslated } = renderLanguages();
  const stale: string[] = [];
  for (const [name, content] of files) {
    const path = join(LANGUAGES_DIR, name);
    let current: Buffer | undefined;
    try {
      current = readFileSync(path);
    } catch {}
    if (current?.equals(content)) continue;
    if (check) stale.push(name);
    else writeFileSync(path, content);
  }
  for (const line of untranslated) console.error(`untranslated: ${line}`);
  if (check && stale.length > 0) {
    console.error(`stale: ${stale.join(', ')}: run npx tsx scripts/wordpress_i18n.ts and commit.`);
  }
  if (check && (stale.length > 0 || untranslated.length > 0)) process.exit(1);
  console.error(
    `wordpress_i18n: ${files.size} file(s) ${check ? 'checked' : 'written'} in ${relative(ROOT, LANGUAGES_DIR)}`,
  );
}
