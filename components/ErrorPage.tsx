import { Document, Logo } from './AppLayout.tsx';
import { useI18n } from './I18n.tsx';

/** A full-page error for the UI (forbidden form posts, missing pages). */
export function ErrorPage(props: { title: string; message: string; back?: { href: string; label: string } }) {
  const { t } = useI18n();
  return (
    <Document title={props.title} bodyClass="app auth">
      <main id="main" class="auth-card">
        <div class="auth-brand">
          <Logo size={40} />
          <span>Lifeline</span>
        </div>
        <h1>{props.title}</h1>
        <p>{props.message}</p>
        <p>
          <a class="btn btn-secondary" href={props.back?.href ?? '/ui/links'}>
            {props.back?.label ?? t('error.backToLinks')}
          </a>
        </p>
      </main>
    </Document>
  );
}
