// The edit form of a link: destination, title, status, redirect, expiry, tags, UTM, and the reason for the change.
import { type Link, TITLE_MAX_CHARS } from '../../lib/links/link.ts';
import { describeTimeZone } from '../../lib/ui/time_zone.ts';
import { CsrfField, ErrorSummary, SelectField, TextField } from '../Field.tsx';
import { useI18n } from '../I18n.tsx';
import { getLinkFieldLabels, getRedirectOptions } from '../link_fields.ts';
import { UtmFields } from '../UtmFields.tsx';

/** The edit card; with `locked` (a WordPress article's link, a viewer who is no administrator) the fields that decide where readers land are disabled. */
export function EditLinkCard(props: {
  link: Link;
  version: number;
  csrfToken: string;
  timeZone: string;
  edit: { values: Record<string, string>; errors: Record<string, string> };
  locked: boolean;
  deploymentUtm?: string | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { link, timeZone, locked } = props;
  const labels = getLinkFieldLabels(i18n);
  const editable = link.status === 'active' || link.status === 'gone';
  const statusOptions = [
    ...(editable
      ? []
      : [{ value: '', label: t('detail.keepStatus', { status: t(`status.${link.status}`) }) }]),
    { value: 'active', label: t('detail.statusActive') },
    { value: 'gone', label: t('detail.statusGone') },
  ];
  const { values, errors } = props.edit;
  return (
    <section class="card" aria-labelledby="edit-title" id="edit">
      <h2 id="edit-title">{t('detail.edit')}</h2>
      <p class="muted">{t('detail.editLead')}</p>
      <form method="post" action={`/ui/links/${encodeURIComponent(link.code)}/edit`} class="stack" novalidate>
        <CsrfField token={props.csrfToken} />
        <input type="hidden" name="version" value={values.version ?? String(props.version)} />
        <input type="hidden" name="expiresAtShown" value={values.expiresAtShown ?? ''} />
        <ErrorSummary errors={errors} />
        {locked && <p class="hint">{t('detail.postLocked')}</p>}
        <TextField
          name="url"
          label={labels.url!}
          type="url"
          value={values.url}
          error={errors.url}
          required
          disabled={locked}
        />
        <TextField
          name="title"
          label={labels.title!}
          value={values.title}
          error={errors.title}
          dir="auto"
          maxLength={TITLE_MAX_CHARS}
          hint={t('detail.titleHint')}
        />
        <div class="grid-2">
          <SelectField
            name="status"
            label={labels.status!}
            disabled={locked}
            value={values.status}
            error={errors.status}
            options={statusOptions}
            required
          />
          <SelectField
            name="redirectStatus"
            label={labels.redirectStatus!}
            disabled={locked}
            value={values.redirectStatus}
            error={errors.redirectStatus}
            options={getRedirectOptions(i18n)}
          />
        </div>
        <div class="grid-2">
          <TextField
            name="expiresAt"
            label={labels.expiresAt!}
            disabled={locked}
            type="datetime-local"
            value={values.expiresAt}
            error={errors.expiresAt}
            hint={t('detail.expiresHint', { zone: describeTimeZone(timeZone) })}
          />
          <TextField
            name="expiredUrl"
            label={labels.expiredUrl!}
            disabled={locked}
            type="url"
            value={values.expiredUrl}
            error={errors.expiredUrl}
          />
        </div>
        <TextField
          name="tags"
          label={labels.tags!}
          value={values.tags}
          error={errors.tags}
          dir="auto"
          hint={t('detail.tagsHint')}
        />
        <UtmFields values={values} errors={errors} deploymentUtm={props.deploymentUtm} />
        <TextField
          name="reason"
          label={t('detail.reasonLabel')}
          value={values.reason}
          error={errors.reason}
          required
          dir="auto"
          maxLength={500}
          placeholder={t('detail.reasonPlaceholder')}
          hint={t('detail.reasonHint')}
        />
        <div class="form-actions">
          <button type="submit" class="btn btn-primary">
            {t('detail.save')}
          </button>
        </div>
      </form>
    </section>
  );
}
