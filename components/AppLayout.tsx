import type { ComponentChildren } from 'preact';
import { CSRF_FIELD, type UiSession } from '../lib/auth/sessions.ts';

export type NavSection = 'links' | 'new' | 'ops' | 'reports' | null;

/** The product's mark: a lifebuoy, drawn inline so it needs no request. */
export function Logo(props: { size?: number }) {
  const size = props.size ?? 28;
  return (
    <svg class="logo" width={size} height={size} viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <circle cx="16" cy="16" r="12" fill="none" stroke="currentColor" stroke-width="6" class="logo-ring" />
      <path d="M16 4v6M16 22v6M4 16h6M22 16h6" stroke="var(--surface)" stroke-width="3.2" />
    </svg>
  );
}

/** The frame of every signed-in page: top bar with navigation and account, then the page. */
export function AppLayout(props: {
  title: string;
  session: UiSession;
  section: NavSection;
  children: ComponentChildren;
}) {
  const { user } = props.session;
  const nav: { id: NavSection; href: string; label: string }[] = [
    { id: 'links', href: '/ui/links', label: 'Links' },
    { id: 'new', href: '/ui/links/new', label: 'New link' },
    ...(user.role === 'admin' ? [{ id: 'ops' as const, href: '/ui/ops', label: 'Operations' }] : []),
    ...(user.role === 'admin' ? [{ id: 'reports' as const, href: '/ui/reports', label: 'Reports' }] : []),
  ];
  return (
    <Document title={props.title}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <div class="topbar-inner">
          <a class="brand" href="/ui/links">
            <Logo />
            <span>Lifeline</span>
          </a>
          <nav aria-label="Main">
            <ul class="nav">
              {nav.map((item) => (
                <li key={item.href}>
                  <a href={item.href} aria-current={props.section === item.id ? 'page' : undefined}>
                    {item.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="account">
            <span class="account-name" title={user.email}>
              {user.name ?? user.email}
              <span class={`role role-${user.role}`}>{user.role}</span>
            </span>
            <form method="post" action="/ui/logout" class="inline-form">
              <input type="hidden" name={CSRF_FIELD} value={props.session.csrfToken} />
              <button type="submit" class="btn btn-ghost btn-sm">
                Log out
              </button>
            </form>
          </div>
        </div>
      </header>
      <main id="main" class="page" tabIndex={-1}>
        {props.children}
      </main>
      <footer class="footer">
        <span>Lifeline — your links, your lifeline.</span>
        <a href="/api/v1/openapi.json">API reference (OpenAPI)</a>
      </footer>
    </Document>
  );
}

/** The HTML document around any UI page. */
export function Document(props: { title: string; bodyClass?: string; children: ComponentChildren }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <meta name="color-scheme" content="light dark" />
        <title>{`${props.title} · Lifeline`}</title>
        <link rel="icon" href="/static/favicon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="/static/app.css" />
        <script type="module" src="/static/islands.js" />
      </head>
      <body class={props.bodyClass ?? 'app'}>{props.children}</body>
    </html>
  );
}
