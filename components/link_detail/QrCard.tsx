// A link's QR code, with SVG and PNG downloads.
import { useI18n } from '../I18n.tsx';
import { withoutScheme } from '../link_fields.ts';

/** The QR card of a link. */
export function QrCard(props: { code: string; shortUrl: string }) {
  const { t } = useI18n();
  const qrBase = `/ui/links/${encodeURIComponent(props.code)}/qr`;
  return (
    <section class="card qr-card" aria-labelledby="qr-title">
      <h2 id="qr-title">{t('detail.qr')}</h2>
      <img
        src={`${qrBase}.svg`}
        width={200}
        height={200}
        alt={t('detail.qrAlt', { url: withoutScheme(props.shortUrl) })}
        class="qr"
      />
      <p class="muted small">{t('detail.qrNote')}</p>
      <div class="button-row">
        <a
          class="btn btn-secondary btn-sm"
          href={`${qrBase}.svg?download=1`}
          download={`${props.code}-qr.svg`}
        >
          {t('detail.qrSvg')}
        </a>
        <a
          class="btn btn-secondary btn-sm"
          href={`${qrBase}.png?download=1`}
          download={`${props.code}-qr.png`}
        >
          {t('detail.qrPng')}
        </a>
        <a class="btn btn-secondary btn-sm" href={qrBase}>
          {t('detail.qrPrint')}
        </a>
      </div>
    </section>
  );
}
