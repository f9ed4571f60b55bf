import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { fileURLToPath } from 'node:url';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflows/contract.ts';

export const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const TOOLS_BIN = join(ROOT, '.tools', 'bin');
// renovate: datasource=go depName=github.com/temporalio/cli
export const TEMPORAL_CLI_VERSION = '1.5.1';
const GO_CANDIDATES = ['/usr/local/go/bin/go'];

/**
 * Where the release archives are: the GitHub release of temporalio/cli, whose assets are named
 * `temporal_cli_<version>_<os>_<arch>.tar.gz` (its .goreleaser.yml) beside a `checksums.txt`.
 * TEMPORAL_CLI_DOWNLOAD_BASE_URL replaces this base (a company mirror holding the same file names; tests).
 */
export const TEMPORAL_CLI_DOWNLOAD_BASE_URL = `https://github.com/temporalio/cli/releases/download/v${TEMPORAL_CLI_VERSION}`;

/**
 * SHA-256 of the v1.5.1 release archives, as listed in that release's checksums.txt, pinned here so that
 * neither the download host nor a mirror can substitute a binary. Copied from two independent lists of that
 * release's checksums (hermit-packages' temporal-cli.hcl and CI scripts pinning the Linux archives); no
 * Windows archive checksum was found, so Windows is not offered a download.
 */
export const TEMPORAL_CLI_SHA256: Readonly<Record<string, string>> = {
  linux_amd64: 'ddc95e08b0b076efd4ea9733a3f488eb7d2be875f8834e616cd2a37358b4852d',
  linux_arm64: 'bd1b0db9f18b051026de8bf6cc1505f2510f14bbb7a8b9a4a91fff46c77454f5',
  darwin_amd64: 'bbb73e2a31135abe50a1f1cdb35030c42961df618e8ce9c60ae89f201540c5d9',
  darwin_arm64: 'cca01b7ea35ad56e2a328d9ae596bf716bd22313ef63c7a761c88354457c2415',
};

// A download that sends nothing for this long is abandoned (the archive is ~50 MB).
const DOWNLOAD_HEADERS_TIMEOUT_MS = 15_000;
const DOWNLOAD_IDLE_TIMEOUT_MS = 30_000;

/**
 * What the lookup depends on, injectable so tests control it: the environment (TEMPORAL_CLI, PATH,
 * TEMPORAL_CLI_DOWNLOAD_BASE_URL), where the CLI is installed, where Go may be, the platform, and the pinned
 * checksums.
 */
export interface TemporalCliOptions {
  env?: Record<string, string | undefined>;
  toolsBin?: string;
  goCandidates?: string[];
  platform?: string;
  arch?: string;
  checksums?: Readonly<Record<string, string>>;
}

function onPath(name: string, env: Record<string, string | undefined>): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Where the Temporal CLI is: TEMPORAL_CLI, .tools/bin/temporal, or `temporal` on PATH; undefined if nowhere. */
export function findTemporalCli(
  options: TemporalCliOptions = {},
): { path: string; source: string } | undefined {
  const env = options.env ?? process.env;
  const fromEnv = env.TEMPORAL_CLI;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`TEMPORAL_CLI points at ${fromEnv}, which does not exist.`);
    return { path: fromEnv, source: 'TEMPORAL_CLI' };
  }
  const local = join(options.toolsBin ?? TOOLS_BIN, 'temporal');
  if (existsSync(local)) return { path: local, source: '.tools/bin' };
  const fromPath = onPath('temporal', env);
  return fromPath ? { path: fromPath, source: 'PATH' } : undefined;
}

/** The `go` command, if this machine has one. */
export function findGo(options: TemporalCliOptions = {}): string | undefined {
  return (
    onPath('go', options.env ?? process.env) ??
    (options.goCandidates ?? GO_CANDIDATES).find((p) => existsSync(p))
  );
}

/** The release archive for this platform and its pinned SHA-256; undefined where none is pinned. */
export function getTemporalCliArchive(
  options: TemporalCliOptions = {},
): { name: string; sha256: string } | undefined {
  const os = options.platform ?? process.platform;
  const arch = { x64: 'amd64', arm64: 'arm64' }[options.arch ?? process.arch];
  const sha256 = (options.checksums ?? TEMPORAL_CLI_SHA256)[`${os}_${arch}`];
  return arch && sha256
    ? { name: `temporal_cli_${TEMPORAL_CLI_VERSION}_${os}_${arch}.tar.gz`, sha256 }
    : undefined;
}

/** Streams `url` into `path`, hashing as it goes; returns the SHA-256 (hex). Throws on HTTP errors and stalls. */
async function downloadToFile(url: string, path: string, log: (msg: string) => void): Promise<string> {
  const controller = new AbortController();
  let timer = setTimeout(
    () => controller.abort(new Error('no answer within 15 s')),
    DOWNLOAD_HEADERS_TIMEOUT_MS,
  );
  try {
    const response = await fetch(url, { signal: controller.signal, redirect: 'follow' });
    if (!response.ok || !response.body)
      throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
    const total = Number(response.headers.get('content-length')) || undefined;
    const hash = createHash('sha256');
    let received = 0;
    let reported = Date.now();
    const mb = (n: number) => (n / 1_048_576).toFixed(0);
    // Hashes what passes, restarts the stall timer on every chunk and says how far it got every 10 s.
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        clearTimeout(timer);
        timer = setTimeout(() => controller.abort(new Error('stalled for 30 s')), DOWNLOAD_IDLE_TIMEOUT_MS);
        hash.update(chunk);
        received += chunk.length;
        if (Date.now() - reported > 10_000) {
          reported = Date.now();
          log(`  ...${mb(received)}${total ? ` of ${mb(total)}` : ''} MB`);
        }
        done(null, chunk);
      },
    });
    // The DOM and Node typings of ReadableStream differ only in BYOB reader details.
    const body = Readable.fromWeb(response.body as unknown as NodeReadableStream<Uint8Array>);
    await pipeline(body, meter, createWriteStream(path));
    return hash.digest('hex');
  } catch (error) {
    // fetch puts the reason (ECONNREFUSED, ENOTFOUND, the abort) in `cause`.
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause?.code ?? cause?.message;
    throw new Error(`${(error as Error).message}${detail ? ` (${detail})` : ''}`);
  } finally {
    clearTimeout(timer);
  }
}

/** A download that could not happen (host unreachable, HTTP error, no archive for this platform). */
export class TemporalCliDownloadUnavailable extends Error {
  override name = 'TemporalCliDownloadUnavailable';
}

/**
 * Downloads the CLI v1.5.1 release archive for this platform, checks its SHA-256 against the pinned checksum
 * (refusing a mismatch: nothing is installed), and unpacks `temporal` into .tools/bin. Throws
 * TemporalCliDownloadUnavailable when the archive cannot be fetched.
 */
export async function downloadTemporalCli(
  log: (msg: string) => void,
  options: TemporalCliOptions = {},
): Promise<string> {
  const env = options.env ?? process.env;
  const toolsBin = options.toolsBin ?? TOOLS_BIN;
  const archive = getTemporalCliArchive(options);
  const platform = `${options.platform ?? process.platform}/${options.arch ?? process.arch}`;
  if (!archive) {
    throw new TemporalCliDownloadUnavailable(
      `no v${TEMPORAL_CLI_VERSION} archive checksum is pinned for ${platform} (only ${Object.keys(TEMPORAL_CLI_SHA256).join(', ')})`,
    );
  }
  const base = (env.TEMPORAL_CLI_DOWNLOAD_BASE_URL?.trim() || TEMPORAL_CLI_DOWNLOAD_BASE_URL).replace(
    /\/+$/,
    '',
  );
  const url = `${base}/${archive.name}`;
  log(`Downloading the Temporal CLI v${TEMPORAL_CLI_VERSION} for ${platform} from ${url} ...`);
  mkdirSync(toolsBin, { recursive: true });
  // Unpacked beside its destination, so the final step is an atomic rename on the same file system.
  const work = mkdtempSync(join(toolsBin, '.download-'));
  try {
    const archivePath = join(work, archive.name);
    let sha256: string;
    try {
      sha256 = await downloadToFile(url, archivePath, log);
    } catch (error) {
      throw new TemporalCliDownloadUnavailable(`${url}: ${(error as Error).message}`);
    }
    if (sha256 !== archive.sha256) {
      throw new Error(
        `Refusing the Temporal CLI archive from ${url}: its SHA-256 is ${sha256}, but the published checksum of ` +
          `${archive.name} is ${archive.sha256}. Nothing was installed.`,
      );
    }
    log(`SHA-256 matches the published checksum of ${archive.name}.`);
    const untar = spawnSync('tar', ['-xzf', archivePath, '-C', work, 'temporal'], { encoding: 'utf8' });
    if (untar.status !== 0) {
      throw new Error(
        `Could not unpack ${archive.name}: ${(untar.stderr || untar.error?.message || '').trim()}`,
      );
    }
    const destination = join(toolsBin, 'temporal');
    chmodSync(join(work, 'temporal'), 0o755);
    renameSync(join(work, 'temporal'), destination);
    log(
      `Temporal CLI installed at ${destination} (${getTemporalCliVersion(destination) || 'version unknown'}).`,
    );
    return destination;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Builds the Temporal CLI v1.5.1 into .tools/bin from the Go module proxy (pure Go, no cgo; several
 * minutes the first time, then cached). v1.5.1 because later tags carry a `replace` directive that
 * `go install pkg@version` refuses.
 */
export async function buildTemporalCli(
  go: string,
  log: (msg: string) => void,
  options: TemporalCliOptions = {},
): Promise<string> {
  const toolsBin = options.toolsBin ?? TOOLS_BIN;
  mkdirSync(toolsBin, { recursive: true });
  log(
    `Building the Temporal CLI v${TEMPORAL_CLI_VERSION} with ${go} into .tools/bin ` +
      '(first time only; takes several minutes)...',
  );
  const started = Date.now();
  await new Promise<void>((resolvePromise, reject) => {
    const child = spawn(
      go,
      [
        'install',
        '-trimpath',
        '-ldflags',
        `-s -w -X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION}`,
        `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`,
      ],
      {
        env: { ...process.env, GOBIN: toolsBin, CGO_ENABLED: '0' },
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    );
    const tick = setInterval(
      () => log(`  ...still building (${Math.round((Date.now() - started) / 1000)} s)`),
      30_000,
    );
    child.on('error', (e) => {
      clearInterval(tick);
      reject(e);
    });
    child.on('exit', (code) => {
      clearInterval(tick);
      code === 0 ? resolvePromise() : reject(new Error(`go install exited with ${code}`));
    });
  });
  log(`Temporal CLI built in ${Math.round((Date.now() - started) / 1000)} s.`);
  return join(toolsBin, 'temporal');
}

/**
 * Finds the CLI, else builds it with Go, else (no Go, or the build failed: no Go module proxy) downloads the
 * release archive (checksum-verified); throws a message naming every way out when none of them works.
 */
export async function ensureTemporalCli(
  log: (msg: string) => void,
  options: TemporalCliOptions = {},
): Promise<string> {
  const found = findTemporalCli(options);
  if (found) {
    log(`Temporal CLI: ${found.path} (from ${found.source})`);
    return found.path;
  }
  const go = findGo(options);
  let goFailure: string | undefined;
  if (go) {
    try {
      return await buildTemporalCli(go, log, options);
    } catch (error) {
      goFailure = error instanceof Error ? error.message : String(error);
      log(`Building the Temporal CLI with Go failed (${goFailure}); downloading the CLI release instead.`);
    }
  } else {
    log('No Temporal CLI and no Go toolchain found; downloading the CLI release instead.');
  }
  try {
    return await downloadTemporalCli(log, options);
  } catch (error) {
    if (!(error instanceof TemporalCliDownloadUnavailable)) throw error;
    const tried = goFailure
      ? `building it with Go failed (${goFailure}), and the download failed`
      : 'no Go toolchain to build it, and the download failed';
    throw new Error(
      `No Temporal CLI found (TEMPORAL_CLI, .tools/bin/temporal, PATH), ${tried}: ${error.message}.\nEither:\n` +
        `  - install Go >= 1.25 and let it reach the Go module proxy (then this builds temporal v${TEMPORAL_CLI_VERSION}), or\n` +
        `  - let this machine reach ${TEMPORAL_CLI_DOWNLOAD_BASE_URL}, or set TEMPORAL_CLI_DOWNLOAD_BASE_URL to a ` +
        `mirror holding temporal_cli_${TEMPORAL_CLI_VERSION}_<os>_<arch>.tar.gz, or\n` +
        `  - put a temporal v${TEMPORAL_CLI_VERSION} binary at .tools/bin/temporal (or name it in TEMPORAL_CLI), or\n` +
        '  - point TEMPORAL_ADDRESS at a running Temporal server.',
    );
  }
}

/** The version line of a CLI binary (also proves it runs). */
export function getTemporalCliVersion(path: string): string {
  const out = spawnSync(path, ['--version'], { encoding: 'utf8' });
  return (out.stdout || out.stderr || '').trim();
}

/** Arguments for `temporal server start-dev` with our search attributes and the features we use. */
export function getDevServerArgs(options: {
  port: number;
  uiPort?: number;
  dbFilename?: string;
  namespace?: string;
}): string[] {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port)];
  args.push(...(options.uiPort ? ['--ui-port', String(options.uiPort)] : ['--headless']));
  if (options.dbFilename) args.push('--db-filename', options.dbFilename);
  if (options.namespace && options.namespace !== 'default') args.push('--namespace', options.namespace);
  for (const key of SEARCH_ATTRIBUTE_KEYS)
    args.push('--search-attribute', `${key.name}=${key.type.replace('_', '')}`);
  for (const value of [
    'frontend.enableServerVersionCheck=false',
    'frontend.enableUpdateWorkflowExecution=true',
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
    'frontend.enableExecuteMultiOperation=true',
  ]) {
    args.push('--dynamic-config-value', value);
  }
  args.push('--log-level', 'error');
  return args;
}
