// /ui/account: the signed-in person's own security — two-step verification and their sessions.
import { type Context, Hono } from 'hono';
import { deleteCookie } from 'hono/cookie';
import { AccountSecurityPage } from '../../components/AccountSecurityPage.tsx';
import {
  confirmMfaEnrolment,
  getMfaState,
  type MfaEnrolment,
  renewRecoveryCodes,
  startMfaEnrolment,
} from '../../lib/auth/mfa.ts';
import { getSessionCookieName, type UiSession } from '../../lib/auth/sessions.ts';
import { listSessions, revokeSession, revokeSessions } from '../../lib/auth/staff_sessions.ts';
import { AppError } from '../../lib/shared/errors.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

const DONE = ['revoked', 'revokedOthers'] as const;

export function createAccountRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();
  const secure = deps.config.appBaseUrl.startsWith('https:');

  async function render(
    c: Context<UiEnv>,
    extra: { enrolment?: MfaEnrolment; recoveryCodes?: string[]; error?: string; notice?: string } = {},
    status: 200 | 422 | 409 = 200,
  ) {
    const session = c.get('session')!;
    const [mfa, sessions] = await Promise.all([
      getMfaState(deps.sql, session.user.id),
      listSessions(deps.sql, session.user.id, session.idHash),
    ]);
    return renderPage(
      c,
      <AccountSecurityPage
        session={session}
        mfa={mfa}
        sessions={sessions}
        required={c.req.query('required') === '1' && !mfa.enrolled}
        {...extra}
      />,
      status,
    );
  }

  app.get('/security', (c) => {
    const done = DONE.find((d) => d === c.req.query('done'));
    return render(c, done ? { notice: c.get('i18n').t(`account.done.${done}`) } : {});
  });

  app.post('/mfa/start', async (c) => {
    const session = c.get('session')!;
    try {
      return render(c, { enrolment: await startMfaEnrolment(deps.sql, session.user, { fresh: true }) });
    } catch (error) {
      if (error instanceof AppError && error.status === 409) return render(c, {}, 409);
      throw error;
    }
  });

  app.post('/mfa/confirm', async (c) => {
    const session = c.get('session')!;
    const form = await c.req.parseBody();
    const code = typeof form.code === 'string' ? form.code : '';
    try {
      const recoveryCodes = await confirmMfaEnrolment(deps.sql, session.user, code);
      deps.logger.info({ user: session.user.id }, 'second factor set up');
      return render(c, { recoveryCodes });
    } catch (error) {
      if (error instanceof AppError && error.status === 422) {
        // The same pending secret again, so the app that scanned it keeps working.
        const enrolment = await startMfaEnrolment(deps.sql, session.user);
        return render(c, { enrolment, error: c.get('i18n').t('account.mfa.wrongCode') }, 422);
      }
      if (error instanceof AppError && error.status === 409) return render(c, {}, 409);
      throw error;
    }
  });

  app.post('/mfa/recovery-codes', async (c) => {
    const session = c.get('session')!;
    try {
      return render(c, { recoveryCodes: await renewRecoveryCodes(deps.sql, session.user) });
    } catch (error) {
      if (error instanceof AppError && error.status === 422) return render(c, {}, 422);
      throw error;
    }
  });

  app.post('/sessions/:id/revoke', async (c) => {
    const session = c.get('session')!;
    const id = c.req.param('id');
    await revokeSession(deps.sql, session.user.id, id, actorName(session));
    if (id === session.idHash) {
      deleteCookie(c, getSessionCookieName(secure), { path: '/', secure });
      return c.redirect('/ui/login?signedOut=1', 303);
    }
    return c.redirect('/ui/account/security?done=revoked#sessions', 303);
  });

  app.post('/sessions/revoke-others', async (c) => {
    const session = c.get('session')!;
    await revokeSessions(deps.sql, session.user.id, actorName(session), session.idHash);
    return c.redirect('/ui/account/security?done=revokedOthers#sessions', 303);
  });

  return app;
}

const actorName = (session: UiSession) => `user:${session.user.email}`;
