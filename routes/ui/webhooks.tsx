import { type Context, Hono } from 'hono';
import { WebhookDetailPage, type WebhookForm, WebhooksPage } from '../../components/WebhooksPage.tsx';
import { AppError, NotFoundError } from '../../lib/shared/errors.ts';
import { fieldProblem } from '../../lib/shared/field_problems.ts';
import { toFieldErrors } from '../../lib/shared/validation.ts';
import { toFieldMap, toFieldSentences } from '../../lib/ui/link_form.ts';
import {
  createEndpoint,
  createWebhookInputSchema,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  redeliver,
  rotateEndpointSecret,
  updateEndpoint,
} from '../../lib/webhooks/manage_webhooks.ts';
import { webhookManagementDepsOf } from '../api/webhooks.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

const DONE = ['enabled', 'disabled', 'deleted', 'redelivered'] as const;

/** /ui/ops/webhooks (admins only, CSRF like every form): endpoints, deliveries, "send again", rotation. */
export function createWebhooksUiRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();
  const manage = webhookManagementDepsOf(deps);
  const actor = (c: Context<UiEnv>) => `user:${c.get('session')!.user.email}`;
  const notice = (c: Context<UiEnv>) => {
    const found = DONE.find((d) => d === c.req.query('done'));
    return found ? { tone: 'good' as const, title: c.get('i18n').t(`webhooks.done.${found}`) } : undefined;
  };
  const idOf = (c: Context<UiEnv>) => {
    const id = Number(c.req.param('id'));
    if (!Number.isSafeInteger(id) || id <= 0)
      throw new NotFoundError(`No webhook endpoint ${c.req.param('id')}.`);
    return id;
  };
  const labels = (c: Context<UiEnv>): Record<string, string> => {
    const { t, locale } = c.get('i18n');
    return locale === 'en'
      ? {
          url: 'The endpoint URL',
          description: 'The description',
          eventTypes: 'Events',
          graceSeconds: 'The grace',
        }
      : {
          url: t('webhooks.field.url'),
          description: t('webhooks.field.description'),
          eventTypes: t('webhooks.field.events'),
          graceSeconds: t('webhooks.field.grace'),
        };
  };
  const list = async (c: Context<UiEnv>, form?: WebhookForm, status: 200 | 422 = 200, shown = notice(c)) => {
    if (form) form.errors = toFieldSentences(form.errors, labels(c), c.get('i18n'));
    return renderPage(
      c,
      <WebhooksPage
        session={c.get('session')!}
        endpoints={await listEndpoints(deps.sql)}
        form={form}
        notice={shown}
      />,
      status,
    );
  };
  const detail = async (
    c: Context<UiEnv>,
    id: number,
    extras: { secret?: string; graceError?: string } = {},
    status: 200 | 201 | 422 = 200,
  ) =>
    renderPage(
      c,
      <WebhookDetailPage
        session={c.get('session')!}
        endpoint={await getEndpoint(deps.sql, id)}
        deliveries={await listDeliveries(deps.sql, id, { limit: 50 })}
        secret={extras.secret}
        graceError={extras.graceError}
        notice={extras.secret ? { tone: 'good', title: c.get('i18n').t('webhooks.done.secret') } : notice(c)}
      />,
      status,
    );

  app.get('/', (c) => list(c));

  app.post('/', async (c) => {
    const body = await c.req.parseBody({ all: true });
    const eventTypes = [body.eventTypes ?? []].flat().filter((s): s is string => typeof s === 'string');
    const url = typeof body.url === 'string' ? body.url : '';
    const description = typeof body.description === 'string' ? body.description : '';
    const values = { url, description, eventTypes };
    const parsed = createWebhookInputSchema.safeParse(values);
    if (!parsed.success)
      return list(c, { values, errors: toFieldMap(toFieldErrors(parsed.error)) }, 422, undefined);
    try {
      const { endpoint, secret } = await createEndpoint(manage, parsed.data, actor(c));
      // The secret is in this answer only: the page that shows it is rendered, never redirected to.
      c.header('Cache-Control', 'no-store');
      return detail(c, endpoint.id, { secret }, 201);
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 422) throw error;
      return list(c, { values, errors: toFieldMap(error.extra.errors) }, 422, undefined);
    }
  });

  app.get('/:id', (c) => detail(c, idOf(c)));

  for (const [path, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    app.post(`/:id/${path}`, async (c) => {
      const id = idOf(c);
      await updateEndpoint(manage, id, { enabled }, actor(c));
      return c.redirect(`/ui/ops/webhooks/${id}?done=${enabled ? 'enabled' : 'disabled'}`, 303);
    });
  }

  app.post('/:id/delete', async (c) => {
    await deleteEndpoint(manage, idOf(c), actor(c));
    return c.redirect('/ui/ops/webhooks?done=deleted', 303);
  });

  app.post('/:id/rotate', async (c) => {
    const id = idOf(c);
    const body = await c.req.parseBody();
    const raw = typeof body.graceSeconds === 'string' ? body.graceSeconds.trim() : '';
    const grace = raw === '' ? undefined : Number(raw);
    if (grace !== undefined && (!Number.isInteger(grace) || grace < 0 || grace > 604_800)) {
      const i18n = c.get('i18n');
      const message = i18n.fieldSentence(
        labels(c).graceSeconds!,
        fieldProblem('maxNumber', { max: 604_800 }),
      );
      return detail(c, id, { graceError: message }, 422);
    }
    const { secret } = await rotateEndpointSecret(manage, id, { graceSeconds: grace }, actor(c));
    c.header('Cache-Control', 'no-store');
    return detail(c, id, { secret });
  });

  app.post('/:id/deliveries/:messageId/redeliver', async (c) => {
    const id = idOf(c);
    await redeliver(manage, id, c.req.param('messageId'), actor(c));
    return c.redirect(`/ui/ops/webhooks/${id}?done=redelivered`, 303);
  });

  return app;
}
