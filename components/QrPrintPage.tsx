// /ui/links/:code/qr: a QR code for print — format, size, colours and a logo — downloaded as SVG, PNG or PDF.
import type { UiSession } from '../lib/auth/sessions.ts';
import { AppLayout } from './AppLayout.tsx';
import { CsrfField, ErrorSummary, SelectField, TextField } from './Field.tsx';
import { DirIcon, useI18n } from './I18n.tsx';
import { withoutScheme } from './link_fields.ts';

/** The print form's values (strings, as posted). */
export interface QrPrintValues {
  format: string;
  size: string;
  foreground: string;
  background: string;
  /** newsroom | none | upload (lib/links/newsroom_logo.ts). */
  logoChoice: string;
}

export function QrPrintPage(props: {
  session: UiSession;
  code: string;
  shortUrl: string;
  values: QrPrintValues;
  /** Whether the newsroom's logo is stored (the first choice, and the default, when it is). */
  hasNewsroomLogo: boolean;
  errors: Record<string, string>;
}) {
  const { t } = useI18n();
  const { values, errors } = props;
  const base = `/ui/links/${encodeURIComponent(props.code)}`;
  return (
    <AppLayout title={t('qr.title', { code: props.code })} session={props.session} section="links">
      <div class="page-header">
        <div>
          <h1>{t('qr.title', { code: props.code })}</h1>
          <p class="muted">{t('qr.lead')}</p>
        </div>
        <a class="btn btn-secondary" href={base}>
          <DirIcon glyph="←" /> {t('qr.back')}
        </a>
      </div>
      <ErrorSummary errors={errors} />
      <div class="qr-print">
        <img
          src={`${base}/qr.svg`}
          width={200}
          height={200}
          alt={t('detail.qrAlt', { url: withoutScheme(props.shortUrl) })}
          class="qr"
        />
        <form method="post" action={`${base}/qr`} enctype="multipart/form-data" class="card stack">
          <CsrfField token={props.session.csrfToken} />
          <SelectField
            name="format"
            label={t('qr.format')}
            value={values.format}
            error={errors.format}
            options={[
              { value: 'pdf', label: t('qr.format.pdf') },
              { value: 'svg', label: t('qr.format.svg') },
              { value: 'png', label: t('qr.format.png') },
            ]}
          />
          <TextField
            name="size"
            label={t('qr.size')}
            hint={t('qr.sizeHint')}
            value={values.size}
            maxLength={5}
            dir="ltr"
            error={errors.size}
          />
          <div class="field">
            <label for="field-foreground">{t('qr.foreground')}</label>
            <input id="field-foreground" name="foreground" type="color" value={values.foreground} />
            {errors.foreground && (
              <p class="field-message is-error" id="field-foreground-message">
                {errors.foreground}
              </p>
            )}
          </div>
          <div class="field">
            <label for="field-background">{t('qr.background')}</label>
            <input id="field-background" name="background" type="color" value={values.background} />
          </div>
          <fieldset class="field checkboxes">
            <legend>{t('qr.logoChoice')}</legend>
            {(props.hasNewsroomLogo ? ['newsroom', 'none', 'upload'] : ['none', 'upload']).map((choice) => (
              <label key={choice} class="checkbox">
                <input type="radio" name="logoChoice" value={choice} checked={values.logoChoice === choice} />{' '}
                {t(`qr.logoChoice.${choice as 'newsroom' | 'none' | 'upload'}`)}
              </label>
            ))}
          </fieldset>
          <div class="field">
            <label for="field-logo">{t('qr.logo')}</label>
            <input id="field-logo" name="logo" type="file" accept="image/png,image/svg+xml" />
            <p class="hint">{t('qr.logoHint')}</p>
            {errors.logo && (
              <p class="field-message is-error" id="field-logo-message">
                {errors.logo}
              </p>
            )}
          </div>
          <div class="form-actions">
            <button type="submit" class="btn btn-primary">
              {t('qr.download')}
            </button>
          </div>
        </form>
      </div>
    </AppLayout>
  );
}
