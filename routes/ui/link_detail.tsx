import { type Context, Hono } from 'hono';
import { ErrorPage } from '../../components/ErrorPage.tsx';
import { LinkDetailPage } from '../../components/LinkDetailPage.tsx';
import { STATS_RANGES, type StatsWindow } from '../../components/link_detail/ClicksCard.tsx';
import { getLinkFieldLabels } from '../../components/link_fields.ts';
import { requestDestinationArchive } from '../../lib/archive/request_destination_archive.ts';
import { getLinkStats, STATS_MAX_DAYS } from '../../lib/clicks/link_stats.ts';
import { getLinkDestinationState } from '../../lib/destinations/destination_state.ts';
import type { I18n } from '../../lib/i18n/translator.ts';
import { deleteLink } from '../../lib/links/delete_link.ts';
import { editLink } from '../../lib/links/edit_link.ts';
import { getLinkRowOrThrow, listLinkVendors } from '../../lib/links/get_link.ts';
import type { StoredLink as LinkRow } from '../../lib/links/link.ts';
import { toUiLink, updateLinkInputSchema } from '../../lib/links/link.ts';
import { listLinkHistory } from '../../lib/links/link_history.ts';
import { isPostLinkLocked, POST_DECIDED_FIELDS } from '../../lib/links/post_link_rules.ts';
import { getOpenReportSummary } from '../../lib/safety/moderate_reports.ts';
import { AppError, PreconditionFailedError } from '../../lib/shared/errors.ts';
import { fieldProblem } from '../../lib/shared/field_problems.ts';
import { toFieldErrors } from '../../lib/shared/validation.ts';
import {
  type FormValues,
  toFieldMap,
  toFieldSentences,
  toFormValues,
  toLinkInput,
} from '../../lib/ui/link_form.ts';
import {
  applyRuleOp,
  type RuleRow,
  toRuleFieldMap,
  toRuleRows,
  toRulesInput,
} from '../../lib/ui/rules_form.ts';
import { defaultStatsWindow, parseStatsWindow } from '../../lib/ui/stats_window.ts';
import { toLocalInput } from '../../lib/ui/time_zone.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

const DAY_MS = 86_400_000;
type Notice = { tone: 'good' | 'warn' | 'bad' | 'info'; title: string; text?: string };

/** The notice after a redirect back to the page (`?created=1`, `?saved=1`…), in the editor's language. */
function noticeFor(t: I18n['t'], q: Record<string, string>): Notice | undefined {
  if (q.sync === 'deferred')
    return { tone: 'warn', title: t('notice.deferred.title'), text: t('notice.deferred.text') };
  if (q.created) return { tone: 'good', title: t('notice.created.title'), text: t('notice.created.text') };
  if (q.existing) return { tone: 'info', title: t('notice.existing.title'), text: t('notice.existing.text') };
  if (q.saved) return { tone: 'good', title: t('notice.saved.title'), text: t('notice.saved.text') };
  if (q.unchanged)
    return { tone: 'info', title: t('notice.unchanged.title'), text: t('notice.unchanged.text') };
  return undefined;
}

/** The edit form's values for a link as stored. */
function toEditValues(row: LinkRow, i18n: I18n): FormValues {
  const timeZone = i18n.timeZone;
  const expiresAt = row.expiresAt ? toLocalInput(row.expiresAt, timeZone) : '';
  return {
    url: row.targetUrl,
    title: row.title ?? '',
    status: row.status === 'active' || row.status === 'gone' ? row.status : '',
    redirectStatus: row.redirectStatus ? String(row.redirectStatus) : '',
    expiresAt,
    // The form shows minutes; the original lets an untouched field keep its seconds.
    expiresAtShown: expiresAt,
    expiredUrl: row.expiredUrl ?? '',
    tags: row.tags.join(i18n.t('common.listSeparator')),
    utmCampaign: row.utmCampaign ?? '',
    utmSource: row.utmSource ?? '',
    utmMedium: row.utmMedium ?? '',
    reason: '',
  };
}

/** Labels for the rules editor's errors: each row field named with its rule's number. */
function ruleFieldLabels(i18n: I18n): Record<string, string> {
  const labels: Record<string, string> = { rules: i18n.t('rules.title') };
  for (let i = 0; i < 12; i++) {
    const rule = i18n.t('rules.rule', { n: i + 1 });
    labels[`rules.${i}.kind`] = `${rule}: ${i18n.t('rules.kind')}`;
    labels[`rules.${i}.values`] = `${rule}: ${i18n.t('rules.values')}`;
    labels[`rules.${i}.target`] = `${rule}: ${i18n.t('rules.target')}`;
  }
  return labels;
}

/** /ui/links/:code: the link's page, and the edit and delete forms on it. */
export function createLinkDetailRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();

  const loadLink = (code: string): Promise<LinkRow> => getLinkRowOrThrow(deps.sql, code);

  async function render(
    c: Context<UiEnv>,
    row: LinkRow,
    options: {
      notice?: Notice;
      edit?: { values: FormValues; errors: Record<string, string> };
      rules?: { rows: RuleRow[]; errors: Record<string, string> };
      deleteError?: string;
      days?: number;
      /** Stats over the editor's own dates (from, to), instead of the last `days` days. */
      window?: { from: string; to: string; range: { from: Date; to: Date } | null; error?: string };
      status?: 200 | 403 | 409 | 412 | 422;
    } = {},
  ) {
    const days = options.days ?? 30;
    const now = new Date();
    const range = options.window?.range ?? { from: new Date(now.getTime() - days * DAY_MS), to: now };
    const statsWindow: StatsWindow = options.window
      ? {
          from: options.window.from,
          to: options.window.to,
          custom: true,
          ...(options.window.error ? { error: options.window.error } : {}),
        }
      : { ...defaultStatsWindow(days, c.get('timeZone'), now), custom: false };
    const [vendors, stats, audit, readerReports, destinationState] = await Promise.all([
      listLinkVendors(deps.sql, row.code),
      getLinkStats(deps.sql, row.code, range, deps.vendorClicks),
      listLinkHistory(deps.sql, row.code, 200),
      getOpenReportSummary(deps.sql, row.code),
      getLinkDestinationState(deps.sql, row.code),
    ]);
    const query = `LifelineCode="${row.code}"`;
    const { uiUrl, namespace } = deps.config.temporal;
    return renderPage(
      c,
      <LinkDetailPage
        session={c.get('session')!}
        link={toUiLink(row, deps.config, vendors)}
        row={row}
        stats={stats}
        days={days}
        statsWindow={statsWindow}
        audit={audit}
        temporal={{
          url: uiUrl
            ? `${uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows?query=${encodeURIComponent(query)}`
            : null,
          query,
        }}
        timeZone={c.get('timeZone')}
        notice={options.notice}
        edit={
          options.edit
            ? {
                values: options.edit.values,
                errors: toFieldSentences(
                  options.edit.errors,
                  getLinkFieldLabels(c.get('i18n')),
                  c.get('i18n'),
                ),
              }
            : { values: toEditValues(row, c.get('i18n')), errors: {} }
        }
        rules={
          options.rules
            ? {
                rows: options.rules.rows,
                errors: toFieldSentences(options.rules.errors, ruleFieldLabels(c.get('i18n')), c.get('i18n')),
              }
            : { rows: toRuleRows(row.routingRules, c.get('i18n').t('common.listSeparator')), errors: {} }
        }
        deleteError={options.deleteError}
        postLocked={isPostLinkLocked(row, c.get('session')!.user.role === 'admin')}
        readerReports={readerReports}
        deploymentUtm={deps.config.redirect.utmParams}
        destinationState={destinationState}
      />,
      options.status ?? 200,
    );
  }

  app.get('/:code', async (c) => {
    const row = await loadLink(c.req.param('code'));
    const q = c.req.query();
    const days = STATS_RANGES.find((d) => String(d) === q.days) ?? 30;
    const notice = noticeFor(c.get('i18n').t, q);
    if (q.from !== undefined || q.to !== undefined) {
      // Any dates: validated here; a refused window shows the form's problem and the default stats.
      const from = (q.from ?? '').slice(0, 32);
      const to = (q.to ?? '').slice(0, 32);
      const parsed = parseStatsWindow(from, to, c.get('timeZone'), STATS_MAX_DAYS);
      const i18n = c.get('i18n');
      const chosen =
        'range' in parsed
          ? { from, to, range: parsed.range }
          : {
              from,
              to,
              range: null,
              error: i18n.fieldSentence(
                i18n.t(parsed.field === 'from' ? 'detail.rangeFrom' : 'detail.rangeTo'),
                parsed.problem,
              ),
            };
      return render(c, row, {
        days,
        window: chosen,
        ...(notice ? { notice } : {}),
        ...('range' in parsed ? {} : { status: 422 as const }),
      });
    }
    return render(c, row, { days, ...(notice ? { notice } : {}) });
  });

  app.post('/:code/edit', async (c) => {
    const session = c.get('session')!;
    const code = c.req.param('code');
    const row = await loadLink(code);
    const values = toFormValues(await c.req.parseBody());
    const { input, errors } = toLinkInput(values, c.get('timeZone'), 'edit');
    // An untouched expiry keeps its exact stored time (the form only shows minutes).
    if (values.expiresAt && values.expiresAt === values.expiresAtShown) delete input.expiresAt;
    // An untouched title is kept as it is, even one WordPress sent longer than an editor may type.
    if (typeof input.title === 'string' && input.title.trim() === row.title) delete input.title;
    // The fields an editor may not change on an article's link are disabled, so a browser does not send them:
    // absent means unchanged (a forged form that sends them is refused by editLink, field by field).
    const mayManagePostLinks = session.user.role === 'admin';
    if (isPostLinkLocked(row, mayManagePostLinks)) {
      for (const field of POST_DECIDED_FIELDS) if (values[field] === undefined) delete input[field];
    }
    if (!input.reason) errors.push({ path: 'reason', message: fieldProblem('reasonMissing') });
    const parsed = updateLinkInputSchema.safeParse(input);
    const fieldErrors = [...errors, ...(parsed.success ? [] : toFieldErrors(parsed.error))];
    if (!parsed.success || fieldErrors.length > 0) {
      return render(c, row, { edit: { values, errors: toFieldMap(fieldErrors) }, status: 422 });
    }
    const version = Number(values.version);
    try {
      const result = await editLink(deps, code, parsed.data, `user:${session.user.email}`, {
        ...(Number.isSafeInteger(version) && version > 0 ? { expectedVersion: version } : {}),
        mayManagePostLinks,
      });
      const path = `/ui/links/${encodeURIComponent(code)}`;
      if (!result.changed) return c.redirect(`${path}?unchanged=1`, 303);
      if (parsed.data.url !== undefined) await requestDestinationArchive(deps, code);
      return c.redirect(`${path}?saved=1${result.sync === 'deferred' ? '&sync=deferred' : ''}`, 303);
    } catch (error) {
      if (error instanceof PreconditionFailedError) {
        const fresh = await loadLink(code);
        const { t } = c.get('i18n');
        return render(c, fresh, {
          notice: { tone: 'warn', title: t('notice.conflict.title'), text: t('notice.conflict.text') },
          edit: { values: { ...values, version: String(fresh.version) }, errors: {} },
          status: 409,
        });
      }
      if (error instanceof AppError && (error.status === 422 || error.status === 403)) {
        return render(c, row, {
          edit: { values, errors: toFieldMap(error.extra.errors) },
          status: error.status,
        });
      }
      throw error;
    }
  });

  app.post('/:code/rules', async (c) => {
    const session = c.get('session')!;
    const code = c.req.param('code');
    const row = await loadLink(code);
    const form = toFormValues(await c.req.parseBody());
    const rows = applyRuleOp(form, form.op);
    const parsed = updateLinkInputSchema.safeParse({ rules: toRulesInput(rows) });
    if (!parsed.success) {
      return render(c, row, {
        rules: { rows, errors: toRuleFieldMap(toFieldErrors(parsed.error)) },
        status: 422,
      });
    }
    const version = Number(form.version);
    const path = `/ui/links/${encodeURIComponent(code)}`;
    try {
      const result = await editLink(deps, code, parsed.data, `user:${session.user.email}`, {
        ...(Number.isSafeInteger(version) && version > 0 ? { expectedVersion: version } : {}),
        mayManagePostLinks: session.user.role === 'admin',
      });
      if (!result.changed) return c.redirect(`${path}?unchanged=1#rules`, 303);
      return c.redirect(`${path}?saved=1${result.sync === 'deferred' ? '&sync=deferred' : ''}#rules`, 303);
    } catch (error) {
      if (error instanceof PreconditionFailedError) {
        const fresh = await loadLink(code);
        const { t } = c.get('i18n');
        return render(c, fresh, {
          notice: { tone: 'warn', title: t('notice.conflict.title'), text: t('notice.conflict.text') },
          rules: { rows, errors: {} },
          status: 409,
        });
      }
      if (error instanceof AppError && (error.status === 422 || error.status === 403)) {
        return render(c, row, {
          rules: { rows, errors: toRuleFieldMap(error.extra.errors ?? []) },
          status: error.status,
        });
      }
      throw error;
    }
  });

  app.post('/:code/delete', async (c) => {
    const session = c.get('session')!;
    const code = c.req.param('code');
    const row = await loadLink(code);
    const form = toFormValues(await c.req.parseBody());
    if ((form.confirm ?? '').trim() !== code) {
      return render(c, row, {
        deleteError: c.get('i18n').t('detail.deleteConfirmWrong', { code }),
        status: 422,
      });
    }
    await deleteLink(deps, code, `user:${session.user.email}`, form.reason?.trim().slice(0, 500) || null, {
      mayManagePostLinks: session.user.role === 'admin',
    });
    return c.redirect(`/ui/links?deleted=${encodeURIComponent(code)}`, 303);
  });

  return app;
}

/** The UI's 404 page for a link that does not exist (or was deleted). */
export function renderLinkNotFound(c: Context<UiEnv>) {
  const { t } = c.get('i18n');
  return renderPage(
    c,
    <ErrorPage title={t('error.linkNotFound.title')} message={t('error.linkNotFound.message')} />,
    404,
  );
}
