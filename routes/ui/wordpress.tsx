import { type Context, Hono } from 'hono';
import { WordPressSitesPage } from '../../components/WordPressSitesPage.tsx';
import {
  listHolds,
  listReviewItems,
  listWordPressSiteStates,
  requestBreakerDecision,
  resolveReviewInputSchema,
  resolveReviewItem,
} from '../../lib/publishing/wordpress_admin.ts';
import { AppError } from '../../lib/shared/errors.ts';
import { toFieldErrors } from '../../lib/shared/validation.ts';
import { toFormValues } from '../../lib/ui/link_form.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

const DONE = ['approve', 'discard', 'resolved'] as const;

/** /ui/ops/wordpress (admins only): sites and their migration mode, breaker holds, the review list (ADR 0057). */
export function createWordPressUiRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();
  const actor = (c: Context<UiEnv>) => `user:${c.get('session')!.user.email}`;
  const page = async (
    c: Context<UiEnv>,
    notice?: { tone: 'good' | 'bad'; title: string },
    status: 200 | 409 | 422 | 503 = 200,
  ) =>
    renderPage(
      c,
      <WordPressSitesPage
        session={c.get('session')!}
        timeZone={c.get('timeZone')}
        sites={(await listWordPressSiteStates(deps.sql)).items}
        holds={(await listHolds(deps.sql, 'waiting')).items}
        reviews={(await listReviewItems(deps.sql, { status: 'open', limit: 200 })).items}
        notice={notice}
      />,
      status,
    );
  const refused = (c: Context<UiEnv>, error: unknown) => {
    if (!(error instanceof AppError) || error.status === 404) throw error;
    const i18n = c.get('i18n');
    const problems = error.extra.errors?.map((e) => `${e.path}: ${i18n.problem(e)}`) ?? [
      i18n.problem(error.message),
    ];
    return page(
      c,
      { tone: 'bad', title: i18n.t('ops.notDone', { problem: problems.join('; ') }) },
      error.status === 503 ? 503 : error.status === 422 ? 422 : 409,
    );
  };

  app.get('/', (c) => {
    const found = DONE.find((d) => d === c.req.query('done'));
    return page(c, found ? { tone: 'good', title: c.get('i18n').t(`wordpress.done.${found}`) } : undefined);
  });

  for (const action of ['approve', 'discard'] as const) {
    app.post(`/breaker/:id/${action}`, async (c) => {
      try {
        await requestBreakerDecision(deps, Number(c.req.param('id')), action, actor(c));
        return c.redirect(`/ui/ops/wordpress?done=${action}`, 303);
      } catch (error) {
        return refused(c, error);
      }
    });
  }

  app.post('/reviews/:id/resolve', async (c) => {
    const values = toFormValues(await c.req.parseBody());
    const parsed = resolveReviewInputSchema.safeParse({
      action: values.action,
      ...(values.code ? { code: values.code } : {}),
      ...(values.postId ? { postId: values.postId } : {}),
    });
    if (!parsed.success) {
      const i18n = c.get('i18n');
      const problems = toFieldErrors(parsed.error).map((e) => `${e.path}: ${i18n.problem(e)}`);
      return page(c, { tone: 'bad', title: i18n.t('ops.notDone', { problem: problems.join('; ') }) }, 422);
    }
    try {
      await resolveReviewItem(deps, Number(c.req.param('id')), parsed.data, actor(c));
      return c.redirect('/ui/ops/wordpress?done=resolved', 303);
    } catch (error) {
      return refused(c, error);
    }
  });

  return app;
}
