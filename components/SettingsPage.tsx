import type { UiSession } from '../lib/auth/sessions.ts';
import { LOCALE_INFO, LOCALES, type Locale } from '../lib/i18n/locales.ts';
import { describeTimeZone } from '../lib/ui/time_zone.ts';
import { AppLayout } from './AppLayout.tsx';
import { CsrfField, Notice, SelectField } from './Field.tsx';
import { useI18n } from './I18n.tsx';
import { NewsroomLogoCard, type NewsroomLogoView } from './NewsroomLogoCard.tsx';

/** The editor's own settings: the UI language (or the browser's), and the time zone in use. */
export function SettingsPage(props: {
  session: UiSession;
  /** The language the browser asks for (what "same as my browser" means now). */
  browserLocale: Locale;
  saved?: boolean;
  error?: string;
  /** Admins only: the newsroom's logo card (undefined: not shown). */
  newsroomLogo?:
    | { logo: NewsroomLogoView | null; error?: string | undefined; notice?: 'saved' | 'removed' | undefined }
    | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const current = props.session.user.locale ?? 'browser';
  return (
    <AppLayout title={t('settings.title')} session={props.session} section="settings">
      <div class="page-header">
        <div>
          <h1>{t('settings.title')}</h1>
          <p class="muted">{t('settings.lead')}</p>
        </div>
      </div>
      {props.saved && <Notice tone="good" title={t('settings.saved')} />}
      <p>
        <a href="/ui/account/security">{t('layout.security')}</a>
        <span class="muted"> — {t('account.lead')}</span>
      </p>
      <form method="post" action="/ui/settings" class="card form-card stack">
        <CsrfField token={props.session.csrfToken} />
        <SelectField
          name="locale"
          label={t('settings.language')}
          value={current}
          required
          error={props.error}
          hint={t('settings.languageHint')}
          options={[
            {
              value: 'browser',
              label: t('settings.languageBrowser', { name: LOCALE_INFO[props.browserLocale].name }),
            },
            ...LOCALES.map((l) => ({ value: l, label: LOCALE_INFO[l].name })),
          ]}
        />
        <div class="field">
          <span class="label-like">{t('settings.timeZone')}</span>
          <p class="hint">{t('settings.timeZoneValue', { zone: describeTimeZone(i18n.timeZone) })}</p>
        </div>
        <div class="form-actions">
          <button type="submit" class="btn btn-primary">
            {t('settings.save')}
          </button>
        </div>
      </form>
      {props.newsroomLogo && (
        <NewsroomLogoCard
          csrfToken={props.session.csrfToken}
          logo={props.newsroomLogo.logo}
          error={props.newsroomLogo.error}
          notice={props.newsroomLogo.notice}
        />
      )}
    </AppLayout>
  );
}
