import { type Context, Hono } from 'hono';
import { BulkConfirmPage, type BulkFormValues, BulkRunPage } from '../../components/BulkChangePages.tsx';
import { BULK_FILTER_KEYS, bulkFilterField } from '../../components/bulk_fields.ts';
import type { LinkFilters } from '../../components/LinksPage.tsx';
import {
  BULK_MAX_CODES,
  bulkChangeInputSchema,
  countBulkSelection,
  getBulkChangeView,
  requestBulkChange,
  toBulkSelection,
} from '../../lib/links/bulk_change.ts';
import { linkListQuerySchema } from '../../lib/links/list_links.ts';
import { AppError, type FieldError } from '../../lib/shared/errors.ts';
import { fieldProblem } from '../../lib/shared/field_problems.ts';
import { toFieldErrors } from '../../lib/shared/validation.ts';
import { toFieldMap } from '../../lib/ui/link_form.ts';
import { fromLocalInput } from '../../lib/ui/time_zone.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

const one = (v: unknown): string => (typeof v === 'string' ? v : Array.isArray(v) ? one(v[0]) : '');

/**
 * /ui/links/bulk: the list's bulk bar posts the ticked codes (or "all matching" with the list's filters) and an
 * action here; the confirmation page shows the count and asks for the action's settings; confirmed, the run is
 * recorded and started (lib/links/bulk_change.ts) and its page shows the progress. Guarded as every /ui/links
 * page is (signed-in editors; an editor's run skips WordPress articles' links, an administrator's does not).
 */
export function createLinkBulkRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();

  app.post('/bulk', async (c) => {
    const session = c.get('session')!;
    const i18n = c.get('i18n');
    const body = await c.req.parseBody({ all: true });
    const codes = [body.code ?? []].flat().filter((v): v is string => typeof v === 'string' && v !== '');
    const all = one(body.all) === '1';
    const filters: Partial<LinkFilters> = {};
    for (const k of BULK_FILTER_KEYS) {
      const value = one(body[bulkFilterField(k)]);
      if (value) filters[k] = value.slice(0, 200);
    }
    const values: BulkFormValues = {
      action: one(body.action),
      tag: one(body.tag).trim(),
      expiresAt: one(body.expiresAt),
      reason: one(body.reason).trim(),
    };
    const errors: FieldError[] = [];
    // The list's filters are read as the list reads them; a filter it would refuse selects nothing.
    const filterParsed = linkListQuerySchema.safeParse(filters);
    if (all && !filterParsed.success) errors.push(...toFieldErrors(filterParsed.error));
    if (!all && codes.length > BULK_MAX_CODES)
      errors.push({ path: 'code', message: fieldProblem('maxNumber', { max: BULK_MAX_CODES }) });
    const selection = all
      ? filterParsed.success
        ? toBulkSelection({ filter: filterParsed.data })
        : { codes: [] }
      : { codes: [...new Set(codes)].slice(0, BULK_MAX_CODES) };
    const count = await countBulkSelection(deps.sql, selection);

    const render = (fieldErrors: FieldError[], status: 200 | 403 | 422 | 503) =>
      renderPage(
        c,
        <BulkConfirmPage
          session={session}
          codes={all ? null : 'codes' in selection ? selection.codes : []}
          filters={filters}
          count={count}
          values={values}
          errors={Object.fromEntries(
            Object.entries(toFieldMap(fieldErrors)).map(([field, problem]) => [
              field,
              i18n.fieldSentence(i18n.t(`bulk.field.${bulkField(field)}`), problem),
            ]),
          )}
          timeZone={c.get('timeZone')}
        />,
        status,
      );

    if (one(body.step) !== 'apply' || errors.length > 0 || count === 0)
      return render(errors, errors.length > 0 ? 422 : 200);

    let expiresAt: string | null | undefined;
    if (values.action === 'expire') {
      if (values.expiresAt === '') expiresAt = null;
      else {
        const at = fromLocalInput(values.expiresAt, c.get('timeZone'));
        if (!at) return render([{ path: 'expiresAt', message: fieldProblem('dateTime') }], 422);
        expiresAt = at.toISOString();
      }
    }
    const input = {
      action: values.action,
      ...((values.action === 'tag_add' || values.action === 'tag_remove') && values.tag
        ? { tag: values.tag }
        : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      ...(values.reason ? { reason: values.reason } : {}),
      ...('codes' in selection ? { codes: selection.codes } : { filter: filters }),
    };
    const parsed = bulkChangeInputSchema.safeParse(input);
    if (!parsed.success) return render(toFieldErrors(parsed.error), 422);
    try {
      const run = await requestBulkChange(deps, parsed.data, {
        actor: `user:${session.user.email}`,
        mayManagePostLinks: session.user.role === 'admin',
      });
      return c.redirect(`/ui/links/bulk/${encodeURIComponent(run.id)}`, 303);
    } catch (error) {
      if (error instanceof AppError && error.status === 422) return render(error.extra.errors ?? [], 422);
      throw error;
    }
  });

  app.get('/bulk/:id', async (c: Context<UiEnv>) => {
    const { run, skippedSample } = await getBulkChangeView(deps.sql, c.req.param('id') ?? '');
    return renderPage(c, <BulkRunPage session={c.get('session')!} run={run} skippedSample={skippedSample} />);
  });

  return app;
}

/** The confirmation form's field a problem belongs to (a filter's problem is the selection's). */
function bulkField(path: string): 'action' | 'tag' | 'expiresAt' | 'reason' | 'selection' {
  const field = path.split('.')[0];
  return field === 'action' || field === 'tag' || field === 'expiresAt' || field === 'reason'
    ? field
    : 'selection';
}
