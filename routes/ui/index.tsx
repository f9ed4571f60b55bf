import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ErrorPage } from '../../components/ErrorPage.tsx';
import { AppError, NotFoundError } from '../../lib/shared/errors.ts';
import { findNulCharacter } from '../../lib/shared/validation.ts';
import type { WebDeps } from '../app_env.ts';
import { authorizeUi } from '../middleware/authorize.ts';
import { csrfProtection } from '../middleware/csrf.ts';
import { uiSecurityHeaders } from '../middleware/ui_security_headers.ts';
import { uiSession } from '../middleware/ui_session.ts';
import { createAccountRoutes } from './account.tsx';
import { createCheckFieldRoutes } from './check_field.ts';
import { createDashboardRoutes } from './dashboard.tsx';
import { createDestinationsUiRoutes } from './destinations.tsx';
import { createUiExportRoutes } from './exports.ts';
import { createLinkBulkRoutes } from './link_bulk.tsx';
import { createLinkDetailRoutes } from './link_detail.tsx';
import { createLinkImportRoutes } from './link_import.tsx';
import { createLinkListRoutes } from './link_list.tsx';
import { createLinkNewRoutes } from './link_new.tsx';
import { createLinkQrRoutes } from './link_qr.ts';
import { createQrPrintRoutes } from './link_qr_print.tsx';
import { createLoginRoutes } from './login.tsx';
import { createOpsRoutes } from './ops.tsx';
import { getI18n, renderPage } from './render_page.ts';
import { createReportsUiRoutes } from './reports.tsx';
import { createRetargetUiRoutes } from './retarget.tsx';
import { createSettingsRoutes } from './settings.tsx';
import type { UiEnv } from './ui_env.ts';
import { createWebhooksUiRoutes } from './webhooks.tsx';
import { createWordPressUiRoutes } from './wordpress.tsx';

/** Forms are small; the two that upload a file have their own limit. */
const UI_BODY_MAX_BYTES = 64 * 1024;
/**
 * A print QR's logo or the newsroom's (256 KiB, lib/links/print_qr.ts) or a CSV import (1 MiB, lib/links/import_links.ts) with
 * the form around it; refused from the Content-Length, unread, like every other form over its limit.
 */
const UPLOAD_BODY_MAX_BYTES = 1024 * 1024 + 64 * 1024;
const UPLOAD_PATHS = /^\/ui\/(?:links\/(?:import|[^/]+\/qr)|settings\/logo)$/;
/**
 * The sign-in form: an e-mail (254 characters), a password of at most 1 KiB (3 KiB percent-encoded), the return
 * path and the form token. Anyone may post it, so a larger body is refused from its Content-Length, unread
 * (a chunked one as soon as it passes the limit), before the form is parsed.
 */
export const LOGIN_BODY_MAX_BYTES = 16 * 1024;

/** /ui: the editor web UI (server-rendered Preact; islands only add to forms that work without them). */
export function createUiRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();
  const appOrigin = new URL(deps.config.appBaseUrl).origin;

  const tooLarge = (c: Context) => {
    const { t } = getI18n(c);
    return renderPage(
      c,
      <ErrorPage title={t('error.tooLarge.title')} message={t('error.tooLarge.message')} />,
      413,
    );
  };
  app.use(uiSecurityHeaders({ https: appOrigin.startsWith('https:') }));
  app.post('/login', bodyLimit({ maxSize: LOGIN_BODY_MAX_BYTES, onError: tooLarge }));
  const formLimit = bodyLimit({ maxSize: UI_BODY_MAX_BYTES, onError: tooLarge });
  const uploadLimit = bodyLimit({ maxSize: UPLOAD_BODY_MAX_BYTES, onError: tooLarge });
  app.use((c, next) => (UPLOAD_PATHS.test(c.req.path) ? uploadLimit(c, next) : formLimit(c, next)));
  // No form field takes a NUL character (Postgres cannot store one): a 400 page instead of a failed write.
  app.use(async (c, next) => {
    if (c.req.method !== 'POST') return next();
    const type = c.req.header('Content-Type') ?? '';
    if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(type)) return next();
    const form = await c.req.parseBody().catch(() => ({}));
    if (findNulCharacter(form) === null) return next();
    const { t } = getI18n(c);
    return renderPage(c, <ErrorPage title={t('error.csrf.title')} message={t('error.nul.message')} />, 400);
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
        const { t } = getI18n(c);
        return renderPage(
          c,
          <ErrorPage title={t('error.csrf.title')} message={t('error.csrf.message')} />,
          403,
        );
      },
    }),
  );

  // Every page's and action's permission, from the one table (routes/route_rules.ts).
  app.use(authorizeUi(deps));

  app.route('/', createLoginRoutes(deps));
  app.route('/account', createAccountRoutes(deps));
  app.get('/', (c) => c.redirect('/ui/links', 302));

  app.route('/api', createCheckFieldRoutes(deps));
  app.route('/', createUiExportRoutes(deps));
  app.route('/dashboard', createDashboardRoutes(deps));
  app.route('/links/new', createLinkNewRoutes(deps));
  app.route('/links', createLinkListRoutes(deps));
  app.route('/links', createLinkBulkRoutes(deps));
  app.route('/links', createLinkImportRoutes(deps));
  app.route('/links', createLinkQrRoutes(deps));
  app.route('/links', createQrPrintRoutes(deps));
  app.route('/links', createLinkDetailRoutes(deps));
  app.route('/ops/retarget', createRetargetUiRoutes(deps));
  app.route('/ops/wordpress', createWordPressUiRoutes(deps));
  app.route('/ops/webhooks', createWebhooksUiRoutes(deps));
  app.route('/ops', createOpsRoutes(deps));
  app.route('/reports', createReportsUiRoutes(deps));
  app.route('/destinations', createDestinationsUiRoutes(deps));
  app.route('/settings', createSettingsRoutes(deps));

  // Last: anything else under /ui is an HTML 404 (the app-wide notFound answers problem+json).
  app.all('*', (c) => {
    const { t } = getI18n(c);
    return renderPage(
      c,
      <ErrorPage title={t('error.pageNotFound.title')} message={t('error.pageNotFound.message')} />,
      404,
    );
  });
  app.onError((error, c) => {
    const { t } = getI18n(c);
    if (error instanceof NotFoundError && c.req.path.startsWith('/ui/links/')) {
      return renderPage(
        c,
        <ErrorPage title={t('error.linkNotFound.title')} message={t('error.linkNotFound.message')} />,
        404,
      );
    }
    if (error instanceof AppError && error.status < 500) {
      const title = error.status === 404 ? t('error.notFound.title') : t('error.request.title');
      const i18n = getI18n(c);
      return renderPage(
        c,
        <ErrorPage title={title} message={i18n.problem(error.message)} />,
        error.status as 404,
      );
    }
    deps.logger.error({ err: error, reqId: c.get('requestId'), path: c.req.path }, 'unhandled UI error');
    return renderPage(
      c,
      <ErrorPage title={t('error.failed.title')} message={t('error.failed.message')} />,
      503,
    );
  });
  return app;
}
