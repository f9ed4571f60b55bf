// How `npm start` gets its Temporal CLI, with PATH, the environment and the install directory under the test's
// control: an existing CLI is used, else Go builds it, else the release archive is downloaded and checked
// against its pinned SHA-256, else a message names every way out. The download runs against a local HTTP
// server holding an archive of the CLI built on this machine, laid out like the GitHub release.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { getFreePort } from '../../scripts/dev_server.ts';
import {
  ensureTemporalCli,
  getTemporalCliArchive,
  ROOT,
  TEMPORAL_CLI_SHA256,
  type TemporalCliOptions,
} from '../../scripts/temporal_cli.ts';

const root = mkdtempSync(join(tmpdir(), 'lifeline-temporal-cli-'));
const builtCli = process.env.TEMPORAL_CLI ?? join(ROOT, '.tools', 'bin', 'temporal');
const ARCHIVE = 'temporal_cli_1.5.1_linux_amd64.tar.gz';

let release: { server: Server; url: string; dir: string; requests: string[] };
let archiveSha256: string;

function freshDir(name: string): string {
  const dir = join(root, `${name}-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function writeScript(path: string, body: string): string {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** Options for a machine with nothing on it: an empty PATH directory, no Go, an empty tools directory. */
function bareMachine(env: Record<string, string> = {}): TemporalCliOptions & { toolsBin: string } {
  return {
    env: { PATH: freshDir('empty-path'), ...env },
    toolsBin: join(freshDir('tools'), 'bin'),
    goCandidates: [],
    platform: 'linux',
    arch: 'x64',
  };
}

async function ensure(options: TemporalCliOptions): Promise<{ path: string; log: string[] }> {
  const log: string[] = [];
  const path = await ensureTemporalCli((msg) => log.push(msg), options);
  return { path, log };
}

/** What an aborted or refused install left in the tools directory (nothing, not even a temp dir). */
function leftovers(toolsBin: string): string[] {
  return existsSync(toolsBin) ? readdirSync(toolsBin) : [];
}

before(async () => {
  const dir = freshDir('release');
  if (existsSync(builtCli)) {
    // The release's layout: `temporal` and LICENSE at the root of a gzipped tar (goreleaser archives).
    writeFileSync(join(dir, 'LICENSE'), 'MIT\n');
    const tar = spawnSync(
      'tar',
      [
        '-I',
        'gzip -1',
        '-cf',
        join(dir, ARCHIVE),
        '-C',
        join(builtCli, '..'),
        basename(builtCli),
        '-C',
        dir,
        'LICENSE',
      ],
      { encoding: 'utf8' },
    );
    assert.equal(tar.status, 0, tar.stderr);
    archiveSha256 = createHash('sha256')
      .update(readFileSync(join(dir, ARCHIVE)))
      .digest('hex');
  }
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const file = join(dir, basename(req.url ?? ''));
    if (!existsSync(file) || !req.url?.startsWith('/releases/')) {
      res.writeHead(404).end('Not Found');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/gzip' }).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  release = { server, url: `http://127.0.0.1:${port}/releases/v1.5.1`, dir, requests };
});

after(async () => {
  await new Promise<void>((resolve) => release?.server.close(() => resolve()));
  rmSync(root, { recursive: true, force: true });
});

describe('finding or building the Temporal CLI', () => {
  test('an existing CLI is used as it is: TEMPORAL_CLI, then .tools/bin, then PATH; nothing is downloaded', async () => {
    const onPath = freshDir('path');
    writeScript(join(onPath, 'temporal'), 'echo "temporal version 1.5.1"');
    const named = writeScript(join(freshDir('named'), 'temporal-named'), 'echo named');
    const machine = bareMachine({ PATH: onPath, TEMPORAL_CLI_DOWNLOAD_BASE_URL: release.url });
    const before = release.requests.length;

    assert.equal((await ensure(machine)).path, join(onPath, 'temporal'));
    mkdirSync(machine.toolsBin, { recursive: true });
    writeScript(join(machine.toolsBin, 'temporal'), 'echo local');
    const local = await ensure(machine);
    assert.equal(local.path, join(machine.toolsBin, 'temporal'));
    assert.match(local.log.join('\n'), /from \.tools\/bin/);
    const fromEnv = await ensure({ ...machine, env: { ...machine.env, TEMPORAL_CLI: named } });
    assert.deepEqual(fromEnv, { path: named, log: [`Temporal CLI: ${named} (from TEMPORAL_CLI)`] });
    await assert.rejects(
      ensure({ ...machine, env: { ...machine.env, TEMPORAL_CLI: join(root, 'absent') } }),
      /TEMPORAL_CLI points at .*absent, which does not exist/,
    );
    assert.equal(release.requests.length, before);
  });

  test('no CLI but a Go toolchain: `go install` of the pinned module builds it into .tools/bin', async () => {
    const goDir = freshDir('go');
    // A stand-in `go` that records how it was called and "builds" a CLI where GOBIN says.
    writeScript(
      join(goDir, 'go'),
      [
        'printf "%s\\n" "$@" > "$GOBIN/go-args.txt"',
        'echo "CGO_ENABLED=$CGO_ENABLED" >> "$GOBIN/go-args.txt"',
        'printf "#!/bin/sh\\necho built\\n" > "$GOBIN/temporal" && chmod +x "$GOBIN/temporal"',
      ].join('\n'),
    );
    for (const machine of [
      bareMachine({ PATH: goDir, TEMPORAL_CLI_DOWNLOAD_BASE_URL: release.url }),
      { ...bareMachine({ TEMPORAL_CLI_DOWNLOAD_BASE_URL: release.url }), goCandidates: [join(goDir, 'go')] },
    ]) {
      const before = release.requests.length;
      const { path, log } = await ensure(machine);
      assert.equal(path, join(machine.toolsBin, 'temporal'));
      const args = readFileSync(join(machine.toolsBin, 'go-args.txt'), 'utf8').split('\n');
      assert.ok(
        args.includes('install') && args.includes('github.com/temporalio/cli/cmd/temporal@v1.5.1'),
        args.join(' '),
      );
      assert.ok(args.includes('CGO_ENABLED=0'));
      assert.match(log.join('\n'), /Building the Temporal CLI v1\.5\.1 with .*go into \.tools\/bin/);
      assert.equal(release.requests.length, before, 'Go is preferred: no download');
    }
  });
});

describe('downloading the Temporal CLI where neither a CLI nor Go exists', () => {
  const skip = existsSync(builtCli) ? false : `no Temporal CLI built here to serve (${builtCli})`;

  test('the archive is downloaded, its SHA-256 checked, and `temporal` unpacked into .tools/bin', {
    skip,
  }, async () => {
    const machine = bareMachine({ TEMPORAL_CLI_DOWNLOAD_BASE_URL: `${release.url}/` });
    const { path, log } = await ensure({ ...machine, checksums: { linux_amd64: archiveSha256 } });
    assert.equal(path, join(machine.toolsBin, 'temporal'));
    const version = spawnSync(path, ['--version'], { encoding: 'utf8' });
    assert.match(version.stdout, /temporal version 1\.5\.1/);
    assert.deepEqual(leftovers(machine.toolsBin), ['temporal'], 'no archive or temp dir left behind');
    const text = log.join('\n');
    assert.match(text, /No Temporal CLI and no Go toolchain found; downloading/);
    assert.match(
      text,
      new RegExp(`Downloading the Temporal CLI v1\\.5\\.1 for linux/x64 from ${release.url}/${ARCHIVE}`),
    );
    assert.match(text, /SHA-256 matches the published checksum/);
    assert.match(text, /Temporal CLI installed at .*temporal \(temporal version 1\.5\.1/);
    assert.equal(release.requests.at(-1), `/releases/v1.5.1/${ARCHIVE}`);
  });

  test('an archive that does not match the pinned v1.5.1 checksum is refused and nothing is installed', {
    skip,
  }, async () => {
    // The default pins are the official release's; an archive built here cannot match them.
    assert.equal(
      getTemporalCliArchive({ platform: 'linux', arch: 'x64' })?.sha256,
      TEMPORAL_CLI_SHA256.linux_amd64,
    );
    const machine = bareMachine({ TEMPORAL_CLI_DOWNLOAD_BASE_URL: release.url });
    await assert.rejects(
      ensure(machine),
      (error: Error) =>
        error.message.includes(`its SHA-256 is ${archiveSha256}`) &&
        error.message.includes(`published checksum of ${ARCHIVE} is ${TEMPORAL_CLI_SHA256.linux_amd64}`) &&
        error.message.includes('Nothing was installed'),
    );
    assert.deepEqual(leftovers(machine.toolsBin), []);
  });

  test('an unreachable download ends in a message naming Go, the mirror variable and the binary path', async () => {
    const closed = await getFreePort();
    for (const [base, reason] of [
      [`http://127.0.0.1:${closed}/releases/v1.5.1`, /fetch failed \(ECONNREFUSED\)/],
      [`${release.url.replace('/releases/', '/nothing-here/')}`, /HTTP 404/],
    ] as const) {
      const machine = bareMachine({ TEMPORAL_CLI_DOWNLOAD_BASE_URL: base });
      await assert.rejects(ensure(machine), (error: Error) => {
        assert.match(error.message, /no Go toolchain to build it, and the download failed/);
        assert.match(error.message, reason);
        assert.match(error.message, /install Go >= 1\.25/);
        assert.match(error.message, /TEMPORAL_CLI_DOWNLOAD_BASE_URL/);
        assert.match(error.message, /\.tools\/bin\/temporal \(or name it in TEMPORAL_CLI\)/);
        return true;
      });
      assert.deepEqual(leftovers(machine.toolsBin), []);
    }
  });

  test('Go present but its build fails (no module proxy): the release is downloaded instead', {
    skip,
  }, async () => {
    const goDir = freshDir('broken-go');
    writeScript(
      join(goDir, 'go'),
      'echo "go: github.com/temporalio/cli@v1.5.1: dial tcp: lookup proxy.golang.org" >&2\nexit 1',
    );
    const machine = {
      ...bareMachine({ TEMPORAL_CLI_DOWNLOAD_BASE_URL: release.url }),
      goCandidates: [join(goDir, 'go')],
      checksums: { linux_amd64: archiveSha256 },
    };
    const { path, log } = await ensure(machine);
    assert.equal(path, join(machine.toolsBin, 'temporal'));
    assert.match(
      log.join('\n'),
      /Building the Temporal CLI with Go failed \(go install exited with 1\); downloading/,
    );
    assert.match(log.join('\n'), /SHA-256 matches the published checksum/);

    // And with the download unreachable too, the message says both were tried.
    const neither = {
      ...bareMachine({ TEMPORAL_CLI_DOWNLOAD_BASE_URL: `http://127.0.0.1:${await getFreePort()}/x` }),
      goCandidates: [join(goDir, 'go')],
    };
    await assert.rejects(
      ensure(neither),
      /building it with Go failed \(go install exited with 1\), and the download failed/,
    );
  });

  test('a platform without a pinned checksum is not offered a download', async () => {
    const machine = { ...bareMachine({ TEMPORAL_CLI_DOWNLOAD_BASE_URL: release.url }), platform: 'win32' };
    const before = release.requests.length;
    await assert.rejects(ensure(machine), /no v1\.5\.1 archive checksum is pinned for win32\/x64/);
    assert.equal(release.requests.length, before);
  });
});
