import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflows/contract.ts';

export const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const TOOLS_BIN = join(ROOT, '.tools', 'bin');
export const TEMPORAL_CLI_VERSION = '1.5.1';
const GO_CANDIDATES = ['/usr/local/go/bin/go'];

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Where the Temporal CLI is: TEMPORAL_CLI, .tools/bin/temporal, or `temporal` on PATH; undefined if nowhere. */
export function findTemporalCli(): { path: string; source: string } | undefined {
  const fromEnv = process.env.TEMPORAL_CLI;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`TEMPORAL_CLI points at ${fromEnv}, which does not exist.`);
    return { path: fromEnv, source: 'TEMPORAL_CLI' };
  }
  const local = join(TOOLS_BIN, 'temporal');
  if (existsSync(local)) return { path: local, source: '.tools/bin' };
  const fromPath = onPath('temporal');
  return fromPath ? { path: fromPath, source: 'PATH' } : undefined;
}

/** The `go` command, if this machine has one. */
export function findGo(): string | undefined {
  return onPath('go') ?? GO_CANDIDATES.find((p) => existsSync(p));
}

/**
 * Builds the Temporal CLI v1.5.1 into .tools/bin from the Go module proxy (pure Go, no cgo; several
 * minutes the first time, then cached). v1.5.1 because later tags carry a `replace` directive that
 * `go install pkg@version` refuses.
 */
export async function buildTemporalCli(go: string, log: (msg: string) => void): Promise<string> {
  mkdirSync(TOOLS_BIN, { recursive: true });
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
        env: { ...process.env, GOBIN: TOOLS_BIN, CGO_ENABLED: '0' },
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
  return join(TOOLS_BIN, 'temporal');
}

/** Finds the CLI or builds it; throws a message that says what to do when neither is possible. */
export async function ensureTemporalCli(log: (msg: string) => void): Promise<string> {
  const found = findTemporalCli();
  if (found) {
    log(`Temporal CLI: ${found.path} (from ${found.source})`);
    return found.path;
  }
  const go = findGo();
  if (go) return buildTemporalCli(go, log);
  throw new Error(
    'No Temporal CLI found (TEMPORAL_CLI, .tools/bin/temporal, PATH) and no Go toolchain to build it.\n' +
      `Install Go >= 1.25, or put a temporal v${TEMPORAL_CLI_VERSION} binary at .tools/bin/temporal, ` +
      'or point TEMPORAL_ADDRESS at a running Temporal server.',
  );
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
