// The bulk change of links (ADR 0086): the confirmation page (the count, the action and its settings) and the
// run's page (progress, and the links it left alone with why). Both work as plain forms and links, without JS.
import type { UiSession } from '../lib/auth/sessions.ts';
import type { BulkChangeRow } from '../lib/links/bulk_change.ts';
import { AppLayout } from './AppLayout.tsx';
import { Badge } from './Badge.tsx';
import { BULK_FILTER_KEYS, BULK_UI_ACTIONS, bulkFilterField } from './bulk_fields.ts';
import { CsrfField, ErrorSummary, Notice, SelectField, TextField } from './Field.tsx';
import { DirIcon, useI18n } from './I18n.tsx';
import type { LinkFilters } from './LinksPage.tsx';
import { linksHref } from './LinksPage.tsx';

/** What the confirmation form holds (strings, as posted). */
export interface BulkFormValues {
  action: string;
  tag: string;
  expiresAt: string;
  reason: string;
}

/** /ui/links/bulk (POST from the list): what will change, on how many links, and the settings the action needs. */
export function BulkConfirmPage(props: {
  session: UiSession;
  /** Codes ticked on the list, or null when every link matching `filters` is selected. */
  codes: string[] | null;
  filters: Partial<LinkFilters>;
  count: number;
  values: BulkFormValues;
  errors: Record<string, string>;
  timeZone: string;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const number = (n: number) => i18n.number(n);
  const { values } = props;
  const backHref = linksHref(props.filters);
  return (
    <AppLayout title={t('bulk.title')} session={props.session} section="links">
      <div class="page-header">
        <div>
          <h1>{t('bulk.title')}</h1>
          <p class="muted">{t('bulk.lead')}</p>
        </div>
        <a class="btn btn-secondary" href={backHref}>
          <DirIcon glyph="←" /> {t('nav.links')}
        </a>
      </div>
      <ErrorSummary errors={props.errors} />
      {props.count === 0 ? (
        <Notice tone="warn" title={t('bulk.nothingSelected')}>
          <p>{t('bulk.nothingSelectedHint')}</p>
        </Notice>
      ) : (
        <Notice tone="info" title={t('bulk.count', { count: props.count, shown: number(props.count) })}>
          <p>{props.codes ? t('bulk.selectedByCode') : t('bulk.selectedByFilter')}</p>
        </Notice>
      )}
      <form method="post" action="/ui/links/bulk" class="card stack bulk-confirm">
        <CsrfField token={props.session.csrfToken} />
        <input type="hidden" name="step" value="apply" />
        {props.codes ? (
          props.codes.map((code) => <input key={code} type="hidden" name="code" value={code} />)
        ) : (
          <>
            <input type="hidden" name="all" value="1" />
            {BULK_FILTER_KEYS.map((k) =>
              props.filters[k] ? (
                <input key={k} type="hidden" name={bulkFilterField(k)} value={props.filters[k]} />
              ) : null,
            )}
          </>
        )}
        <SelectField
          name="action"
          label={t('bulk.action')}
          required
          value={values.action}
          error={props.errors.action}
          options={[
            { value: '', label: t('bulk.chooseAction') },
            ...BULK_UI_ACTIONS.map((a) => ({ value: a, label: t(`bulk.action.${a}`) })),
          ]}
        />
        <TextField
          name="tag"
          label={t('bulk.tag')}
          hint={t('bulk.tagHint')}
          value={values.tag}
          maxLength={64}
          dir="auto"
          error={props.errors.tag}
        />
        <TextField
          name="expiresAt"
          type="datetime-local"
          label={t('bulk.expiresAt')}
          hint={t('bulk.expiresAtHint', { zone: props.timeZone })}
          value={values.expiresAt}
          error={props.errors.expiresAt}
        />
        <TextField
          name="reason"
          label={t('bulk.reason')}
          hint={t('bulk.reasonHint')}
          value={values.reason}
          maxLength={500}
          dir="auto"
          error={props.errors.reason}
        />
        <p class="small muted">{t('bulk.postLinksNote')}</p>
        <div class="form-actions">
          <button type="submit" class="btn btn-primary" disabled={props.count === 0}>
            {t('bulk.apply', { count: props.count, shown: number(props.count) })}
          </button>
          <a class="btn btn-ghost" href={backHref}>
            {t('bulk.cancel')}
          </a>
        </div>
      </form>
    </AppLayout>
  );
}

const STATUS_TONE = { selecting: 'neutral', running: 'neutral', finished: 'good', failed: 'bad' } as const;

/** /ui/links/bulk/:id: a run's progress, and the links it left alone with why. */
export function BulkRunPage(props: {
  session: UiSession;
  run: BulkChangeRow;
  skippedSample: { code: string; problem: string | null }[];
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const number = (n: number) => i18n.number(n);
  const { run } = props;
  const done = run.applied + run.skipped;
  const percent = run.total > 0 ? Math.round((done / run.total) * 100) : run.status === 'finished' ? 100 : 0;
  const actionText =
    run.action === 'tag_add' || run.action === 'tag_remove'
      ? t(`bulk.run.${run.action}`, { tag: run.params.tag ?? '' })
      : run.action === 'expire'
        ? run.params.expiresAt
          ? t('bulk.run.expire', { at: i18n.dateTime(new Date(run.params.expiresAt)) })
          : t('bulk.run.expireClear')
        : t(`bulk.run.${run.action}`);
  return (
    <AppLayout title={t('bulk.run.title')} session={props.session} section="links">
      <div class="page-header">
        <div>
          <h1>{t('bulk.run.title')}</h1>
          <p class="muted">
            <bdi dir="auto">{actionText}</bdi>
          </p>
        </div>
        <a class="btn btn-secondary" href="/ui/links">
          <DirIcon glyph="←" /> {t('nav.links')}
        </a>
      </div>
      <section class="card stack" aria-labelledby="bulk-progress-title">
        <h2 id="bulk-progress-title">
          {t('bulk.run.progress')}{' '}
          <Badge tone={STATUS_TONE[run.status]} text={t(`bulk.status.${run.status}`)} />
        </h2>
        <progress max={100} value={percent} aria-label={t('bulk.run.progress')}>
          {percent}%
        </progress>
        <dl class="facts">
          <dt>{t('bulk.run.total')}</dt>
          <dd class="bulk-total">{number(run.total)}</dd>
          <dt>{t('bulk.run.applied')}</dt>
          <dd class="bulk-applied">{number(run.applied)}</dd>
          <dt>{t('bulk.run.skipped')}</dt>
          <dd class="bulk-skipped">{number(run.skipped)}</dd>
        </dl>
        {run.reason && (
          <p>
            {t('bulk.run.reason')} <bdi dir="auto">{run.reason}</bdi>
          </p>
        )}
        {(run.status === 'selecting' || run.status === 'running') && (
          <p class="small muted">
            {t('bulk.run.stillRunning')}{' '}
            <a href={`/ui/links/bulk/${encodeURIComponent(run.id)}`}>{t('bulk.run.refresh')}</a>
          </p>
        )}
        <p class="small muted">{t('bulk.run.propagation')}</p>
      </section>
      {props.skippedSample.length > 0 && (
        <section class="card" aria-labelledby="bulk-skipped-title">
          <h2 id="bulk-skipped-title">{t('bulk.run.skippedTitle')}</h2>
          <ul class="bulk-skipped-list">
            {props.skippedSample.map((s) => (
              <li key={s.code}>
                <a dir="ltr" href={`/ui/links/${encodeURIComponent(s.code)}`}>
                  {s.code}
                </a>
                {' — '}
                {s.problem === 'unchanged'
                  ? t('bulk.skip.unchanged')
                  : s.problem === 'deleted'
                    ? t('bulk.skip.deleted')
                    : i18n.problem(s.problem ?? '')}
              </li>
            ))}
          </ul>
        </section>
      )}
    </AppLayout>
  );
}
