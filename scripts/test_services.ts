// The services and system packages the test suite needs, made present idempotently: on this project's
// machines (Debian, root) a missing apt package is installed and a stopped Postgres or Redis is started.
import { execSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createConnection } from 'node:net';
import { userInfo } from 'node:os';

/**
 * Debian packages the suite uses: Chromium (browser tests), wrk (benchmarks), WordPress and PHP (e2e),
 * Prometheus (promtool checks the alert rules; a real server scrapes Lifeline), nginx with its stream module
 * (the mTLS proxy in front of the Temporal dev server), podman, runc and debootstrap (the container image). The
 * same list as .ci/run's (tests/scripts/apt_packages.test.ts holds them equal).
 */
export const APT_PACKAGES = [
  'chromium',
  'wrk',
  'wordpress',
  'wordpress-theme-twentytwentythree',
  // The plugin's tests: WordPress's language packs (an Arabic admin), phpcs, gettext (its translations).
  'wordpress-l10n',
  'php-codesniffer',
  'gettext',
  'php-cli',
  'php-mysql',
  'php-curl',
  'php-xml',
  'php-mbstring',
  'prometheus',
  'nginx-light',
  'libnginx-mod-stream',
  // An Arabic UI font, so the browser tests' screenshots of the Arabic UI show real letter forms.
  'fonts-noto-ui-core',
  // The container image test: podman (with runc) builds and runs the Dockerfile on a base debootstrap makes.
  'podman',
  'runc',
  'debootstrap',
  // compose.yaml's check (`docker-compose config`; tests/deploy/compose.test.ts).
  'docker-compose',
  // pdftoppm rasterises the print QR codes' PDFs so the test decodes them.
  'poppler-utils',
];

function answers(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(false);
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

async function waitFor(host: string, port: number, seconds: number): Promise<boolean> {
  for (let i = 0; i < seconds * 4; i++) {
    if (await answers(host, port)) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Installs whichever of `packages` is missing (root + apt only); returns those still missing. */
export function ensureAptPackages(packages: string[], log: (msg: string) => void): string[] {
  const missing = packages.filter(
    (p) =>
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a dpkg-query format, not a template
      spawnSync('dpkg-query', ['-W', '-f=${Status}', p], { encoding: 'utf8' }).stdout !==
      'install ok installed',
  );
  if (missing.length === 0) return [];
  if (!isRoot() || !existsSync('/usr/bin/apt-get')) {
    log(`missing Debian packages (install them, or run .ci/run as root): ${missing.join(' ')}`);
    return missing;
  }
  log(`installing Debian packages: ${missing.join(' ')} (once; takes a minute or two)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execSync('apt-get update -qq', { stdio: ['ignore', 'ignore', 'inherit'], env });
  execSync(`apt-get install -y -qq --no-install-recommends ${missing.join(' ')}`, {
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
  // Where nothing stops packages from starting services, Prometheus (:9090) and nginx (:80) just did; the tests
  // run their own, so stop those (as .ci/run does).
  for (const service of ['prometheus', 'nginx']) {
    if (!missing.includes(service === 'nginx' ? 'nginx-light' : service)) continue;
    const init = `/etc/init.d/${service}`;
    if (existsSync(init) && spawnSync(init, ['status'], { stdio: 'ignore' }).status === 0) {
      log(`stopping the ${service} service the package started`);
      spawnSync(init, ['stop'], { stdio: 'ignore' });
    }
  }
  return [];
}

export interface TestServices {
  postgresAdminUrl: string;
  redisUrl: string;
}

/**
 * Makes Postgres and Redis answer (starting them with the machine's own commands when stopped), and the
 * apt packages present. LIFELINE_TEST_POSTGRES_ADMIN_URL / LIFELINE_TEST_REDIS_URL point elsewhere.
 */
export async function ensureTestServices(log: (msg: string) => void): Promise<TestServices> {
  const postgresAdminUrl =
    process.env.LIFELINE_TEST_POSTGRES_ADMIN_URL ??
    `postgres://${userInfo().username}@127.0.0.1:5432/postgres`;
  const redisUrl = process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const pg = new URL(postgresAdminUrl);
  const redis = new URL(redisUrl);

  if (!(await answers(pg.hostname, Number(pg.port || 5432)))) {
    if (isRoot() && existsSync('/etc/postgresql')) {
      const version = readdirSync('/etc/postgresql')[0];
      log(`Postgres is not answering; starting cluster ${version}/main`);
      spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', String(version), 'main', 'start'], {
        stdio: 'inherit',
      });
    }
    if (!(await waitFor(pg.hostname, Number(pg.port || 5432), 20))) {
      throw new Error(`Postgres does not answer at ${pg.host}; set LIFELINE_TEST_POSTGRES_ADMIN_URL.`);
    }
  }
  if (!(await answers(redis.hostname, Number(redis.port || 6379)))) {
    if (isRoot() && existsSync('/usr/bin/redis-server')) {
      log('Redis is not answering; starting it');
      spawnSync(
        'redis-server',
        [
          '--daemonize',
          'yes',
          '--bind',
          '127.0.0.1',
          '-::1',
          '--port',
          '6379',
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          '/var/lib/redis',
          '--logfile',
          '/var/log/redis/ci.log',
        ],
        { stdio: 'inherit' },
      );
    }
    if (!(await waitFor(redis.hostname, Number(redis.port || 6379), 20))) {
      throw new Error(`Redis does not answer at ${redis.host}; set LIFELINE_TEST_REDIS_URL.`);
    }
  }
  ensureAptPackages(APT_PACKAGES, log);
  return { postgresAdminUrl, redisUrl };
}
