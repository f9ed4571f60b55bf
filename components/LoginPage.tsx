import { CSRF_FIELD } from '../lib/auth/sessions.ts';
import { Document, Logo } from './AppLayout.tsx';
import { Notice, TextField } from './Field.tsx';

/** The sign-in page. */
export function LoginPage(props: {
  csrfToken: string;
  email?: string;
  error?: string;
  next?: string;
  notice?: string;
}) {
  return (
    <Document title="Sign in" bodyClass="app auth">
      <main id="main" class="auth-card">
        <div class="auth-brand">
          <Logo size={40} />
          <span>Lifeline</span>
        </div>
        <h1>Sign in</h1>
        <p class="muted">Short links your newsroom owns.</p>
        {props.notice && <Notice tone="info">{props.notice}</Notice>}
        {props.error && (
          <Notice tone="bad" title="Could not sign you in">
            <p>{props.error}</p>
          </Notice>
        )}
        <form method="post" action="/ui/login" class="stack">
          <input type="hidden" name={CSRF_FIELD} value={props.csrfToken} />
          {props.next && <input type="hidden" name="next" value={props.next} />}
          <TextField
            name="email"
            label="Email"
            type="email"
            value={props.email}
            required
            autoComplete="username"
          />
          <TextField
            name="password"
            label="Password"
            type="password"
            required
            autoComplete="current-password"
          />
          <button type="submit" class="btn btn-primary btn-block">
            Sign in
          </button>
        </form>
      </main>
    </Document>
  );
}
