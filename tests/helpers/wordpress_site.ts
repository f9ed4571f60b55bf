// A real WordPress for end-to-end tests: Debian's `wordpress` package under PHP's built-in server, against the
// machine's MariaDB, with a database and a config file of its own per run, and integrations/wordpress/lifeline
// installed as a normal plugin (symlinked, activated); or a subdirectory multisite network of such blogs with the
// plugin network-activated.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../devkit/harness/harness.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';

const WORDPRESS_ROOT = '/usr/share/wordpress';
const E2E_DIR = join(ROOT, 'tests', 'e2e', 'wordpress');

export interface WordPressSite {
  baseUrl: string;
  dbName: string;
  /** The run's /etc/wordpress/config-<configName>.php (Debian's WORDPRESS_CONFIG switch), for CLI processes. */
  configName: string;
  adminPassword: string;
  /** Calls the WordPress REST API as the admin (application password). */
  rest<T = unknown>(
    path: string,
    init?: { method?: string; json?: unknown },
  ): Promise<{ status: number; body: T }>;
  /** Runs SQL against the site's database through the mysql client; returns rows of tab-separated text. */
  mysql(sql: string): string[][];
  /** The last lines PHP's server wrote (PHP errors and warnings). */
  serverLog(): string;
  /** Runs WP-Cron once (the site has DISABLE_WP_CRON: nothing runs unless asked). */
  runCron(): Promise<void>;
  /** A network's blogs other than the main one (empty for a single site). */
  blogs: WordPressBlog[];
  /** Calls the REST API of the blog whose home URL is `home` (a blog added during the test). */
  restOn<T = unknown>(
    home: string,
    path: string,
    init?: { method?: string; json?: unknown },
  ): Promise<{ status: number; body: T }>;
  stop(): Promise<void>;
}

export interface WordPressBlog {
  id: number;
  /** `/sport/` */
  path: string;
  /** Its home URL, `http://127.0.0.1:<port>/sport` */
  url: string;
  /** Calls this blog's REST API as the network's admin. */
  rest<T = unknown>(
    path: string,
    init?: { method?: string; json?: unknown },
  ): Promise<{ status: number; body: T }>;
  /** Runs this blog's WP-Cron once. */
  runCron(): Promise<void>;
}

export interface WordPressOptions {
  lifelineUrl: string;
  /** The main site's Lifeline site id; left unset, the plugin's default (the host name). */
  siteId?: string;
  secret: string;
  apiKey: string;
  /**
   * A subdirectory multisite network with these blogs besides the main site (`locale`: its WPLANG). The Lifeline
   * URL, secret and API key are then constants in wp-config.php, shared by every blog, and no site id is set.
   */
  multisite?: { blogs: { path: string; locale?: string }[] };
}

function mysql(args: string[], input?: string): string {
  return execFileSync('mysql', ['-uroot', '-h127.0.0.1', '--default-character-set=utf8mb4', ...args], {
    encoding: 'utf8',
    ...(input !== undefined ? { input } : {}),
  });
}

/** Runs older than this that left their config and database behind (a killed test process) are removed. */
const STALE_RUN_MS = 6 * 3600_000;

function removeStaleRuns(): void {
  for (const name of readdirSync('/etc/wordpress')) {
    const m = /^config-lifeline-e2e-([0-9a-f]{12})\.php$/.exec(name);
    if (!m) continue;
    const file = join('/etc/wordpress', name);
    if (Date.now() - statSync(file).mtimeMs < STALE_RUN_MS) continue;
    try {
      mysql(['-e', `DROP DATABASE IF EXISTS \`lifeline_wp_${m[1]}\``]);
    } catch {}
    rmSync(file, { force: true });
  }
}

/** Installs and serves a fresh WordPress; stop() removes its database, config and processes. */
export async function startWordPress(options: WordPressOptions): Promise<WordPressSite> {
  if (!existsSync(join(WORDPRESS_ROOT, 'wp-load.php'))) {
    throw new Error(
      'Debian WordPress is missing: run .ci/run (or apt-get install wordpress php-cli php-mysql)',
    );
  }
  removeStaleRuns();
  const id = randomBytes(6).toString('hex');
  const configName = `lifeline-e2e-${id}`;
  const configFile = `/etc/wordpress/config-${configName}.php`;
  const dbName = `lifeline_wp_${id}`;
  const port = await getFreePort();
  const host = `127.0.0.1:${port}`;
  const baseUrl = `http://${host}`;
  const dir = mkdtempSync(join(tmpdir(), 'lifeline-wp-'));
  const pluginsDir = join(dir, 'plugins');
  const muPluginsDir = join(dir, 'mu-plugins');
  mkdirSync(pluginsDir);
  mkdirSync(muPluginsDir);
  symlinkSync(join(ROOT, 'integrations', 'wordpress', 'lifeline'), join(pluginsDir, 'lifeline'));
  copyFileSync(join(E2E_DIR, 'lifeline-e2e.php'), join(muPluginsDir, 'lifeline-e2e.php'));
  const adminPassword = `wp-${randomBytes(9).toString('base64url')}`;
  const salt = () => randomBytes(32).toString('base64');
  const php = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const multisite = options.multisite;
  // A network's home URLs are per blog (options): WP_HOME would make every blog's home the main site's.
  const urls = multisite
    ? ''
    : `define('WP_HOME', ${php(baseUrl)});\ndefine('WP_SITEURL', ${php(baseUrl)});\n`;
  writeFileSync(
    configFile,
    `<?php
// Lifeline e2e run ${id} (removed when the run ends).
define('DB_NAME', ${php(dbName)});
define('DB_USER', 'root');
define('DB_PASSWORD', '');
define('DB_HOST', '127.0.0.1');
define('DB_CHARSET', 'utf8mb4');
${urls}define('WP_PLUGIN_DIR', ${php(pluginsDir)});
define('WP_PLUGIN_URL', ${php(`${baseUrl}/e2e-plugins`)});
define('WPMU_PLUGIN_DIR', ${php(muPluginsDir)});
define('DISABLE_WP_CRON', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('WP_ACCESSIBLE_HOSTS', '127.0.0.1');
define('WP_ENVIRONMENT_TYPE', 'local');
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_DEBUG', false);
${[
  'AUTH_KEY',
  'SECURE_AUTH_KEY',
  'LOGGED_IN_KEY',
  'NONCE_KEY',
  'AUTH_SALT',
  'SECURE_AUTH_SALT',
  'LOGGED_IN_SALT',
  'NONCE_SALT',
]
  .map((k) => `define('${k}', ${php(salt())});`)
  .join('\n')}
$table_prefix = 'wp_';
`,
  );
  let server: ChildProcess | undefined;
  let serverLog = '';
  const cleanup = async () => {
    if (server?.pid && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      try {
        process.kill(-server.pid, 'SIGTERM');
      } catch {}
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
    }
    try {
      mysql(['-e', `DROP DATABASE IF EXISTS \`${dbName}\``]);
    } catch {}
    rmSync(configFile, { force: true });
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    mysql(['-e', `CREATE DATABASE \`${dbName}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`]);
    const env = {
      ...process.env,
      LIFELINE_E2E_WP_HOST: host,
      LIFELINE_E2E_WP_CONFIG: configName,
      LIFELINE_E2E_WP_ADMIN_PASSWORD: adminPassword,
      LIFELINE_E2E_ENDPOINT: options.lifelineUrl,
      LIFELINE_E2E_SITE_ID: options.siteId ?? '',
      LIFELINE_E2E_SECRET: options.secret,
      LIFELINE_E2E_API_KEY: options.apiKey,
    };
    const lastJson = <T>(out: string) => JSON.parse(out.trim().split('\n').at(-1)!) as T;
    let appPassword: string;
    let blogInfo: { id: number; path: string; url: string }[] = [];
    if (multisite) {
      execFileSync('php', [join(E2E_DIR, 'install.php')], {
        env: { ...env, LIFELINE_E2E_MULTISITE: '1' },
        encoding: 'utf8',
      });
      // The network exists: the config becomes a multisite one (what wp-admin/network.php tells one to paste),
      // with Lifeline's connection as constants every blog shares.
      appendFileSync(
        configFile,
        `define('MULTISITE', true);
define('SUBDOMAIN_INSTALL', false);
define('DOMAIN_CURRENT_SITE', ${php(host)});
define('PATH_CURRENT_SITE', '/');
define('SITE_ID_CURRENT_SITE', 1);
define('BLOG_ID_CURRENT_SITE', 1);
define('LIFELINE_ENDPOINT', ${php(options.lifelineUrl)});
define('LIFELINE_WEBHOOK_SECRET', ${php(options.secret)});
define('LIFELINE_API_KEY', ${php(options.apiKey)});
${options.siteId ? `define('LIFELINE_SITE_ID', ${php(options.siteId)});\n` : ''}`,
      );
      const done = lastJson<{ appPassword: string; blogs: { id: number; path: string; url: string }[] }>(
        execFileSync('php', [join(E2E_DIR, 'multisite.php')], {
          env: { ...env, LIFELINE_E2E_BLOGS: JSON.stringify(multisite.blogs) },
          encoding: 'utf8',
        }),
      );
      appPassword = done.appPassword;
      blogInfo = done.blogs;
    } else {
      const installed = execFileSync('php', [join(E2E_DIR, 'install.php')], { env, encoding: 'utf8' });
      appPassword = lastJson<{ appPassword: string }>(installed).appPassword;
    }

    // Its own process group (setsid-like), so stop() ends the server and its workers together.
    server = spawn('php', ['-S', host, '-t', WORDPRESS_ROOT, join(E2E_DIR, 'router.php')], {
      env: {
        ...env,
        PHP_CLI_SERVER_WORKERS: '4',
        LIFELINE_E2E_PLUGINS_DIR: pluginsDir,
        ...(multisite ? { LIFELINE_E2E_MULTISITE: '1' } : {}),
      },
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    server.stderr!.on('data', (d) => {
      serverLog = (serverLog + d).slice(-8000);
    });
    await eventually(
      async () => {
        const res = await fetch(`${baseUrl}/`, { redirect: 'manual' });
        await res.arrayBuffer();
        return res.status === 200 ? true : undefined;
      },
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: `WordPress to answer at ${baseUrl}; server log:\n${serverLog}`,
      },
    );
    const auth = `Basic ${Buffer.from(`admin:${appPassword}`).toString('base64')}`;
    const restAt = async <T>(root: string, path: string, init: { method?: string; json?: unknown } = {}) => {
      const res = await fetch(`${root}/wp-json${path}`, {
        method: init.method ?? 'GET',
        headers: {
          Authorization: auth,
          ...(init.json !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
        ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      return { status: res.status, body: body as T };
    };
    const cronAt = async (root: string) => {
      const res = await fetch(`${root}/wp-cron.php`);
      await res.arrayBuffer();
    };

    return {
      baseUrl,
      dbName,
      configName,
      adminPassword,
      rest: <T>(path: string, init?: { method?: string; json?: unknown }) => restAt<T>(baseUrl, path, init),
      mysql(sql: string) {
        return mysql(['-N', '-B', dbName, '-e', sql])
          .split('\n')
          .filter((line) => line.length > 0)
          .map((line) => line.split('\t'));
      },
      serverLog: () => serverLog,
      runCron: () => cronAt(baseUrl),
      restOn: <T>(home: string, path: string, init?: { method?: string; json?: unknown }) =>
        restAt<T>(home, path, init),
      blogs: blogInfo.map((b) => ({
        ...b,
        rest: <T>(path: string, init?: { method?: string; json?: unknown }) => restAt<T>(b.url, path, init),
        runCron: () => cronAt(b.url),
      })),
      stop: cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
