import { type Context, Hono } from 'hono';
import { DestinationsPage } from '../../components/DestinationsPage.tsx';
import { requestDestinationArchive } from '../../lib/archive/request_destination_archive.ts';
import { applyProposedRetarget } from '../../lib/destinations/apply_proposed_retarget.ts';
import type { DestinationListState } from '../../lib/destinations/list_destinations.ts';
import { destinationQuerySchema, listDestinationsPage } from '../../lib/destinations/list_destinations.ts';
import { AppError } from '../../lib/shared/errors.ts';
import { toFormValues } from '../../lib/ui/link_form.ts';
import type { WebDeps } from '../app_env.ts';
import { getI18n, renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

type Notice = { tone: 'good' | 'warn' | 'bad' | 'info'; title: string; text?: string };

/** /ui/destinations: the queue of dead destinations; applying a proposed retarget is a CSRF-protected form post. */
export function createDestinationsUiRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();

  async function render(
    c: Context<UiEnv>,
    state: DestinationListState,
    cursor?: string,
    notice?: Notice,
    code = 200,
  ) {
    const query = destinationQuerySchema.safeParse({ state, ...(cursor ? { cursor } : {}) });
    let page: Awaited<ReturnType<typeof listDestinationsPage>> = { items: [], nextCursor: null };
    if (query.success) {
      try {
        page = await listDestinationsPage(deps.sql, deps.config.shortBaseUrl, query.data);
      } catch (error) {
        // A cursor this server did not issue: the first page.
        if (!(error instanceof AppError && error.status === 400)) throw error;
        page = await listDestinationsPage(deps.sql, deps.config.shortBaseUrl, {
          ...query.data,
          cursor: undefined,
        });
      }
    }
    return renderPage(
      c,
      <DestinationsPage
        session={c.get('session')!}
        state={state}
        items={page.items}
        nextCursor={page.nextCursor}
        notice={notice}
      />,
      code as 200,
    );
  }

  const stateOf = (value: string | undefined): DestinationListState => {
    const parsed = destinationQuerySchema.shape.state.safeParse(value ?? 'dead');
    return parsed.success ? parsed.data : 'dead';
  };

  app.get('/', async (c) => {
    const q = c.req.query();
    const { t } = getI18n(c);
    const notice: Notice | undefined =
      q.done === 'retarget' && q.code && q.url
        ? {
            tone: 'good',
            title: t('destinations.done.retarget'),
            text: t('destinations.done.retargetText', { code: q.code, url: q.url }),
          }
        : undefined;
    return render(c, stateOf(q.state), q.cursor, notice);
  });

  app.post('/:code/retarget', async (c) => {
    const session = c.get('session')!;
    const form = toFormValues(await c.req.parseBody());
    const state = stateOf(form.state);
    try {
      const { link } = await applyProposedRetarget(deps, {
        code: c.req.param('code'),
        actor: `user:${session.user.email}`,
        mayManagePostLinks: session.user.role === 'admin',
      });
      await requestDestinationArchive(deps, link.code);
      const back = new URLSearchParams({
        ...(state === 'dead' ? {} : { state }),
        done: 'retarget',
        code: link.code,
        url: link.targetUrl,
      });
      return c.redirect(`/ui/destinations?${back}`, 303);
    } catch (error) {
      if (error instanceof AppError && error.status >= 400 && error.status < 500) {
        const first = error.extra.errors?.[0];
        const title = first
          ? `${first.path} ${getI18n(c).problem(first.message)}`
          : getI18n(c).problem(error.message);
        return render(c, state, undefined, { tone: 'warn', title }, error.status);
      }
      throw error;
    }
  });

  return app;
}
