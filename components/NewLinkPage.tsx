import LiveField from '../islands/LiveField.tsx';
import type { UiSession } from '../lib/auth/sessions.ts';
import { TITLE_MAX_CHARS } from '../lib/links/link.ts';
import { describeTimeZone } from '../lib/ui/time_zone.ts';
import { AppLayout } from './AppLayout.tsx';
import { CsrfField, ErrorSummary, SelectField, TextField } from './Field.tsx';
import { useI18n } from './I18n.tsx';
import { Island } from './Island.tsx';
import { getLinkFieldLabels, getRedirectOptions } from './link_fields.ts';
import { UtmFields } from './UtmFields.tsx';

/** The create form: URL and alias checked as you type; title, tags, expiry, fallback; UTM and redirect type under Advanced; errors next to fields. */
export function NewLinkPage(props: {
  session: UiSession;
  values: Record<string, string>;
  errors: Record<string, string>;
  shortBase: string;
  /**
   * The short domains (SHORT_DOMAINS, the default first): with more than one, the editor chooses the link's
   * (ADR 0078); the alias is then shown after the chosen one's name.
   */
  shortDomains?: readonly string[];
  timeZone: string;
  /** UTM_PARAMS, shown beside the link's own UTM fields. */
  deploymentUtm?: string | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { values, errors } = props;
  const labels = getLinkFieldLabels(i18n);
  const domains = props.shortDomains ?? [];
  const chosen = domains.includes(values.domain ?? '') ? values.domain! : undefined;
  const aliasHost = chosen ?? props.shortBase.replace(/^https?:\/\//, '');
  return (
    <AppLayout title={t('new.title')} session={props.session} section="new">
      <div class="page-header">
        <div>
          <p class="breadcrumb">
            <a href="/ui/links">{t('nav.links')}</a> /
          </p>
          <h1>{t('new.heading')}</h1>
        </div>
      </div>
      <form method="post" action="/ui/links/new" class="card form-card stack" novalidate>
        <CsrfField token={props.session.csrfToken} />
        <ErrorSummary errors={errors} />
        <Island
          name="LiveField"
          component={LiveField}
          props={{
            check: 'url',
            name: 'url',
            label: labels.url!,
            value: values.url ?? '',
            required: true,
            placeholder: 'https://www.example-news.com/2026/story',
            hint: t('new.urlHint'),
            optionalLabel: t('form.optional'),
            ...(errors.url ? { error: errors.url } : {}),
          }}
        />
        <TextField
          name="title"
          label={labels.title!}
          value={values.title}
          error={errors.title}
          dir="auto"
          maxLength={TITLE_MAX_CHARS}
          placeholder={t('new.titlePlaceholder')}
          hint={t('new.titleHint')}
        />
        {domains.length > 1 ? (
          <SelectField
            name="domain"
            required
            label={labels.domain!}
            value={chosen ?? domains[0]}
            error={errors.domain}
            hint={t('new.domainHint')}
            // A host name is isolated from the sentence around it (left to right in an Arabic page too).
            options={domains.map((domain, i) => ({
              value: domain,
              label: i === 0 ? t('new.domainDefault', { domain }) : `\u2068${domain}\u2069`,
            }))}
          />
        ) : null}
        <Island
          name="LiveField"
          component={LiveField}
          props={{
            check: 'alias',
            name: 'alias',
            label: labels.alias!,
            value: values.alias ?? '',
            prefix: `${aliasHost}/`,
            placeholder: 'spring-sale',
            hint: t('new.aliasHint'),
            optionalLabel: t('form.optional'),
            ...(errors.alias ? { error: errors.alias } : {}),
          }}
        />
        <TextField
          name="tags"
          label={labels.tags!}
          value={values.tags}
          error={errors.tags}
          dir="auto"
          placeholder={t('new.tagsPlaceholder')}
          hint={t('new.tagsHint')}
        />
        <fieldset class="fieldset">
          <legend>{t('new.expiry')}</legend>
          <div class="grid-2">
            <TextField
              name="expiresAt"
              label={labels.expiresAt!}
              type="datetime-local"
              value={values.expiresAt}
              error={errors.expiresAt}
              hint={t('form.timeZone', { zone: describeTimeZone(props.timeZone) })}
            />
            <TextField
              name="expiredUrl"
              label={labels.expiredUrl!}
              type="url"
              value={values.expiredUrl}
              error={errors.expiredUrl}
              placeholder="https://www.example-news.com/"
              hint={t('new.expiredUrlHint')}
            />
          </div>
        </fieldset>
        <details
          class="advanced"
          open={Boolean(errors.redirectStatus || errors.utmCampaign || errors.utmSource || errors.utmMedium)}
        >
          <summary>{t('new.advanced')}</summary>
          <UtmFields values={values} errors={errors} deploymentUtm={props.deploymentUtm} />
          <SelectField
            name="redirectStatus"
            label={labels.redirectStatus!}
            value={values.redirectStatus}
            error={errors.redirectStatus}
            options={getRedirectOptions(i18n)}
          />
        </details>
        <div class="form-actions">
          <button type="submit" class="btn btn-primary">
            {t('new.create')}
          </button>
          <a class="btn btn-ghost" href="/ui/links">
            {t('new.cancel')}
          </a>
        </div>
      </form>
    </AppLayout>
  );
}
