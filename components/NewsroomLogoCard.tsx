// The settings page's card for the newsroom's logo (admins only): what is stored, a preview, upload and remove.
import { CsrfField } from './Field.tsx';
import { useI18n } from './I18n.tsx';

/** The stored logo as the card shows it; null: none yet. */
export interface NewsroomLogoView {
  type: 'PNG' | 'SVG';
  bytes: number;
  uploadedBy: string;
  uploadedAt: Date;
  /** The image as a data: URL, for the preview. */
  dataUrl: string;
}

export function NewsroomLogoCard(props: {
  csrfToken: string;
  logo: NewsroomLogoView | null;
  error?: string | undefined;
  notice?: 'saved' | 'removed' | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { logo } = props;
  return (
    <section class="card form-card stack" aria-labelledby="newsroom-logo-title" id="newsroom-logo">
      <h2 id="newsroom-logo-title">{t('settings.logo.title')}</h2>
      <p class="muted">{t('settings.logo.lead')}</p>
      {props.notice && (
        <p class="notice notice-good" role="status">
          {t(props.notice === 'saved' ? 'settings.logo.saved' : 'settings.logo.removed')}
        </p>
      )}
      {logo ? (
        <>
          <img
            src={logo.dataUrl}
            alt={t('settings.logo.alt')}
            width={96}
            height={96}
            class="qr logo-preview"
          />
          <p>
            {t('settings.logo.current', {
              type: logo.type,
              kib: Math.max(1, Math.round(logo.bytes / 1024)),
              time: i18n.dateTime(logo.uploadedAt),
            })}{' '}
            <bdi dir="auto">{logo.uploadedBy.replace(/^user:/, '')}</bdi>
          </p>
        </>
      ) : (
        <p>{t('settings.logo.none')}</p>
      )}
      <form method="post" action="/ui/settings/logo" enctype="multipart/form-data" class="stack">
        <CsrfField token={props.csrfToken} />
        <div class="field">
          <label for="field-logo">{t('settings.logo.file')}</label>
          <input
            id="field-logo"
            name="logo"
            type="file"
            accept="image/png,image/svg+xml"
            aria-describedby="field-logo-hint"
          />
          <p class="hint" id="field-logo-hint">
            {t('settings.logo.hint')}
          </p>
          {props.error && (
            <p class="field-message is-error" id="field-logo-message" role="alert">
              {props.error}
            </p>
          )}
        </div>
        <div class="form-actions">
          <button type="submit" class="btn btn-primary">
            {t('settings.logo.upload')}
          </button>
        </div>
      </form>
      {logo && (
        <form method="post" action="/ui/settings/logo/remove">
          <CsrfField token={props.csrfToken} />
          <button type="submit" class="btn btn-secondary">
            {t('settings.logo.remove')}
          </button>
        </form>
      )}
    </section>
  );
}
