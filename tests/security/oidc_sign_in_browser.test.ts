// Sign-in with an OpenID Connect provider, in Chromium, against a real provider (oidc-provider on loopback):
// discovery, the authorization request (PKCE S256, state, nonce), the provider's own login and consent pages,
// the callback, a just-in-time account with the role its groups map to, and an account found again by its
// (issuer, subject). Refused with a clear message and no session: an ID token for another client, an expired
// one, one for another attempt (nonce), a replayed callback (state), a domain not allowed, a person no group maps.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { OIDC_CALLBACK_PATH } from '../../lib/auth/oidc_sign_in.ts';
import { createI18n } from '../../lib/i18n/translator.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc_provider.ts';
import { startUiServer, type UiServer } from '../helpers/ui_server.ts';

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'];
const PROVIDER_NAME = 'Newsroom SSO';
const { t } = createI18n('en');

let server: UiServer;
let idp: TestOidcProvider;
let browser: Browser;

before(async () => {
  // The app's port is chosen first: the provider must know the callback URL, and the app the issuer.
  const port = await getFreePort();
  idp = await startOidcProvider({ redirectUri: `http://127.0.0.1:${port}${OIDC_CALLBACK_PATH}` });
  server = await startUiServer({
    port,
    env: {
      OIDC_ISSUER_URL: idp.issuer,
      OIDC_CLIENT_ID: idp.clientId,
      OIDC_CLIENT_SECRET: idp.clientSecret,
      OIDC_PROVIDER_NAME: PROVIDER_NAME,
      OIDC_SCOPES: 'openid email profile groups',
      OIDC_ALLOWED_EMAIL_DOMAINS: 'newsroom.example',
      OIDC_GROUP_ROLES: 'desk-editors=editor,lifeline-admins=admin,standards=moderator',
      OIDC_DEFAULT_ROLE: 'none',
    },
  });
  idp.accounts.set('nadia', { email: 'nadia@newsroom.example', name: 'Nadia', groups: ['desk-editors'] });
  idp.accounts.set('omar', { email: 'omar@newsroom.example', name: 'Omar', groups: ['standards'] });
  idp.accounts.set('stranger', { email: 'someone@elsewhere.example', groups: ['desk-editors'] });
  idp.accounts.set('nogroup', { email: 'nogroup@newsroom.example', groups: ['canteen'] });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await server?.close();
  await idp?.close();
});

/** Clicks "Sign in with …", signs in at the provider as `login`, consents; returns the callback's response. */
async function signInAtProvider(page: Page, login: string) {
  await page.goto(`${server.base}/ui/login`);
  await page.getByRole('link', { name: t('login.oidc.button', { provider: PROVIDER_NAME }) }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('anything');
  const callback = page.waitForResponse((r) => r.url().startsWith(`${server.base}${OIDC_CALLBACK_PATH}`));
  await page.locator('button[type="submit"]').click();
  // The consent page the first time this account meets this client.
  const consent = page.locator('button[type="submit"]', { hasText: 'Continue' });
  const first = await Promise.race([
    callback.then(() => 'callback' as const),
    consent.waitFor().then(() => 'consent' as const),
  ]);
  if (first === 'consent') await consent.click();
  return callback;
}

async function sessionCookie(context: BrowserContext) {
  return (await context.cookies(server.base)).find((c) => c.name === 'lifeline_session');
}

describe('OpenID Connect sign-in (oidc-provider, Chromium)', () => {
  test('a new person signs in: PKCE S256, state and nonce sent; an editor account made from their group', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const callback = await signInAtProvider(page, 'nadia');
      assert.equal(callback.status(), 303);
      await page.waitForURL(`${server.base}/ui/links`);
      await page.getByRole('heading', { name: t('links.title'), exact: true }).waitFor();

      const asked = idp.authorizationRequests.at(-1)!;
      assert.equal(asked.get('code_challenge_method'), 'S256');
      assert.match(asked.get('code_challenge') ?? '', /^[\w-]{43}$/);
      assert.ok((asked.get('state') ?? '').length >= 32, 'a random state');
      assert.ok((asked.get('nonce') ?? '').length >= 32, 'a random nonce');
      assert.equal(asked.get('redirect_uri'), `${server.base}${OIDC_CALLBACK_PATH}`);

      const [user] = await server.h.db.sql<{ id: number; role: string }[]>`
        SELECT id, role FROM users WHERE email = 'nadia@newsroom.example'`;
      assert.equal(user?.role, 'editor');
      const [identity] = await server.h.db.sql<{ issuer: string; subject: string }[]>`
        SELECT issuer, subject FROM user_identities WHERE user_id = ${user!.id}`;
      assert.deepEqual({ ...identity }, { issuer: idp.issuer, subject: 'nadia' });
      const [session] = await server.h.db.sql<{ method: string }[]>`
        SELECT method FROM sessions WHERE user_id = ${user!.id}`;
      assert.equal(session?.method, 'oidc');

      // An editor, not an admin: the operations page is refused.
      const ops = await page.goto(`${server.base}/ui/ops`);
      assert.equal(ops?.status(), 403);

      // The callback replayed, with the state cookie put back: the attempt was taken once, so it is refused.
      const replayed = new URL(callback.url());
      await context.addCookies([
        {
          name: 'lifeline_oidc_state',
          value: replayed.searchParams.get('state')!,
          url: `${server.base}/ui/login/oidc`,
        },
      ]);
      await context.clearCookies({ name: 'lifeline_session' });
      const again = await page.goto(replayed.href);
      assert.equal(again?.status(), 403);
      await page.getByText(t('login.oidc.state')).waitFor();
      assert.equal(await sessionCookie(context), undefined);
    } finally {
      await context.close();
    }
  });

  test('the same person again is the same account, found by issuer and subject', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      // Their role changed in Lifeline meanwhile: the provider's groups only seed a new account.
      await server.h.db.sql`UPDATE users SET role = 'viewer' WHERE email = 'nadia@newsroom.example'`;
      await signInAtProvider(page, 'nadia');
      await page.waitForURL(`${server.base}/ui/links`);
      const rows = await server.h.db.sql<{ role: string }[]>`
        SELECT role FROM users WHERE email = 'nadia@newsroom.example'`;
      assert.deepEqual(
        rows.map((r) => r.role),
        ['viewer'],
      );
      assert.equal((await page.goto(`${server.base}/ui/links/new`))?.status(), 403, 'a viewer cannot create');
    } finally {
      await context.close();
    }
  });

  for (const [tamper, message, what] of [
    ['audience', 'login.oidc.audience', 'made for another client (aud)'],
    ['expired', 'login.oidc.expired', 'past its expiry (exp)'],
    ['nonce', 'login.oidc.nonce', 'of another attempt (nonce)'],
  ] as const) {
    test(`an ID token ${what} is refused with a clear message, and nobody is signed in`, async () => {
      const context = await browser.newContext();
      idp.tamper = tamper;
      try {
        const page = await context.newPage();
        const callback = await signInAtProvider(page, 'omar');
        assert.equal(callback.status(), 403);
        await page.getByText(t(message)).waitFor();
        assert.equal(await sessionCookie(context), undefined);
        const made = await server.h.db.sql`SELECT 1 FROM users WHERE email = 'omar@newsroom.example'`;
        assert.equal(made.length, 0, 'no account from a refused token');
      } finally {
        idp.tamper = 'none';
        await context.close();
      }
    });
  }

  test('the untouched token for the same person then signs them in as a moderator', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await signInAtProvider(page, 'omar');
      await page.waitForURL(`${server.base}/ui/links`);
      assert.equal((await page.goto(`${server.base}/ui/reports`))?.status(), 200);
      assert.equal((await page.goto(`${server.base}/ui/ops`))?.status(), 403);
    } finally {
      await context.close();
    }
  });

  test('an address outside the allowed domains, and a person no group maps to a role, are refused', async () => {
    for (const [login, message] of [
      ['stranger', 'login.oidc.domain'],
      ['nogroup', 'login.oidc.role'],
    ] as const) {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        const callback = await signInAtProvider(page, login);
        assert.equal(callback.status(), 403, login);
        await page.getByText(t(message)).waitFor();
        assert.equal(await sessionCookie(context), undefined, login);
      } finally {
        await context.close();
      }
    }
    const made = await server.h.db.sql`
      SELECT 1 FROM users WHERE email IN ('someone@elsewhere.example', 'nogroup@newsroom.example')`;
    assert.equal(made.length, 0);
  });

  test('a callback this browser did not start is refused (login CSRF)', async () => {
    const res = await server.h.app.request(`${OIDC_CALLBACK_PATH}?code=x&state=made-up`);
    assert.equal(res.status, 403);
    assert.ok((await res.text()).includes('This sign-in was already used'));
  });
});
