import { CSRF_FIELD } from '../lib/auth/sessions.ts';
import { Document, Logo } from './AppLayout.tsx';
import { Notice, TextField } from './Field.tsx';
import { useI18n } from './I18n.tsx';

/** The second step of a password sign-in: a TOTP code or a recovery code. */
export function MfaPage(props: { csrfToken: string; next: string; error?: string }) {
  const { t } = useI18n();
  return (
    <Document title={t('mfa.title')} bodyClass="app auth">
      <main id="main" class="auth-card">
        <div class="auth-brand">
          <Logo size={40} />
          <span>Lifeline</span>
        </div>
        <h1>{t('mfa.title')}</h1>
        <p class="muted">{t('mfa.prompt')}</p>
        {props.error && (
          <Notice tone="bad" title={t('login.failed')}>
            <p>{props.error}</p>
          </Notice>
        )}
        <form method="post" action="/ui/login/mfa" class="stack">
          <input type="hidden" name={CSRF_FIELD} value={props.csrfToken} />
          <input type="hidden" name="next" value={props.next} />
          <TextField
            name="code"
            label={t('mfa.code')}
            dir="ltr"
            required
            autoComplete="one-time-code"
            maxLength={40}
          />
          <button type="submit" class="btn btn-primary btn-block">
            {t('mfa.verify')}
          </button>
        </form>
        <form method="post" action="/ui/logout" class="stack">
          <input type="hidden" name={CSRF_FIELD} value={props.csrfToken} />
          <button type="submit" class="btn btn-ghost btn-block">
            {t('mfa.cancel')}
          </button>
        </form>
      </main>
    </Document>
  );
}
