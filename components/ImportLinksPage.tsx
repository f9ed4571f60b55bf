// /ui/links/import: a CSV file of new links, tried first (every row's outcome, nothing kept), then imported.
import type { UiSession } from '../lib/auth/sessions.ts';
import type { ImportOutcome } from '../lib/links/import_links.ts';
import { AppLayout } from './AppLayout.tsx';
import { Badge } from './Badge.tsx';
import { CsrfField, Notice } from './Field.tsx';
import { DirIcon, useI18n } from './I18n.tsx';

const TONE = { create: 'good', existing: 'neutral', error: 'bad' } as const;

export function ImportLinksPage(props: {
  session: UiSession;
  /** The file's problem (it cannot be read at all), already a sentence. */
  fileError?: string | undefined;
  /** After a dry run or an import: each row's outcome. */
  outcomes?: ImportOutcome[] | undefined;
  /** The file's text, carried from the dry run to the import. */
  csv?: string | undefined;
  imported?: boolean | undefined;
  maxRows: number;
  maxMiB: number;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const outcomes = props.outcomes ?? [];
  const counts = {
    create: outcomes.filter((o) => o.outcome === 'create').length,
    existing: outcomes.filter((o) => o.outcome === 'existing').length,
    error: outcomes.filter((o) => o.outcome === 'error').length,
  };
  return (
    <AppLayout title={t('import.title')} session={props.session} section="links">
      <div class="page-header">
        <div>
          <h1>{t('import.title')}</h1>
          <p class="muted">{t('import.lead')}</p>
          <p class="muted small">
            {t('import.columns')}{' '}
            <code dir="ltr">
              url, code, title, tags, expires_at, expired_url, utm_campaign, utm_source, utm_medium
            </code>
          </p>
        </div>
        <a class="btn btn-secondary" href="/ui/links">
          <DirIcon glyph="←" /> {t('nav.links')}
        </a>
      </div>
      {props.fileError && (
        <Notice tone="bad" title={t('import.fileRefused')}>
          <p>{props.fileError}</p>
        </Notice>
      )}
      {props.outcomes && (
        <Notice
          tone={counts.error > 0 ? 'warn' : 'good'}
          title={
            props.imported
              ? t('import.done', { created: counts.create, existing: counts.existing, errors: counts.error })
              : t('import.preview', {
                  created: counts.create,
                  existing: counts.existing,
                  errors: counts.error,
                })
          }
        >
          {!props.imported && <p>{t('import.previewHint')}</p>}
        </Notice>
      )}
      {props.outcomes && (
        <div class="card table-card">
          <table class="data-table import-table">
            <caption class="visually-hidden">{t('import.caption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('import.col.line')}</th>
                <th scope="col">{t('import.col.url')}</th>
                <th scope="col">{t('import.col.code')}</th>
                <th scope="col">{t('import.col.outcome')}</th>
              </tr>
            </thead>
            <tbody>
              {outcomes.map((o) => (
                <tr key={o.line} class={`import-${o.outcome}`}>
                  <td data-label={t('import.col.line')}>{i18n.number(o.line)}</td>
                  <td data-label={t('import.col.url')} dir="ltr" class="destination-cell">
                    {o.url}
                  </td>
                  <td data-label={t('import.col.code')} dir="ltr">
                    {o.code && props.imported ? (
                      <a href={`/ui/links/${encodeURIComponent(o.code)}`}>{o.code}</a>
                    ) : (
                      (o.code ?? '—')
                    )}
                  </td>
                  <td data-label={t('import.col.outcome')}>
                    <Badge
                      tone={TONE[o.outcome]}
                      text={
                        props.imported ? t(`import.outcome.${o.outcome}`) : t(`import.would.${o.outcome}`)
                      }
                    />
                    {o.problems.length > 0 && (
                      <ul class="import-problems">
                        {o.problems.map((p) => (
                          <li key={`${p.field}:${p.message}`}>
                            {p.field
                              ? i18n.fieldSentence(importFieldLabel(i18n, p.field), p.message)
                              : i18n.problem(p.message)}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {props.outcomes && !props.imported && props.csv !== undefined && counts.create > 0 && (
        <form method="post" action="/ui/links/import" enctype="multipart/form-data" class="card stack">
          <CsrfField token={props.session.csrfToken} />
          <input type="hidden" name="step" value="import" />
          <textarea name="csv" hidden>
            {props.csv}
          </textarea>
          <div class="form-actions">
            <button type="submit" class="btn btn-primary">
              {t('import.importButton', { count: counts.create })}
            </button>
            <a class="btn btn-ghost" href="/ui/links/import">
              {t('import.another')}
            </a>
          </div>
        </form>
      )}
      {(!props.outcomes || props.imported) && (
        <form method="post" action="/ui/links/import" enctype="multipart/form-data" class="card stack">
          <CsrfField token={props.session.csrfToken} />
          <input type="hidden" name="step" value="preview" />
          <div class="field">
            <label for="field-file">{t('import.file')}</label>
            <input id="field-file" name="file" type="file" accept=".csv,text/csv" required />
            <p class="hint">{t('import.fileHint', { rows: props.maxRows, mib: props.maxMiB })}</p>
          </div>
          <div class="form-actions">
            <button type="submit" class="btn btn-primary">
              {t('import.tryButton')}
            </button>
          </div>
        </form>
      )}
    </AppLayout>
  );
}

/** A column's label for its problem (the input field the column fills). */
function importFieldLabel(i18n: ReturnType<typeof useI18n>, field: string): string {
  const known = ['url', 'alias', 'title', 'tags', 'expiresAt', 'expiredUrl', 'utm'] as const;
  const found = known.find((k) => field === k || field.startsWith(`${k}.`) || field.startsWith(`${k}[`));
  return found ? i18n.t(`import.field.${found}`) : field;
}
