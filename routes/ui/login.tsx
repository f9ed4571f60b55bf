import { type Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { LoginPage } from '../../components/LoginPage.tsx';
import { MfaPage } from '../../components/MfaPage.tsx';
import { HashBusyError } from '../../lib/auth/hash_slots.ts';
import { LoginFailedError, logIn, PasswordTooLongError } from '../../lib/auth/log_in.ts';
import { getMfaState, verifySecondFactor } from '../../lib/auth/mfa.ts';
import { createOidcSignIn, OidcSignInError } from '../../lib/auth/oidc_sign_in.ts';
import { PASSWORD_MAX_BYTES } from '../../lib/auth/passwords.ts';
import {
  endSession,
  getSessionCookieName,
  SESSION_MAX_AGE_MS,
  type SessionMethod,
  startSession,
  type UiSession,
} from '../../lib/auth/sessions.ts';
import { getClientIp } from '../../lib/shared/client_ip.ts';
import { randomToken, sha256Hex } from '../../lib/shared/crypto.ts';
import { RateLimitedError } from '../../lib/shared/errors.ts';
import type { WebDeps } from '../app_env.ts';
import { LOGIN_CSRF_COOKIE } from '../middleware/csrf.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

/**
 * Where to go after login: only a page inside the UI, never another site nor another path of ours (a short code
 * on a shared host would redirect anywhere). The value is resolved as a browser resolves the Location —
 * dot segments, `%2e%2e`, backslashes, `//` — and must still be under /ui; the resolved path and query are
 * what is sent back.
 */
export function toSafeNext(next: unknown): string {
  const fallback = '/ui/links';
  if (typeof next !== 'string' || next.length > 2000 || !next.startsWith('/ui')) return fallback;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  if (/[\\\s\u0000-\u001f\u007f]|^\/\/|%2f|%5c/i.test(next)) return fallback;
  let url: URL;
  try {
    url = new URL(next, 'http://lifeline.invalid');
  } catch {
    return fallback;
  }
  if (url.origin !== 'http://lifeline.invalid') return fallback;
  if ((url.pathname !== '/ui' && !url.pathname.startsWith('/ui/')) || url.pathname.includes('//'))
    return fallback;
  return `${url.pathname}${url.search}`;
}

/** Characters of a typed e-mail a failed-login log line keeps (no account's address is near 64 KiB). */
const LOGGED_ACCOUNT_MAX_LENGTH = 64;

/**
 * A typed e-mail as a failed-login log line carries it: its first LOGGED_ACCOUNT_MAX_LENGTH characters (what an
 * operator reads to see which account is targeted), and when cut, its length and a short hash (to tell apart
 * long inputs that start alike), so whatever was typed costs the log a bounded line.
 */
export async function describeTypedAccount(email: string): Promise<Record<string, string | number>> {
  const account = email.toLowerCase();
  if (account.length <= LOGGED_ACCOUNT_MAX_LENGTH) return { account };
  return {
    account: `${account.slice(0, LOGGED_ACCOUNT_MAX_LENGTH)}…`,
    accountLength: account.length,
    accountSha256: (await sha256Hex(account)).slice(0, 16),
  };
}

/** The cookie that carries an OpenID Connect attempt's state from /ui/login/oidc to the callback. */
export const OIDC_STATE_COOKIE = 'lifeline_oidc_state';
const OIDC_COOKIE_PATH = '/ui/login/oidc';

/** /ui/login (password, its second step, OpenID Connect) and /ui/logout. */
export function createLoginRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();
  const secure = deps.config.appBaseUrl.startsWith('https:');
  const sessionCookie = getSessionCookieName(secure);

  /** The login form's CSRF token: a double-submit cookie, since there is no session yet. */
  function loginCsrfToken(c: Context<UiEnv>): string {
    const existing = getCookie(c, LOGIN_CSRF_COOKIE);
    if (existing && existing.length >= 20) return existing;
    const token = randomToken(32);
    setCookie(c, LOGIN_CSRF_COOKIE, token, { httpOnly: true, secure, sameSite: 'Strict', path: '/ui/login' });
    return token;
  }

  const oidc = deps.config.oidc
    ? createOidcSignIn({
        sql: deps.sql,
        logger: deps.logger,
        config: deps.config.oidc,
        appBaseUrl: deps.config.appBaseUrl,
        outgoing: deps.config.outgoing,
      })
    : undefined;
  const oidcProvider = deps.config.oidc?.providerName;

  /** A new session for `user` (a fresh id: nothing from before sign-in is kept) and its cookie. */
  async function signIn(
    c: Context<UiEnv>,
    user: UiSession['user'],
    method: SessionMethod,
    stage: 'mfa' | 'signed-in' = 'signed-in',
  ) {
    const session = await startSession(deps.sql, user, {
      userAgent: c.req.header('User-Agent') ?? null,
      ip: getClientIp(c, deps.config.trustedClientIpHeader),
      stage,
      method,
    });
    setCookie(c, sessionCookie, session.id, {
      httpOnly: true,
      secure,
      sameSite: 'Lax',
      path: '/',
      maxAge: SESSION_MAX_AGE_MS / 1000,
    });
  }

  app.get('/login', (c) => {
    const next = toSafeNext(c.req.query('next'));
    if (c.get('session')) return c.redirect(next, 303);
    return renderPage(
      c,
      <LoginPage
        csrfToken={loginCsrfToken(c)}
        next={next}
        oidcProvider={oidcProvider}
        {...(c.req.query('signedOut') ? { notice: c.get('i18n').t('login.signedOut') } : {})}
      />,
    );
  });

  app.post('/login', async (c) => {
    const form = await c.req.parseBody();
    const email = typeof form.email === 'string' ? form.email.trim() : '';
    const password = typeof form.password === 'string' ? form.password : '';
    const next = toSafeNext(form.next);
    const again = (error: string, status: 400 | 401 | 429 | 503) =>
      renderPage(
        c,
        <LoginPage
          csrfToken={loginCsrfToken(c)}
          email={email}
          error={error}
          next={next}
          oidcProvider={oidcProvider}
        />,
        status,
      );
    const { t } = c.get('i18n');
    if (!email || !password) return again(t('login.missing'), 401);
    try {
      const user = await logIn(
        { ...deps, hashQueueMax: deps.config.loginHashQueueMax },
        email,
        password,
        getClientIp(c, deps.config.trustedClientIpHeader),
        c.req.raw.signal,
      );
      // With a second factor, the password only opens the code form (a short 'mfa' session).
      const { enrolled } = await getMfaState(deps.sql, user.id);
      await signIn(c, user, 'password', enrolled ? 'mfa' : 'signed-in');
      deleteCookie(c, LOGIN_CSRF_COOKIE, { path: '/ui/login', secure });
      if (enrolled) return c.redirect(`/ui/login/mfa?next=${encodeURIComponent(next)}`, 303);
      deps.logger.info({ user: user.email, reqId: c.get('requestId') }, 'signed in');
      return c.redirect(next, 303);
    } catch (error) {
      if (error instanceof LoginFailedError) {
        deps.logger.warn(
          { ...(await describeTypedAccount(email)), reqId: c.get('requestId') },
          'login failed',
        );
        return again(t('login.wrong'), 401);
      }
      if (error instanceof PasswordTooLongError) {
        return again(t('login.passwordTooLong', { bytes: PASSWORD_MAX_BYTES }), 400);
      }
      if (error instanceof HashBusyError) {
        // The documented answer to a full hash queue: the login page, saying when to come back.
        const seconds = Number(error.extra.retryAfter);
        c.header('Retry-After', String(seconds));
        return again(t('login.busy', { seconds }), 503);
      }
      if (error instanceof RateLimitedError) {
        const seconds = Number(error.extra.retryAfter);
        c.header('Retry-After', String(seconds));
        return again(
          t('login.tooMany', { seconds, minutes: seconds < 90 ? 0 : Math.ceil(seconds / 60) }),
          429,
        );
      }
      throw error;
    }
  });

  app.get('/login/mfa', (c) => {
    const session = c.get('session');
    const next = toSafeNext(c.req.query('next'));
    if (!session) return c.redirect('/ui/login', 303);
    if (session.stage !== 'mfa') return c.redirect(next, 303);
    return renderPage(c, <MfaPage csrfToken={session.csrfToken} next={next} />);
  });

  app.post('/login/mfa', async (c) => {
    const session = c.get('session');
    if (session?.stage !== 'mfa') return c.redirect('/ui/login', 303);
    const form = await c.req.parseBody();
    const next = toSafeNext(form.next);
    const code = typeof form.code === 'string' ? form.code.slice(0, 40) : '';
    const { t } = c.get('i18n');
    const ip = getClientIp(c, deps.config.trustedClientIpHeader);
    // Guesses are counted like passwords: per network and per account (the account here is the user's code).
    const account = `second-factor:${session.user.id}`;
    try {
      await deps.rateLimits.beginLogin(account, ip);
    } catch (error) {
      if (error instanceof RateLimitedError) {
        const seconds = Number(error.extra.retryAfter);
        c.header('Retry-After', String(seconds));
        const message = t('login.tooMany', { seconds, minutes: seconds < 90 ? 0 : Math.ceil(seconds / 60) });
        return renderPage(c, <MfaPage csrfToken={session.csrfToken} next={next} error={message} />, 429);
      }
      throw error;
    }
    const met = await verifySecondFactor(deps.sql, session.user.id, code);
    if (!met) {
      deps.logger.warn({ user: session.user.id, reqId: c.get('requestId') }, 'second factor refused');
      return renderPage(c, <MfaPage csrfToken={session.csrfToken} next={next} error={t('mfa.wrong')} />, 401);
    }
    await deps.rateLimits.endLoginSuccessfully(account, ip);
    await endSession(deps.sql, session);
    await signIn(c, session.user, 'password');
    deps.logger.info({ user: session.user.email, with: met, reqId: c.get('requestId') }, 'signed in');
    return c.redirect(next, 303);
  });

  app.get('/login/oidc', async (c) => {
    if (!oidc) return c.notFound();
    const next = toSafeNext(c.req.query('next'));
    try {
      const { url, state } = await oidc.begin(next);
      // Lax: the provider sends the browser back with a top-level GET, which carries Lax cookies.
      setCookie(c, OIDC_STATE_COOKIE, state, {
        httpOnly: true,
        secure,
        sameSite: 'Lax',
        path: OIDC_COOKIE_PATH,
        maxAge: 600,
      });
      return c.redirect(url.href, 302);
    } catch (error) {
      if (error instanceof OidcSignInError) return oidcRefused(c, error);
      throw error;
    }
  });

  app.get('/login/oidc/callback', async (c) => {
    if (!oidc) return c.notFound();
    const query = new URL(c.req.url).search.slice(1);
    const browserState = getCookie(c, OIDC_STATE_COOKIE);
    deleteCookie(c, OIDC_STATE_COOKIE, { path: OIDC_COOKIE_PATH, secure });
    try {
      const { user, next } = await oidc.finish(query, browserState);
      await signIn(c, user, 'oidc');
      deps.logger.info({ user: user.email, reqId: c.get('requestId'), via: 'oidc' }, 'signed in');
      return c.redirect(toSafeNext(next), 303);
    } catch (error) {
      if (error instanceof OidcSignInError) return oidcRefused(c, error);
      throw error;
    }
  });

  /** The sign-in page with the reason the provider's sign-in was refused. */
  function oidcRefused(c: Context<UiEnv>, error: OidcSignInError) {
    deps.logger.warn({ reason: error.reason, reqId: c.get('requestId') }, 'OIDC sign-in refused');
    return renderPage(
      c,
      <LoginPage
        csrfToken={loginCsrfToken(c)}
        next="/ui/links"
        oidcProvider={oidcProvider}
        error={c.get('i18n').t(`login.oidc.${error.reason}`)}
      />,
      error.status as 403,
    );
  }

  app.post('/logout', async (c) => {
    const session = c.get('session');
    if (session) await endSession(deps.sql, session);
    deleteCookie(c, sessionCookie, { path: '/', secure });
    return c.redirect('/ui/login?signedOut=1', 303);
  });

  return app;
}
