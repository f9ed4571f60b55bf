// How the embedded Temporal dev server is started when the CLI fails at the start. The CLI picks most of its ports
// itself (its HTTP API, each internal service's), and another process can take one before it binds: that exit is
// met by starting again. The CLI here is a script in front of the real one that fails the way it does when it
// loses a port, as many times as the test asks, then runs the real CLI.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { DevServerExitedError, getFreePort, startDevServer } from '../../scripts/dev_server.ts';
import { ensureTemporalCli } from '../../scripts/temporal_cli.ts';

const root = mkdtempSync(join(tmpdir(), 'lifeline-dev-server-'));
after(() => rmSync(root, { recursive: true, force: true }));

const LOST_PORT_LINE =
  'time=2026-12-05T19:16:21.057 level=ERROR msg="error returned" component=fx ' +
  'error="failed listening for HTTP API on 127.0.0.1:44969: listen tcp 127.0.0.1:44969: bind: address already in use"';

/** A CLI that fails its first `failures` starts with `line` on stderr (exit 1), then execs the real one. */
function flakyCli(name: string, failures: number, line: string): { path: string; starts: () => number } {
  const counter = join(root, `${name}.starts`);
  const path = join(root, `${name}.sh`);
  writeFileSync(
    path,
    `#!/bin/sh
n=$(cat '${counter}' 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > '${counter}'
if [ "$n" -le ${failures} ]; then
  echo '${line}' >&2
  exit 1
fi
exec "$REAL_TEMPORAL_CLI" "$@"
`,
  );
  chmodSync(path, 0o755);
  return { path, starts: () => (existsSync(counter) ? Number(readFileSync(counter, 'utf8')) : 0) };
}

describe('starting the Temporal dev server', () => {
  test('a start that lost a port it picked to another process is started again, and serves', async () => {
    process.env.REAL_TEMPORAL_CLI = await ensureTemporalCli(() => {});
    const cli = flakyCli('lost-once', 1, LOST_PORT_LINE);
    const said: string[] = [];
    const server = await startDevServer({
      cli: cli.path,
      port: await getFreePort(),
      pidFile: join(root, 'lost-once.pid'),
      log: (msg) => said.push(msg),
      output: 'ignore',
    });
    try {
      assert.equal(cli.starts(), 2);
      assert.deepEqual(said, [
        'The Temporal dev server lost a port it had picked (127.0.0.1:44969) to another process; ' +
          'starting it again (attempt 2 of 3).',
      ]);
      assert.equal(Number(readFileSync(join(root, 'lost-once.pid'), 'utf8')), server.child.pid);
    } finally {
      await server.stop();
    }
    assert.equal(existsSync(join(root, 'lost-once.pid')), false);
  });

  test('a CLI that keeps losing ports: three starts, then an error that quotes it', async () => {
    const cli = flakyCli('lost-always', 99, LOST_PORT_LINE);
    const said: string[] = [];
    await assert.rejects(
      startDevServer({
        cli: cli.path,
        port: await getFreePort(),
        log: (msg) => said.push(msg),
        output: 'ignore',
      }),
      (error: unknown) => {
        assert.ok(error instanceof DevServerExitedError);
        assert.equal(error.code, 1);
        assert.match(
          error.message,
          /^the Temporal dev server exited with 1: .*bind: address already in use"$/,
        );
        return true;
      },
    );
    assert.equal(cli.starts(), 3);
    assert.equal(said.length, 2);
  });

  test('any other early exit is not retried, and its error says what the CLI said', async () => {
    const cli = flakyCli('bad-db', 99, 'Error: unable to open database file: permission denied');
    await assert.rejects(
      startDevServer({ cli: cli.path, port: await getFreePort(), log: () => {}, output: 'ignore' }),
      /^Error: the Temporal dev server exited with 1: Error: unable to open database file: permission denied$/,
    );
    assert.equal(cli.starts(), 1);
  });

  test('our own port taken: a clear refusal, and the CLI is not started', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    const cli = flakyCli('taken', 0, '');
    try {
      await assert.rejects(
        startDevServer({ cli: cli.path, port, log: () => {}, output: 'ignore' }),
        new RegExp(`^Error: Port ${port} is taken, so the Temporal dev server cannot start`),
      );
    } finally {
      holder.close();
    }
    assert.equal(cli.starts(), 0);
  });
});
