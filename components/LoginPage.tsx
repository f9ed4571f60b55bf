import { CSRF_FIELD } from '../lib/auth/sessions.ts';
import { Document, Logo } from './AppLayout.tsx';
import { Notice, TextField } from './Field.tsx';
import { useI18n } from './I18n.tsx';

/** The sign-in page. */
export function LoginPage(props: {
  csrfToken: string;
  email?: string;
  error?: string;
  next?: string;
  notice?: string;
  /** The OpenID Connect provider's name, when one is configured: a "Sign in with …" button above the form. */
  oidcProvider?: string | undefined;
}) {
  const { t } = useI18n();
  return (
    <Document title={t('login.title')} bodyClass="app auth">
      <main id="main" class="auth-card">
        <div class="auth-brand">
          <Logo size={40} />
          <span>Lifeline</span>
        </div>
        <h1>{t('login.title')}</h1>
        <p class="muted">{t('login.tagline')}</p>
        {props.notice && <Notice tone="info">{props.notice}</Notice>}
        {props.error && (
          <Notice tone="bad" title={t('login.failed')}>
            <p>{props.error}</p>
          </Notice>
        )}
        {props.oidcProvider && (
          <>
            <a
              class="btn btn-primary btn-block"
              href={`/ui/login/oidc${props.next ? `?next=${encodeURIComponent(props.next)}` : ''}`}
            >
              {t('login.oidc.button', { provider: props.oidcProvider })}
            </a>
            <p class="auth-or muted">{t('login.or')}</p>
          </>
        )}
        <form method="post" action="/ui/login" class="stack">
          <input type="hidden" name={CSRF_FIELD} value={props.csrfToken} />
          {props.next && <input type="hidden" name="next" value={props.next} />}
          <TextField
            name="email"
            label={t('login.email')}
            type="email"
            value={props.email}
            required
            autoComplete="username"
          />
          <TextField
            name="password"
            label={t('login.password')}
            type="password"
            required
            autoComplete="current-password"
          />
          <button type="submit" class="btn btn-primary btn-block">
            {t('login.submit')}
          </button>
        </form>
      </main>
    </Document>
  );
}
