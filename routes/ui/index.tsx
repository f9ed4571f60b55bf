import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ErrorPage } from '../../components/ErrorPage.tsx';
import { AppError } from '../../lib/shared/errors.ts';
import { findNulCharacter } from '../../lib/shared/validation.ts';
import type { WebDeps } from '../app_env.ts';
import { csrfProtection } from '../middleware/csrf.ts';
import { uiSecurityHeaders } from '../middleware/ui_security_headers.ts';
import { requireUser, uiSession } from '../middleware/ui_session.ts';
import { createCheckFieldRoutes } from './check_field.ts';
import { createUiExportRoutes } from './exports.ts';
import { createLinkDetailRoutes } from './link_detail.tsx';
import { createLinkListRoutes } from './link_list.tsx';
import { createLinkNewRoutes } from './link_new.tsx';
import { createLinkQrRoutes } from './link_qr.ts';
import { createLoginRoutes } from './login.tsx';
import { createOpsRoutes } from './ops.tsx';
import { renderPage } from './render_page.ts';
import { createReportsUiRoutes } from './reports.tsx';
import { createRetargetUiRoutes } from './retarget.tsx';
import type { UiEnv } from './ui_env.ts';

/** Forms are small; nothing in the UI uploads files. */
const UI_BODY_MAX_BYTES = 64 * 1024;

/** /ui: the editor web UI (server-rendered Preact; islands only add to forms that work without them). */
export function createUiRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();
  const appOrigin = new URL(deps.config.appBaseUrl).origin;

  app.use(uiSecurityHeaders({ https: appOrigin.startsWith('https:') }));
  app.use(
    bodyLimit({
      maxSize: UI_BODY_MAX_BYTES,
      onError: (c) =>
        renderPage(
          c,
          <ErrorPage title="Too much data" message="That form sent more than Lifeline accepts." />,
          413,
        ),
    }),
  );
  // No form field takes a NUL character (Postgres cannot store one): a 400 page instead of a failed write.
  app.use(async (c, next) => {
    if (c.req.method !== 'POST') return next();
    const type = c.req.header('Content-Type') ?? '';
    if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(type)) return next();
    const form = await c.req.parseBody().catch(() => ({}));
    if (findNulCharacter(form) === null) return next();
    return renderPage(
      c,
      <ErrorPage title="This form could not be accepted" message="A field contained a NUL character." />,
      400,
    );
  });
  app.use(uiSession(deps));
  app.use(
    csrfProtection({
      appOrigin,
      onRejected: (c, reason) => {
        deps.logger.warn(
          { reqId: c.get('requestId'), path: c.req.path, reason },
          'form post rejected (CSRF)',
        );
        return renderPage(
          c,
          <ErrorPage
            title="This form could not be accepted"
            message="It was not sent from a Lifeline page, or the page was open too long. Go back, reload the page and try again."
          />,
          403,
        );
      },
    }),
  );

  app.route('/', createLoginRoutes(deps));
  app.get('/', (c) => c.redirect('/ui/links', 302));

  app.use('/links/*', requireUser());
  app.use('/links', requireUser());
  app.use('/links.csv', requireUser());
  app.use('/api/*', async (c, next) => {
    if (!c.get('session')) return c.json({ ok: false, message: 'Sign in again.' }, 401);
    await next();
  });
  app.use('/ops/*', requireUser('admin'));
  app.use('/ops', requireUser('admin'));
  app.use('/reports/*', requireUser('admin'));
  app.use('/reports', requireUser('admin'));

  app.route('/api', createCheckFieldRoutes(deps));
  app.route('/', createUiExportRoutes(deps));
  app.route('/links/new', createLinkNewRoutes(deps));
  app.route('/links', createLinkListRoutes(deps));
  app.route('/links', createLinkQrRoutes(deps));
  app.route('/links', createLinkDetailRoutes(deps));
  app.route('/ops/retarget', createRetargetUiRoutes(deps));
  app.route('/ops', createOpsRoutes(deps));
  app.route('/reports', createReportsUiRoutes(deps));

  // Last: anything else under /ui is an HTML 404 (the app-wide notFound answers problem+json).
  app.all('*', (c) =>
    renderPage(
      c,
      <ErrorPage title="Page not found" message="There is nothing at this address in Lifeline." />,
      404,
    ),
  );
  app.onError((error, c) => {
    if (error instanceof AppError && error.status < 500) {
      const title = error.status === 404 ? 'Not found' : error.title;
      return renderPage(c, <ErrorPage title={title} message={error.message} />, error.status as 404);
    }
    deps.logger.error({ err: error, reqId: c.get('requestId'), path: c.req.path }, 'unhandled UI error');
    return renderPage(
      c,
      <ErrorPage
        title="Something went wrong"
        message="Lifeline could not finish this. It has been logged; please try again."
      />,
      503,
    );
  });
  return app;
}
