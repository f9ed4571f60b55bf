// First-run credentials (an admin password, an admin API key, the webhook secret) are generated once and shown
// once. Printed on stderr, they stayed in whatever keeps a container's output (runtimes, log shippers); they are
// written to a file only the service's user can read, and stderr names the file. A person at a terminal still
// sees them in the banner.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { reportGeneratedCredentials } from '../../boot/first_run_credentials.ts';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { type EntryProcess, standaloneWebEnv, startEntry } from '../../devkit/harness/entry_process.ts';
import { getFreePort } from '../../scripts/dev_server.ts';

const scratch = mkdtempSync(join(tmpdir(), 'lifeline-first-run-'));
let db: TestDatabase;
let web: EntryProcess | undefined;

before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  web?.kill();
  await db?.drop();
  rmSync(scratch, { recursive: true, force: true });
});

/** The permission bits of `path` (e.g. 0o600). */
const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('first-run credentials', () => {
  test('the web entry on an empty database writes them to a 0600 file; stderr names it and shows none', async () => {
    const dataDir = join(scratch, 'data');
    const port = await getFreePort();
    const entry = startEntry('main.ts', {
      env: { ...(await standaloneWebEnv(port, db.url)), LIFELINE_DATA_DIR: dataDir },
    });
    web = entry;
    await entry.waitForOutput('web listening', { timeoutMs: 90_000, what: 'the web process listening' });
    const stderr = entry.stderr();
    const stdout = entry.stdout();

    const file = join(dataDir, 'first-run-credentials.txt');
    const written = readFileSync(file, 'utf8');
    const password = /Admin login:\s+admin@lifeline\.local \/ (\S+)/.exec(written)?.[1];
    const apiKey = /Admin API key:\s+(\S+)/.exec(written)?.[1];
    const secret = /Webhook secret:\s+(\S+)/.exec(written)?.[1];
    assert.ok(password && apiKey && secret, `all three in the file:\n${written}`);
    assert.equal(modeOf(file).toString(8), '600', 'the file is for its owner only');
    assert.equal(modeOf(dataDir).toString(8), '700', 'so is its folder');
    for (const [name, value] of Object.entries({ password, apiKey, secret })) {
      assert.ok(!stderr.includes(value), `the ${name} is not on stderr:\n${stderr}`);
      assert.ok(!stdout.includes(value), `the ${name} is not on stdout`);
    }
    assert.ok(stderr.includes(file), `stderr says where they are:\n${stderr}`);

    // They work: the API key answers.
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/links?limit=1`, {
      headers: { Authorization: `Bearer ${apiKey}` },
    });
    assert.equal(response.status, 200);
  });

  test('on a terminal the banner shows them too; with nothing generated nothing is written', () => {
    const dataDir = join(scratch, 'tty');
    const generated = { adminEmail: 'a@example.test', adminPassword: 'pw-1234567890', apiKey: 'll_key' };
    let terminal = '';
    const file = reportGeneratedCredentials(generated, {
      dataDir,
      interactive: true,
      write: (s) => {
        terminal += s;
      },
    });
    assert.equal(file, join(dataDir, 'first-run-credentials.txt'));
    assert.match(terminal, /pw-1234567890/);
    assert.match(terminal, /ll_key/);
    assert.ok(terminal.includes(file));
    assert.equal(modeOf(file).toString(8), '600');

    let quiet = '';
    const none = reportGeneratedCredentials(
      {},
      {
        dataDir: join(scratch, 'none'),
        interactive: false,
        write: (s) => {
          quiet += s;
        },
      },
    );
    assert.equal(none, undefined);
    assert.equal(quiet, '');
    assert.throws(() => statSync(join(scratch, 'none')), /ENOENT/);
  });

  test('a file left by an earlier first run is replaced, still 0600, and a folder that cannot be written says so', () => {
    const dataDir = join(scratch, 'again');
    const write = () => {};
    reportGeneratedCredentials({ apiKey: 'll_first' }, { dataDir, interactive: false, write });
    const file = reportGeneratedCredentials({ apiKey: 'll_second' }, { dataDir, interactive: false, write });
    assert.ok(file);
    assert.doesNotMatch(readFileSync(file, 'utf8'), /ll_first/);
    assert.match(readFileSync(file, 'utf8'), /ll_second/);
    assert.equal(modeOf(file).toString(8), '600');

    let said = '';
    const blocked = reportGeneratedCredentials(
      { apiKey: 'll_lost' },
      {
        // A folder cannot be made under a file.
        dataDir: join(file, 'sub'),
        interactive: false,
        write: (s) => {
          said += s;
        },
      },
    );
    assert.equal(blocked, undefined);
    assert.doesNotMatch(said, /ll_lost/, 'still not on stderr');
    assert.match(said, /could not be written/);
    assert.match(said, /admin:reset/);
  });
});
