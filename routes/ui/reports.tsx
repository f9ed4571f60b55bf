import { type Context, Hono } from 'hono';
import { ReportsPage } from '../../components/ReportsPage.tsx';
import {
  listReportQueuePage,
  type ReportStatus,
  reportQueueQuerySchema,
  resolveReports,
  resolveReportsInputSchema,
} from '../../lib/safety/moderate_reports.ts';
import { AppError } from '../../lib/shared/errors.ts';
import { toFormValues } from '../../lib/ui/link_form.ts';
import type { WebDeps } from '../app_env.ts';
import { getI18n, renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

type Notice = { tone: 'good' | 'warn' | 'bad' | 'info'; title: string; text?: string };

/** The notice after a decision, by its action. */
function doneNotice(c: Context<UiEnv>, action: string | undefined): Notice | undefined {
  const { t } = getI18n(c);
  if (action === 'dismiss')
    return { tone: 'good', title: t('reports.done.dismiss'), text: t('reports.done.dismissText') };
  if (action === 'confirm')
    return { tone: 'good', title: t('reports.done.confirm'), text: t('reports.done.confirmText') };
  if (action === 'ignore')
    return { tone: 'info', title: t('reports.done.ignore'), text: t('reports.done.ignoreText') };
  return undefined;
}

/** /ui/reports (administrators): the moderation queue; each decision is a CSRF-protected form post. */
export function createReportsUiRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();

  async function render(
    c: Context<UiEnv>,
    status: ReportStatus,
    cursor?: string,
    notice?: Notice,
    code = 200,
  ) {
    const query = reportQueueQuerySchema.safeParse({ status, ...(cursor ? { cursor } : {}) });
    const page = query.success
      ? await listReportQueuePage(deps.sql, deps.config.shortBaseUrl, query.data)
      : { items: [], nextCursor: null };
    return renderPage(
      c,
      <ReportsPage
        session={c.get('session')!}
        status={status}
        items={page.items}
        nextCursor={page.nextCursor}
        notice={notice}
      />,
      code as 200,
    );
  }

  const statusOf = (value: string | undefined): ReportStatus => {
    const parsed = reportQueueQuerySchema.shape.status.safeParse(value ?? 'open');
    return parsed.success ? parsed.data : 'open';
  };

  app.get('/', async (c) => {
    const q = c.req.query();
    return render(c, statusOf(q.status), q.cursor, doneNotice(c, q.done));
  });

  app.post('/:code', async (c) => {
    const session = c.get('session')!;
    const form = toFormValues(await c.req.parseBody());
    const status = statusOf(form.status);
    const parsed = resolveReportsInputSchema.safeParse({
      action: form.action,
      ...(form.note?.trim() ? { note: form.note } : {}),
    });
    if (!parsed.success) {
      return render(c, status, undefined, { tone: 'bad', title: getI18n(c).t('reports.choose') }, 422);
    }
    try {
      await resolveReports(deps, {
        code: c.req.param('code'),
        ...parsed.data,
        actor: `user:${session.user.email}`,
      });
    } catch (error) {
      if (error instanceof AppError && (error.status === 404 || error.status === 409)) {
        return render(
          c,
          status,
          undefined,
          { tone: 'warn', title: getI18n(c).problem(error.message) },
          error.status,
        );
      }
      throw error;
    }
    const back = new URLSearchParams({ ...(status === 'open' ? {} : { status }), done: parsed.data.action });
    return c.redirect(`/ui/reports?${back}`, 303);
  });

  return app;
}
