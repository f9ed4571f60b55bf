import { type Context, Hono } from 'hono';
import { RetargetDetailPage, RetargetListPage } from '../../components/RetargetPage.tsx';
import {
  getRetarget,
  listRetargets,
  requestRetarget,
  requestRetargetUndo,
  requiresSecondAdmin,
  steerRetarget,
} from '../../lib/retarget/request_retarget.ts';
import { retargetRequestSchema } from '../../lib/retarget/retarget_rule.ts';
import { AppError } from '../../lib/shared/errors.ts';
import { toFieldErrors } from '../../lib/shared/validation.ts';
import { toFormValues } from '../../lib/ui/link_form.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

const DONE = ['planned', 'approve', 'pause', 'resume', 'cancel', 'undo'] as const;

/** /ui/ops/retarget (admins only): plan, review, approve, pause, resume, cancel and undo mass retargets. */
export function createRetargetUiRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();
  const actor = (c: Context<UiEnv>) => `user:${c.get('session')!.user.email}`;
  const list = async (
    c: Context<UiEnv>,
    extra: { values?: Record<string, string>; errors?: string[] } = {},
    status: 200 | 422 | 503 = 200,
  ) =>
    renderPage(
      c,
      <RetargetListPage
        session={c.get('session')!}
        timeZone={c.get('timeZone')}
        runs={await listRetargets(deps.sql)}
        {...extra}
      />,
      status,
    );

  app.get('/', (c) => list(c));

  app.post('/', async (c) => {
    const values = toFormValues(await c.req.parseBody());
    const type = values.type ?? 'prefix';
    const rule =
      type === 'regex'
        ? {
            type,
            pattern: values.pattern ?? '',
            replacement: values.replacement ?? '',
            flags: values.ignoreCase === 'yes' ? 'i' : '',
          }
        : type === 'csv'
          ? { type, csv: values.csv ?? '' }
          : { type, from: values.from ?? '', to: values.to ?? '' };
    const parsed = retargetRequestSchema.safeParse({
      rule,
      ...(values.excludeWordPress === 'yes' ? { scope: { excludeWordPress: true } } : {}),
    });
    if (!parsed.success) {
      return list(
        c,
        {
          values,
          errors: toFieldErrors(parsed.error).map((e) => `${e.path}: ${c.get('i18n').problem(e)}`),
        },
        422,
      );
    }
    try {
      const run = await requestRetarget(deps, parsed.data, actor(c));
      return c.redirect(`/ui/ops/retarget/${run.id}?done=planned`, 303);
    } catch (error) {
      if (error instanceof AppError && error.status < 600) {
        const i18n = c.get('i18n');
        const errors = error.extra.errors?.map((e) => `${e.path}: ${i18n.problem(e)}`) ?? [
          i18n.problem(error.message),
        ];
        return list(c, { values, errors }, error.status === 503 ? 503 : 422);
      }
      throw error;
    }
  });

  app.get('/:id', async (c) => {
    const run = await getRetarget(deps.sql, c.req.param('id'));
    const found = DONE.find((d) => d === c.req.query('done'));
    const done = found ? c.get('i18n').t(`retarget.done.${found}`) : undefined;
    return renderPage(
      c,
      <RetargetDetailPage
        session={c.get('session')!}
        timeZone={c.get('timeZone')}
        run={run}
        secondAdmin={requiresSecondAdmin(deps)}
        notice={done ? { tone: 'good', title: done } : undefined}
      />,
    );
  });

  for (const action of ['approve', 'pause', 'resume', 'cancel', 'undo'] as const) {
    app.post(`/:id/${action}`, async (c) => {
      const id = c.req.param('id');
      try {
        if (action === 'undo') {
          const undo = await requestRetargetUndo(deps, id, actor(c));
          return c.redirect(`/ui/ops/retarget/${undo.id}?done=undo`, 303);
        }
        await steerRetarget(deps, id, action, actor(c));
        return c.redirect(`/ui/ops/retarget/${id}?done=${action}`, 303);
      } catch (error) {
        if (!(error instanceof AppError) || error.status === 404) throw error;
        const run = await getRetarget(deps.sql, id);
        return renderPage(
          c,
          <RetargetDetailPage
            session={c.get('session')!}
            timeZone={c.get('timeZone')}
            run={run}
            secondAdmin={requiresSecondAdmin(deps)}
            notice={{
              tone: 'bad',
              title: c.get('i18n').t('ops.notDone', { problem: c.get('i18n').problem(error.message) }),
            }}
          />,
          error.status === 503 || error.status === 403 ? error.status : 409,
        );
      }
    });
  }

  return app;
}
