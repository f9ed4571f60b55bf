import { type Context, Hono } from 'hono';
import { getLinkFieldLabels } from '../../components/link_fields.ts';
import { NewLinkPage } from '../../components/NewLinkPage.tsx';
import { requestDestinationArchive } from '../../lib/archive/request_destination_archive.ts';
import { createLink } from '../../lib/links/create_link.ts';
import { createLinkInputSchema } from '../../lib/links/link.ts';
import { syncAfterChange } from '../../lib/propagation/sync_after_change.ts';
import { getClientIp } from '../../lib/shared/client_ip.ts';
import { AppError, RateLimitedError } from '../../lib/shared/errors.ts';
import { toFieldErrors } from '../../lib/shared/validation.ts';
import {
  type FormValues,
  toFieldMap,
  toFieldSentences,
  toFormValues,
  toLinkInput,
} from '../../lib/ui/link_form.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

/** GET/POST /ui/links/new: the create form (works without JavaScript; islands add live checks). */
export function createLinkNewRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();

  const form = (
    c: Context<UiEnv>,
    values: FormValues,
    errors: Record<string, string>,
    status: 200 | 409 | 422 | 429 = 200,
  ) =>
    renderPage(
      c,
      <NewLinkPage
        session={c.get('session')!}
        values={values}
        errors={toFieldSentences(errors, getLinkFieldLabels(c.get('i18n')), c.get('i18n'))}
        shortBase={deps.config.shortBaseUrl}
        shortDomains={deps.config.shortDomains}
        timeZone={c.get('timeZone')}
        deploymentUtm={deps.config.redirect.utmParams}
      />,
      status,
    );

  app.get('/', (c) => form(c, {}, {}));

  app.post('/', async (c) => {
    const session = c.get('session')!;
    const values = toFormValues(await c.req.parseBody());
    const { input, errors } = toLinkInput(values, c.get('timeZone'), 'create');
    const parsed = createLinkInputSchema.safeParse(input);
    const fieldErrors = [...errors, ...(parsed.success ? [] : toFieldErrors(parsed.error))];
    if (!parsed.success || fieldErrors.length > 0) return form(c, values, toFieldMap(fieldErrors), 422);
    const subject = `user:${session.user.id}`;
    try {
      // Per user, and per client network whoever is signed in (several accounts behind one address).
      await deps.rateLimits.consumeCreationsFromIp(getClientIp(c, deps.config.trustedClientIpHeader));
      await deps.rateLimits.consumeCreations(subject);
      const { link, created } = await createLink(
        {
          sql: deps.sql,
          codeLength: deps.config.codeLength,
          targetPolicy: deps.targetPolicy,
          safety: deps.safety,
          domains: deps.config,
        },
        parsed.data,
        { owner: subject, actor: `user:${session.user.email}`, origin: 'ui' },
      );
      // A link on another short domain is named by its key, `{domain}/{code}`, one encoded segment (ADR 0078).
      const path = `/ui/links/${encodeURIComponent(link.code)}`;
      if (!created) return c.redirect(`${path}?existing=1`, 303);
      const sync = await syncAfterChange(deps, link.code, `link.created by user:${session.user.email}`);
      await requestDestinationArchive(deps, link.code);
      return c.redirect(`${path}?created=1${sync === 'deferred' ? '&sync=deferred' : ''}`, 303);
    } catch (error) {
      if (error instanceof RateLimitedError) {
        const seconds = Number(error.extra.retryAfter);
        return form(c, values, { form: c.get('i18n').t('form.tooFast', { seconds }) }, 429);
      }
      if (error instanceof AppError && (error.status === 409 || error.status === 422)) {
        const errs = error.extra.errors ?? [{ path: 'form', message: error.message }];
        return form(c, values, toFieldMap(errs), error.status as 409);
      }
      throw error;
    }
  });

  return app;
}
