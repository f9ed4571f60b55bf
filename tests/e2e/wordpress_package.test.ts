import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import vm from 'node:vm';
import { ROOT } from '../../scripts/temporal_cli.ts';
import {
  EDITOR_SCRIPT,
  LANGUAGES_DIR,
  PLUGIN_DIR,
  parsePo,
  renderLanguages,
  TEXT_DOMAIN,
} from '../../scripts/wordpress_i18n.ts';

// The WordPress plugin as the plugin directory takes it: readme.txt in the directory's format agreeing with the
// plugin's headers, translations made from the source and complete, PHP_CodeSniffer with the plugin's ruleset
// (which must also catch a bad file), and the editor panel on the current block-editor API. What needs a running
// WordPress is in wordpress_publish.test.ts and wordpress_multisite.test.ts.

const WP_DIR = join(ROOT, 'integrations', 'wordpress');
const RULESET = join(WP_DIR, 'phpcs.xml.dist');

/** The main file's headers, read as WordPress's get_file_data() reads them. */
function pluginHeaders(): Record<string, string> {
  const text = readFileSync(join(PLUGIN_DIR, 'lifeline.php'), 'utf8').slice(0, 8192);
  const out: Record<string, string> = {};
  for (const name of [
    'Plugin Name',
    'Description',
    'Version',
    'Requires at least',
    'Requires PHP',
    'Author',
    'License',
    'License URI',
    'Text Domain',
    'Domain Path',
    'Update URI',
    'Network',
  ]) {
    const m = new RegExp(`^[ \\t/*#@]*${name}:(.*)$`, 'mi').exec(text);
    if (m) out[name] = m[1]!.trim();
  }
  return out;
}

interface Readme {
  name: string;
  headers: Record<string, string>;
  short: string;
  sections: [string, string][];
}

/** readme.txt as the directory's parser reads it: title, header lines, short description, == sections ==. */
function parseReadme(text: string): Readme {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const title = /^===\s*(.+?)\s*===$/.exec(lines[0] ?? '');
  assert.ok(title, 'readme.txt starts with === Plugin Name ===');
  const headers: Record<string, string> = {};
  let i = 1;
  for (; i < lines.length && lines[i]!.trim() !== ''; i++) {
    const m = /^([A-Za-z ]+):\s*(.*)$/.exec(lines[i]!);
    assert.ok(m, `a header line: ${lines[i]}`);
    headers[m[1]!.trim()] = m[2]!.trim();
  }
  const rest = lines.slice(i).join('\n');
  const firstSection = rest.search(/^== /m);
  const short = rest.slice(0, firstSection).trim();
  const sections: [string, string][] = [];
  for (const part of rest.slice(firstSection).split(/^== /m).filter(Boolean)) {
    const m = /^(.+?) ==\n([\s\S]*)$/.exec(part);
    assert.ok(m, `a section: ${part.slice(0, 40)}`);
    sections.push([m[1]!, m[2]!.trim()]);
  }
  return { name: title[1]!, headers, short, sections };
}

test("readme.txt is in the plugin directory's format and agrees with the plugin's headers", () => {
  const plugin = pluginHeaders();
  const readme = parseReadme(readFileSync(join(PLUGIN_DIR, 'readme.txt'), 'utf8'));
  const version = plugin.Version!;

  assert.equal(readme.name, plugin['Plugin Name']);
  for (const h of [
    'Contributors',
    'Tags',
    'Requires at least',
    'Tested up to',
    'Requires PHP',
    'Stable tag',
    'License',
    'License URI',
  ]) {
    assert.ok(readme.headers[h], `readme.txt has "${h}"`);
  }
  assert.equal(readme.headers['Stable tag'], version, 'Stable tag is the released version');
  for (const h of ['Requires at least', 'Requires PHP', 'License', 'License URI']) {
    assert.equal(readme.headers[h], plugin[h], `"${h}" agrees with lifeline.php`);
  }
  assert.ok(readme.headers.Tags!.split(',').length <= 5, 'the directory shows five tags at most');
  assert.ok(
    readme.short.length > 0 && readme.short.length <= 150,
    'a short description of at most 150 characters',
  );
  assert.doesNotMatch(readme.short, /[<*`[]/, 'the short description is plain text');
  assert.deepEqual(
    readme.sections.map(([name]) => name),
    ['Description', 'Installation', 'Frequently Asked Questions', 'Changelog', 'Upgrade Notice'],
  );
  const section = (name: string) => readme.sections.find(([n]) => n === name)![1];
  assert.ok(section('Changelog').startsWith(`= ${version} =`), 'the changelog starts with this version');
  const notice = /^= (\S+) =\n([\s\S]*?)(?=\n= |$)/.exec(section('Upgrade Notice'));
  assert.ok(notice, 'an upgrade notice');
  assert.equal(notice[1], version, 'the upgrade notice is for this version');
  assert.ok(notice[2]!.trim().length <= 300, 'an upgrade notice of at most 300 characters');

  // "Tested up to" is the WordPress the end-to-end tests run: Debian's package.
  const core = readFileSync('/usr/share/wordpress/wp-includes/version.php', 'utf8');
  const coreVersion = /\$wp_version = '(\d+\.\d+)/.exec(core)?.[1];
  assert.equal(readme.headers['Tested up to'], coreVersion);

  // The plugin's own headers: GPL, its text domain is its folder's name (the directory's slug), the translations
  // are where Domain Path says, the version constant is the header's, and the .pot names it.
  assert.equal(plugin.License, 'GPL-2.0-or-later');
  assert.equal(plugin['Text Domain'], TEXT_DOMAIN);
  assert.equal(TEXT_DOMAIN, 'lifeline', 'the text domain is the folder name');
  assert.equal(plugin['Domain Path'], '/languages');
  assert.ok(existsSync(join(PLUGIN_DIR, plugin['Domain Path']!, `${TEXT_DOMAIN}.pot`)));
  assert.ok(plugin['Update URI'], 'an Update URI (docs/adr/0074)');
  assert.equal(plugin.Network, undefined, 'activates per site or network-wide, not network-only');
  const main = readFileSync(join(PLUGIN_DIR, 'lifeline.php'), 'utf8');
  assert.match(
    main,
    new RegExp(`define\\( 'LIFELINE_PLUGIN_VERSION', '${version.replace(/\./g, '\\.')}' \\);`),
  );
  assert.match(
    readFileSync(join(LANGUAGES_DIR, `${TEXT_DOMAIN}.pot`), 'utf8'),
    new RegExp(`Project-Id-Version: Lifeline Short Links ${version.replace(/\./g, '\\.')}\\\\n`),
  );
});

test('the .pot, the Arabic .po/.mo and the editor panel JSON are made from the current source and complete', () => {
  const { files, untranslated } = renderLanguages();
  for (const [name, content] of files) {
    assert.ok(
      readFileSync(join(LANGUAGES_DIR, name)).equals(content),
      `${name} is current (run npx tsx scripts/wordpress_i18n.ts and commit)`,
    );
  }
  assert.deepEqual(untranslated, [], 'every string is translated');
  assert.ok(files.has('lifeline-ar.mo') && files.has(`lifeline-ar-${EDITOR_SCRIPT.handle}.json`));

  const pot = parsePo(readFileSync(join(LANGUAGES_DIR, 'lifeline.pot'), 'utf8')).filter((e) => e.id !== '');
  assert.ok(pot.length >= 70, `the .pot holds the plugin's strings (${pot.length})`);
  for (const id of ['Lifeline short links', 'Test connection', 'Lifeline short link', 'Copy']) {
    assert.ok(
      pot.some((e) => e.id === id),
      `"${id}" is in the .pot`,
    );
  }
  // Only the panel's strings go to its JSON, in the Jed form wp.i18n.setLocaleData() takes.
  const json = JSON.parse(files.get(`lifeline-ar-${EDITOR_SCRIPT.handle}.json`)!.toString('utf8')) as {
    locale_data: { messages: Record<string, unknown> };
  };
  const messages = json.locale_data.messages;
  assert.deepEqual(messages['Lifeline short link'], ['رابط Lifeline القصير']);
  assert.deepEqual(messages.Copy, ['نسخ']);
  assert.equal(messages['Test connection'], undefined, 'PHP-only strings stay out of the JSON');
  assert.equal((messages[''] as { lang: string }).lang, 'ar');
});

function phpcs(args: string[]) {
  const run = spawnSync('phpcs', ['-q', `--standard=${RULESET}`, '--report=json', ...args], {
    cwd: WP_DIR,
    encoding: 'utf8',
  });
  assert.ok(!run.error, `phpcs could not run (Debian's php-codesniffer, installed by .ci/run): ${run.error}`);
  const report = JSON.parse(run.stdout) as {
    totals: { errors: number; warnings: number };
    files: Record<string, { messages: { source: string; line: number; message: string }[] }>;
  };
  const messages = Object.entries(report.files).flatMap(([file, f]) =>
    f.messages.map((m) => ({ ...m, file })),
  );
  return { status: run.status, totals: report.totals, messages };
}

// Each line after the first breaks one rule; GOOD_PHP is the same code done right.
const BAD_PHP = `<?php
function lifeline_fixture_render() {
	$name = $_POST['name'];
	echo '<p>' . $name . '</p>';
	_e( 'Saved.', 'lifeline' );
	printf( '<a href="%s">x</a>', $name );
	echo esc_html__( 'Hello', 'another-plugin' );
	echo esc_html( __( $name, 'lifeline' ) );
	echo esc_html( sprintf( __( '%s of %s', 'lifeline' ), 1, 2 ) );
	global $wpdb;
	$wpdb->query( "DELETE FROM {$wpdb->posts} WHERE post_title = '$name'" );
	$wpdb->get_var( 'SELECT ID FROM ' . $wpdb->posts . ' WHERE post_name = ' . $name );
	return json_encode( $name );
}
`;
const GOOD_PHP = `<?php
if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

function lifeline_fixture_render() {
	check_admin_referer( 'lifeline_fixture' );
	$name = isset( $_POST['name'] ) ? sanitize_text_field( wp_unslash( $_POST['name'] ) ) : '';
	echo '<p>' . esc_html( $name ) . '</p>';
	esc_html_e( 'Saved.', 'lifeline' );
	printf( '<a href="%s">x</a>', esc_url( $name ) );
	echo esc_html__( 'Hello', 'lifeline' );
	/* translators: 1: posts sent, 2: posts in the run */
	echo esc_html( sprintf( __( '%1$s of %2$s', 'lifeline' ), 1, 2 ) );
	global $wpdb;
	$wpdb->query( $wpdb->prepare( "DELETE FROM {$wpdb->posts} WHERE post_title = %s", $name ) );
	$wpdb->get_var( $wpdb->prepare( "SELECT ID FROM {$wpdb->posts} WHERE post_name = %s", $name ) );
	return wp_json_encode( $name );
}
`;

test("PHP_CodeSniffer with the plugin's ruleset passes on the plugin and refuses a file that breaks its rules", () => {
  const plugin = phpcs([]);
  assert.deepEqual(
    plugin.messages.map((m) => `${m.file}:${m.line} ${m.source} ${m.message}`),
    [],
    'the plugin is clean',
  );
  assert.equal(plugin.status, 0);

  const dir = mkdtempSync(join(tmpdir(), 'lifeline-phpcs-'));
  try {
    writeFileSync(join(dir, 'bad.php'), BAD_PHP);
    writeFileSync(join(dir, 'good.php'), GOOD_PHP);
    const bad = phpcs([join(dir, 'bad.php')]);
    assert.notEqual(bad.status, 0, 'phpcs fails on the bad file');
    const found = new Set(bad.messages.map((m) => m.source));
    for (const source of [
      'LifelineWP.Files.DirectAccess.Missing',
      'LifelineWP.Security.NonceVerification.Missing',
      'LifelineWP.Security.ValidatedSanitizedInput.InputNotValidated',
      'LifelineWP.Security.ValidatedSanitizedInput.InputNotSanitized',
      'LifelineWP.Security.EscapeOutput.OutputNotEscaped',
      'LifelineWP.Security.EscapeOutput.UnsafePrintingFunction',
      'LifelineWP.WP.I18n.TextDomainMismatch',
      'LifelineWP.WP.I18n.NonSingularStringLiteralText',
      'LifelineWP.WP.I18n.UnorderedPlaceholders',
      'LifelineWP.WP.I18n.MissingTranslatorsComment',
      'LifelineWP.Security.PreparedSQL.InterpolatedNotPrepared',
      'LifelineWP.Security.PreparedSQL.NotPrepared',
      'Generic.PHP.ForbiddenFunctions.FoundWithAlternative',
    ]) {
      assert.ok(found.has(source), `${source} is reported (found: ${[...found].join(', ')})`);
    }
    // Two unescaped outputs: the echo's $name and printf's.
    assert.equal(
      bad.messages.filter((m) => m.source === 'LifelineWP.Security.EscapeOutput.OutputNotEscaped').length,
      2,
    );
    const good = phpcs([join(dir, 'good.php')]);
    assert.deepEqual(
      good.messages.map((m) => `${m.line} ${m.source}`),
      [],
      'the same code done right passes',
    );
    assert.equal(good.status, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** editor.js run against a `wp` global shaped like a WordPress version's; returns what it registered. */
function runEditorScript(wp: Record<string, unknown>) {
  const registered: { name: string; settings: { render: () => { type: unknown } } }[] = [];
  const element = {
    createElement: (type: unknown, props: unknown, ...children: unknown[]) => ({ type, props, children }),
    useState: (initial: unknown) => [initial, () => {}],
    useEffect: () => {},
  };
  const stores: string[] = [];
  const editorStore = {
    getCurrentPostId: () => 7,
    getCurrentPostAttribute: () => 'publish',
    isSavingPost: () => false,
  };
  const globals = {
    plugins: {
      registerPlugin: (name: string, settings: never) => registered.push({ name, settings }),
    },
    element,
    data: {
      useSelect: (select: (s: (store: string) => unknown) => unknown) =>
        select((store) => {
          stores.push(store);
          return editorStore;
        }),
    },
    i18n: { __: (text: string) => text },
    components: { Button: 'Button' },
    apiFetch: () => new Promise(() => {}),
    ...wp,
  };
  vm.runInNewContext(readFileSync(join(PLUGIN_DIR, EDITOR_SCRIPT.file), 'utf8'), {
    window: { wp: globals },
  });
  return { registered, stores };
}

test("the editor panel uses @wordpress/editor's PluginDocumentSettingPanel where it exists and never reads the deprecated wp.editPost one there; WordPress before 6.6 gets wp.editPost's", () => {
  const Current = () => null;
  const Older = () => null;
  // WordPress 6.6 and later: wp.editPost's panel is a deprecated alias that warns when read.
  let deprecatedReads = 0;
  const editPost = {};
  Object.defineProperty(editPost, 'PluginDocumentSettingPanel', {
    get() {
      deprecatedReads++;
      return Older;
    },
  });
  const now = runEditorScript({ editor: { PluginDocumentSettingPanel: Current }, editPost });
  assert.deepEqual(
    now.registered.map((r) => r.name),
    ['lifeline-shortlink'],
  );
  assert.equal(now.registered[0]!.settings.render().type, Current);
  assert.equal(deprecatedReads, 0, 'wp.editPost.PluginDocumentSettingPanel is never read');
  assert.deepEqual(now.stores, ['core/editor'], 'the post is read from the core/editor store');

  // WordPress 5.6 to 6.5 (Debian's 6.1 among them): @wordpress/editor has no such panel yet.
  const older = runEditorScript({ editor: {}, editPost: { PluginDocumentSettingPanel: Older } });
  assert.equal(older.registered[0]!.settings.render().type, Older);

  // Neither (a WordPress without the block editor's plugin slots): nothing is registered, nothing breaks.
  assert.deepEqual(runEditorScript({ editor: {}, editPost: undefined }).registered, []);
});
