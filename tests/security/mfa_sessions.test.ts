// Two-step verification for password accounts and the sessions page, through the UI as a browser without
// JavaScript uses it: enrolment (QR and key, confirmed by a code), sign-in with a code (one step of clock skew
// either way; a code never twice), single-use recovery codes, admins held to enrolment by REQUIRE_MFA_FOR_ADMINS,
// and sessions listed, ended one at a time or all but this one, and ended everywhere by a role change or an admin.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, HARNESS_ADMIN, type Harness } from '../../devkit/harness/harness.ts';
import { createUser } from '../../lib/auth/manage_users.ts';
import { verifySecondFactor } from '../../lib/auth/mfa.ts';
import { totpCode, totpStep } from '../../lib/auth/totp.ts';
import { createUiClient, type UiClient } from '../helpers/ui_client.ts';

const EDITOR = { email: 'mfa-editor@example.test', password: 'an editor password for mfa' };
const CHROME =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:141.0) Gecko/20100101 Firefox/141.0';

let h: Harness;

before(async () => {
  h = await createHarness({ env: { REQUIRE_MFA_FOR_ADMINS: 'true' } });
  await createUser(h.db.sql, { ...EDITOR, name: null, role: 'editor' }, 'test');
});
after(() => h?.close());

const client = (ua = CHROME) => {
  const c = createUiClient(h.app as never);
  const get = c.get;
  const post = c.post;
  c.get = (path, headers = {}) => get(path, { 'User-Agent': ua, ...headers });
  c.post = (path, fields, options = {}) =>
    post(path, fields, { ...options, headers: { 'User-Agent': ua, ...options.headers } });
  return c;
};
const userId = async (email: string) =>
  (await h.db.sql<{ id: number }[]>`SELECT id FROM users WHERE email = ${email}`)[0]!.id;

/** Enrols the signed-in client: start, read the key off the page, confirm with its current code. */
async function enrol(c: UiClient): Promise<{ secret: string; recoveryCodes: string[] }> {
  const started = await c.post('/ui/account/mfa/start', {});
  assert.equal(started.status, 200);
  const page = await started.text();
  assert.match(page, /<img src="data:image\/svg\+xml;base64,/, 'the QR code');
  const secret = /class="totp-secret"[^>]*>([A-Z2-7 ]+)</.exec(page)![1]!.replace(/ /g, '');
  const code = await totpCode(secret, totpStep(Date.now()));
  const confirmed = await c.post('/ui/account/mfa/confirm', { code });
  assert.equal(confirmed.status, 200);
  const codes = [...(await confirmed.text()).matchAll(/<code>([2-9a-z]{5}-[2-9a-z]{5})<\/code>/g)].map(
    (m) => m[1]!,
  );
  return { secret, recoveryCodes: codes };
}

describe('two-step verification and sessions', () => {
  let secret: string;
  let recoveryCodes: string[];

  test('an admin without a second factor is held on the security page until they set one up', async () => {
    const admin = client();
    assert.equal((await admin.login(HARNESS_ADMIN.email, HARNESS_ADMIN.password)).status, 303);
    const links = await admin.get('/ui/links');
    assert.equal(links.status, 303);
    assert.equal(links.headers.get('Location'), '/ui/account/security?required=1');
    const page = await admin.get('/ui/account/security?required=1');
    assert.equal(page.status, 200);
    assert.ok((await page.text()).includes('Administrators must set up two-step verification'));

    // A wrong code keeps the same key on the page (the app that scanned it keeps working).
    await admin.post('/ui/account/mfa/start', {});
    const wrong = await admin.post('/ui/account/mfa/confirm', { code: '000000' });
    assert.equal(wrong.status, 422);

    ({ secret, recoveryCodes } = await enrol(admin));
    assert.equal(recoveryCodes.length, 10);
    assert.equal(new Set(recoveryCodes).size, 10);
    const stored = await h.db.sql<{ code_hash: string }[]>`
      SELECT code_hash FROM user_recovery_codes WHERE user_id = ${await userId(HARNESS_ADMIN.email)}`;
    assert.equal(stored.length, 10);
    assert.ok(
      stored.every((r) => !recoveryCodes.some((code) => r.code_hash.includes(code))),
      'only hashes',
    );
    assert.equal((await admin.get('/ui/links')).status, 200, 'enrolled: the pages open');
  });

  test('an editor is not held to enrolment', async () => {
    const editor = client();
    assert.equal((await editor.login(EDITOR.email, EDITOR.password)).status, 303);
    assert.equal((await editor.get('/ui/links')).status, 200);
  });

  test('sign-in then asks for the code: nothing opens in between; a wrong code is refused', async () => {
    const admin = client(FIREFOX);
    const login = await admin.login(HARNESS_ADMIN.email, HARNESS_ADMIN.password);
    assert.equal(login.status, 303);
    assert.match(login.headers.get('Location') ?? '', /^\/ui\/login\/mfa\?next=/);
    const held = await admin.get('/ui/links');
    assert.equal(held.status, 303);
    assert.equal(held.headers.get('Location'), '/ui/login/mfa');
    assert.equal((await admin.get('/ui/login/mfa')).status, 200);
    const wrong = await admin.post('/ui/login/mfa', { code: '123456', next: '/ui/links' });
    assert.equal(wrong.status, 401);
    assert.ok((await wrong.text()).includes('That code is not right'));
    // The code of the next step: a phone's clock 30 s ahead still works (the current step's code was used to
    // confirm the enrolment, so it does not count again).
    const code = await totpCode(secret, totpStep(Date.now()) + 1);
    const ok = await admin.post('/ui/login/mfa', { code, next: '/ui/links' });
    assert.equal(ok.status, 303);
    assert.equal(ok.headers.get('Location'), '/ui/links');
    assert.equal((await admin.get('/ui/links')).status, 200);
  });

  test('a code is accepted once: the same code again is refused, even in another sign-in', async () => {
    const id = await userId(HARNESS_ADMIN.email);
    // Some minutes on (the clock is the function's argument), so these steps are newer than any used above.
    const later = Date.now() + 10 * 30_000;
    const step = totpStep(later);
    const behind = await totpCode(secret, step - 1);
    assert.equal(await verifySecondFactor(h.db.sql, id, behind, later), 'totp', 'a phone 30 s behind');
    assert.equal(await verifySecondFactor(h.db.sql, id, behind, later), null, 'the same code again');
    const ahead = await totpCode(secret, step + 1);
    assert.equal(await verifySecondFactor(h.db.sql, id, ahead, later), 'totp', 'a phone 30 s ahead');
    const current = await totpCode(secret, step);
    assert.equal(await verifySecondFactor(h.db.sql, id, current, later), null, 'older than one accepted');
    const far = await totpCode(secret, step + 3);
    assert.equal(await verifySecondFactor(h.db.sql, id, far, later), null, 'three steps off');
  });

  test('a recovery code signs in once', async () => {
    const recovery = recoveryCodes[0]!;
    const first = client();
    await first.login(HARNESS_ADMIN.email, HARNESS_ADMIN.password);
    await first.get('/ui/login/mfa');
    const ok = await first.post('/ui/login/mfa', { code: recovery.toUpperCase(), next: '/ui/links' });
    assert.equal(ok.status, 303, 'typed in capitals: still the code');
    const second = client();
    await second.login(HARNESS_ADMIN.email, HARNESS_ADMIN.password);
    await second.get('/ui/login/mfa');
    const used = await second.post('/ui/login/mfa', { code: recovery, next: '/ui/links' });
    assert.equal(used.status, 401);
    const page = await (await first.get('/ui/account/security')).text();
    assert.ok(page.includes('Unused recovery codes: 9'));
  });

  test('sessions: listed with browser and network; one ended, then all but this one', async () => {
    const id = await userId(EDITOR.email);
    const laptop = client(CHROME);
    const phone = client(FIREFOX);
    await laptop.login(EDITOR.email, EDITOR.password);
    await phone.login(EDITOR.email, EDITOR.password);
    const page = await (await laptop.get('/ui/account/security')).text();
    assert.ok(page.includes('Chrome on Linux'));
    assert.ok(page.includes('Firefox on Windows'));
    assert.ok(
      !/\b\d+\.\d+\.\d+\.[1-9]\d*\b/.test(page.replace(/\.0\/24/g, '')),
      'no full IPv4 address shown',
    );

    const ids = await h.db.sql<{ id_hash: string; user_agent: string }[]>`
      SELECT id_hash, user_agent FROM sessions WHERE user_id = ${id} AND stage = 'signed-in'`;
    const phoneId = ids.find((s) => s.user_agent === FIREFOX)!.id_hash;
    const ended = await laptop.post(`/ui/account/sessions/${phoneId}/revoke`, {});
    assert.equal(ended.status, 303);
    assert.equal((await phone.get('/ui/links')).status, 303, 'the phone is signed out');
    assert.equal((await laptop.get('/ui/links')).status, 200, 'the laptop is not');

    // Another user's session cannot be ended from here.
    const adminSession = (
      await h.db.sql<{ id_hash: string }[]>`
      SELECT id_hash FROM sessions WHERE user_id = ${await userId(HARNESS_ADMIN.email)} LIMIT 1`
    )[0]!;
    await laptop.post(`/ui/account/sessions/${adminSession.id_hash}/revoke`, {});
    const still = await h.db.sql`SELECT 1 FROM sessions WHERE id_hash = ${adminSession.id_hash}`;
    assert.equal(still.length, 1);

    const tablet = client(FIREFOX);
    await tablet.login(EDITOR.email, EDITOR.password);
    assert.equal((await laptop.post('/ui/account/sessions/revoke-others', {})).status, 303);
    assert.equal((await tablet.get('/ui/links')).status, 303);
    assert.equal((await laptop.get('/ui/links')).status, 200);
  });

  test("a role change, and an admin's 'sign out everywhere', end every session of the person", async () => {
    const admin = client();
    await admin.login(HARNESS_ADMIN.email, HARNESS_ADMIN.password);
    await admin.get('/ui/login/mfa');
    assert.equal(
      (await admin.post('/ui/login/mfa', { code: recoveryCodes[1]!, next: '/ui/ops' })).status,
      303,
    );
    assert.equal((await admin.get('/ui/ops')).status, 200);
    const editor = client();
    await editor.login(EDITOR.email, EDITOR.password);
    assert.equal((await editor.get('/ui/links')).status, 200);
    const id = await userId(EDITOR.email);
    await admin.get('/ui/ops');
    const changed = await admin.post(`/ui/ops/users/${id}/role`, { role: 'viewer' });
    assert.equal(changed.status, 303);
    assert.equal((await editor.get('/ui/links')).status, 303, 'signed out by the role change');
    const [row] = await h.db.sql<{ role: string }[]>`SELECT role FROM users WHERE id = ${id}`;
    assert.equal(row?.role, 'viewer');
    // An unknown role is refused with a message, and nothing changes.
    await admin.get('/ui/ops');
    assert.equal((await admin.post(`/ui/ops/users/${id}/role`, { role: 'owner' })).status, 422);

    // An admin signs them out everywhere from the users table.
    await editor.login(EDITOR.email, EDITOR.password);
    assert.equal((await editor.get('/ui/links')).status, 200);
    await admin.get('/ui/ops');
    assert.equal((await admin.post(`/ui/ops/users/${id}/sessions/revoke`, {})).status, 303);
    assert.equal((await editor.get('/ui/links')).status, 303);
  });
});
