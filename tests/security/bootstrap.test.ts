import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { ensureBootstrap } from '../../lib/auth/bootstrap.ts';
import { forgetCachedApiKeys } from '../../routes/middleware/api_key_auth.ts';
import { createUiClient } from '../helpers/ui_client.ts';

// Every start re-applied BOOTSTRAP_API_KEY and ADMIN_PASSWORD, so a revoked bootstrap key
// worked again after a restart and a changed or disabled admin was reverted. Bootstrap now creates what is
// missing, once. A "restart" here is what every start does: ensureBootstrap with the same configuration.

let h: Harness;
const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };

before(async () => {
  h = await createHarness();
});
after(async () => {
  await h?.close();
});

const restart = () => ensureBootstrap(h.db.sql, h.config);

async function keyStatus(): Promise<number> {
  return (await h.api('/api/v1/links?limit=1')).status;
}

describe('item 4: bootstrap creates what is missing, once', () => {
  test('a revoked BOOTSTRAP_API_KEY stays revoked after a restart', async () => {
    assert.equal(await keyStatus(), 200);
    const keys = (await (await h.api('/api/v1/keys')).json()) as { items: { id: number; name: string }[] };
    const bootstrap = keys.items.find((k) => k.name.includes('BOOTSTRAP_API_KEY'));
    assert.ok(bootstrap, JSON.stringify(keys));
    assert.equal((await h.api(`/api/v1/keys/${bootstrap.id}`, { method: 'DELETE' })).status, 204);
    assert.equal(await keyStatus(), 401, 'revoked');

    await restart();
    forgetCachedApiKeys(h.deps.sql); // a restarted process starts with an empty key cache
    assert.equal(await keyStatus(), 401, 'still revoked after a restart');
    const [row] = await h.db.sql<{ revokedAt: Date | null }[]>`
      SELECT revoked_at AS "revokedAt" FROM api_keys WHERE id = ${bootstrap.id}`;
    assert.ok(row?.revokedAt, 'the row keeps its revocation');
  });

  test('an admin whose password was changed, or who was disabled, is left as an admin made them', async () => {
    const [admin] = await h.db.sql<{ id: number }[]>`SELECT id FROM users WHERE email = ${ADMIN.email}`;
    // Another admin resets the bootstrap admin's password and then disables the account.
    await h.db
      .sql`INSERT INTO users (email, password_hash, role) VALUES ('second@example.test', 'x', 'admin')`;
    await h.db.sql`UPDATE users SET password_hash = 'scrypt$32768$8$1$AAAA$BBBB', role = 'editor'
                   WHERE id = ${admin!.id}`;
    await restart();
    const ui = createUiClient(h.app as never);
    assert.equal((await ui.login(ADMIN.email, ADMIN.password)).status, 401, 'the old password stays changed');
    const [after1] = await h.db.sql<{ role: string }[]>`SELECT role FROM users WHERE id = ${admin!.id}`;
    assert.equal(after1?.role, 'editor', 'the demotion stays');

    await h.db.sql`UPDATE users SET disabled_at = now() WHERE id = ${admin!.id}`;
    await restart();
    const [after2] = await h.db.sql<{ disabledAt: Date | null }[]>`
      SELECT disabled_at AS "disabledAt" FROM users WHERE id = ${admin!.id}`;
    assert.ok(after2?.disabledAt, 'the account stays disabled');
  });

  test('npm run admin:reset gives a locked-out admin a new password, the admin role and the account back', () => {
    const root = join(import.meta.dirname, '..', '..');
    const run = (args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'scripts/reset_admin.ts', ...args], {
        cwd: root,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: h.db.url },
      });
    const usage = run([]);
    assert.equal(usage.status, 2, usage.stderr);
    assert.match(usage.stderr, /Usage: npm run admin:reset -- <email>/);
    const reset = run([ADMIN.email]);
    assert.equal(reset.status, 0, reset.stderr);
    const password = /New password \(shown once\): (\S+)/.exec(reset.stdout)?.[1];
    assert.ok(password, reset.stdout);
    return (async () => {
      const ui = createUiClient(h.app as never);
      assert.equal((await ui.login(ADMIN.email, password)).status, 303);
      const [row] = await h.db.sql<{ role: string; disabledAt: Date | null }[]>`
        SELECT role, disabled_at AS "disabledAt" FROM users WHERE email = ${ADMIN.email}`;
      assert.deepEqual({ ...row }, { role: 'admin', disabledAt: null });
    })();
  });

  test('what is missing is still created, and recorded as created by the bootstrap', async () => {
    const fresh = await createHarness({
      env: { ADMIN_EMAIL: 'new-admin@example.test', ADMIN_PASSWORD: 'another long password' },
    });
    try {
      const ui = createUiClient(fresh.app as never);
      assert.equal((await ui.login('new-admin@example.test', 'another long password')).status, 303);
      assert.equal((await fresh.api('/api/v1/links?limit=1')).status, 200);
      const [marker] = await fresh.db.sql<{ value: { adminEmails: string[]; apiKeyHashes: string[] } }[]>`
        SELECT value FROM settings WHERE key = 'bootstrap'`;
      assert.deepEqual(marker?.value.adminEmails, ['new-admin@example.test']);
      assert.equal(marker?.value.apiKeyHashes.length, 1);
    } finally {
      await fresh.close();
    }
  });
});
