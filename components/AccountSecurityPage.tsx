import type { MfaEnrolment } from '../lib/auth/mfa.ts';
import type { UiSession } from '../lib/auth/sessions.ts';
import type { SessionView } from '../lib/auth/staff_sessions.ts';
import { AppLayout } from './AppLayout.tsx';
import { CsrfField, Notice, TextField } from './Field.tsx';
import { useI18n } from './I18n.tsx';

/** The signed-in person's own security: two-step verification and where they are signed in. */
export function AccountSecurityPage(props: {
  session: UiSession;
  mfa: { enrolled: boolean; recoveryLeft: number };
  sessions: SessionView[];
  /** Set while enrolling: the secret as a QR code and as text, with the confirm form. */
  enrolment?: MfaEnrolment;
  /** Shown once, after enrolment or a renewal. */
  recoveryCodes?: string[];
  required?: boolean;
  notice?: string;
  error?: string;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { session } = props;
  return (
    <AppLayout title={t('account.title')} session={session} section="security">
      <div class="page-header">
        <div>
          <h1>{t('account.title')}</h1>
          <p class="muted">{t('account.lead')}</p>
        </div>
      </div>
      {props.required && <Notice tone="warn" title={t('account.mfa.required')} />}
      {props.notice && <Notice tone="good" title={props.notice} />}

      <section class="card stack" aria-labelledby="mfa-heading" id="mfa">
        <h2 id="mfa-heading">{t('account.mfa.heading')}</h2>
        {props.recoveryCodes && (
          <div class="reveal" role="status">
            <p class="notice-title">{t('account.mfa.recoveryTitle')}</p>
            <p class="hint">{t('account.mfa.recoveryHint')}</p>
            <ul class="recovery-codes" dir="ltr">
              {props.recoveryCodes.map((code) => (
                <li key={code}>
                  <code>{code}</code>
                </li>
              ))}
            </ul>
          </div>
        )}
        {session.method === 'oidc' && !props.mfa.enrolled ? (
          <p class="muted">{t('account.mfa.provider')}</p>
        ) : props.mfa.enrolled ? (
          <>
            <p>{t('account.mfa.on', { count: props.mfa.recoveryLeft })}</p>
            <form method="post" action="/ui/account/mfa/recovery-codes" class="inline-form">
              <CsrfField token={session.csrfToken} />
              <button type="submit" class="btn btn-ghost">
                {t('account.mfa.renew')}
              </button>
            </form>
          </>
        ) : props.enrolment ? (
          <div class="stack">
            <p>{t('account.mfa.scan')}</p>
            <div class="qr-frame">
              <img src={props.enrolment.qrDataUrl} alt={t('account.mfa.qrLabel')} width={192} height={192} />
            </div>
            <p>
              {t('account.mfa.key')}{' '}
              <code dir="ltr" class="totp-secret">
                {props.enrolment.secret.replace(/(.{4})/g, '$1 ').trim()}
              </code>
            </p>
            <form method="post" action="/ui/account/mfa/confirm" class="stack form-card">
              <CsrfField token={session.csrfToken} />
              <TextField
                name="code"
                label={t('account.mfa.confirmCode')}
                dir="ltr"
                required
                autoComplete="one-time-code"
                maxLength={12}
                error={props.error}
              />
              <div class="form-actions">
                <button type="submit" class="btn btn-primary">
                  {t('account.mfa.confirm')}
                </button>
              </div>
            </form>
          </div>
        ) : (
          <>
            <p class="muted">{t('account.mfa.off')}</p>
            <form method="post" action="/ui/account/mfa/start" class="inline-form">
              <CsrfField token={session.csrfToken} />
              <button type="submit" class="btn btn-primary">
                {t('account.mfa.start')}
              </button>
            </form>
          </>
        )}
      </section>

      <section class="card stack" aria-labelledby="sessions-heading" id="sessions">
        <h2 id="sessions-heading">{t('account.sessions.heading')}</h2>
        <div class="table-scroll">
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">{t('account.sessions.col.device')}</th>
                <th scope="col">{t('account.sessions.col.network')}</th>
                <th scope="col">{t('account.sessions.col.started')}</th>
                <th scope="col">{t('account.sessions.col.lastSeen')}</th>
                <th scope="col">{t('account.sessions.col.how')}</th>
                <th scope="col">{t('account.sessions.col.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {props.sessions.map((s) => (
                <tr key={s.id}>
                  <td data-label={t('account.sessions.col.device')}>
                    <bdi dir="ltr">{s.device}</bdi>
                    {s.current && <span class="muted small"> {t('account.sessions.current')}</span>}
                  </td>
                  <td data-label={t('account.sessions.col.network')}>
                    <bdi dir="ltr">{s.network}</bdi>
                  </td>
                  <td data-label={t('account.sessions.col.started')}>{i18n.dateTime(s.createdAt)}</td>
                  <td data-label={t('account.sessions.col.lastSeen')}>{i18n.dateTime(s.lastSeenAt)}</td>
                  <td data-label={t('account.sessions.col.how')}>
                    {t(`account.sessions.method.${s.method}`)}
                  </td>
                  <td data-label={t('account.sessions.col.actions')}>
                    <form method="post" action={`/ui/account/sessions/${s.id}/revoke`} class="inline-form">
                      <CsrfField token={session.csrfToken} />
                      <button type="submit" class="btn btn-ghost btn-sm">
                        {t('account.sessions.revoke')}
                      </button>
                    </form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <form method="post" action="/ui/account/sessions/revoke-others" class="inline-form">
          <CsrfField token={session.csrfToken} />
          <button type="submit" class="btn btn-danger">
            {t('account.sessions.revokeOthers')}
          </button>
        </form>
      </section>
    </AppLayout>
  );
}
