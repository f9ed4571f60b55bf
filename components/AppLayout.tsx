import type { ComponentChildren } from 'preact';
import { roleCan } from '../lib/auth/permissions.ts';
import { CSRF_FIELD, type UiSession } from '../lib/auth/sessions.ts';
import { useI18n } from './I18n.tsx';

export type NavSection =
  | 'dashboard'
  | 'links'
  | 'new'
  | 'destinations'
  | 'ops'
  | 'reports'
  | 'settings'
  | 'security'
  | null;

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
  const { t } = useI18n();
  const nav: { id: NavSection; href: string; label: string }[] = [
    { id: 'links', href: '/ui/links', label: t('nav.links') },
    { id: 'dashboard', href: '/ui/dashboard', label: t('nav.dashboard') },
    ...(roleCan(user.role, 'links:write')
      ? [{ id: 'new' as const, href: '/ui/links/new', label: t('nav.new') }]
      : []),
    { id: 'destinations', href: '/ui/destinations', label: t('nav.destinations') },
    ...(roleCan(user.role, 'admin') ? [{ id: 'ops' as const, href: '/ui/ops', label: t('nav.ops') }] : []),
    ...(roleCan(user.role, 'moderation')
      ? [{ id: 'reports' as const, href: '/ui/reports', label: t('nav.reports') }]
      : []),
  ];
  return (
    <Document title={props.title}>
      <a class="skip-link" href="#main">
        {t('layout.skip')}
      </a>
      <header class="topbar">
        <div class="topbar-inner">
          <a class="brand" href="/ui/links">
            <Logo />
            <span>Lifeline</span>
          </a>
          <nav aria-label={t('layout.mainNav')}>
            <ul class="nav">
              {nav.map((item) => (
                <li key={item.href} class={item.id === 'dashboard' ? 'nav-wide' : undefined}>
                  <a href={item.href} aria-current={props.section === item.id ? 'page' : undefined}>
                    {item.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="account">
            <span class="account-name" title={user.email}>
              <bdi class="account-who" dir="auto">
                {user.name ?? user.email}
              </bdi>
              <span class={`role role-${user.role}`}>{t(`role.${user.role}`)}</span>
            </span>
            <a
              class="btn btn-ghost btn-sm"
              href="/ui/settings"
              aria-current={props.section === 'settings' || props.section === 'security' ? 'page' : undefined}
            >
              {t('layout.settings')}
            </a>
            <form method="post" action="/ui/logout" class="inline-form">
              <input type="hidden" name={CSRF_FIELD} value={props.session.csrfToken} />
              <button type="submit" class="btn btn-ghost btn-sm">
                {t('layout.logOut')}
              </button>
            </form>
          </div>
        </div>
      </header>
      <main id="main" class="page" tabIndex={-1}>
        {props.children}
      </main>
      <footer class="footer">
        <span>{t('layout.footer')}</span>
        <a href="/api/v1/openapi.json">{t('layout.apiReference')}</a>
      </footer>
    </Document>
  );
}

/** The HTML document around any UI page, in the editor's language and its direction. */
export function Document(props: { title: string; bodyClass?: string; children: ComponentChildren }) {
  const { t, lang, dir } = useI18n();
  return (
    <html lang={lang} dir={dir}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <meta name="color-scheme" content="light dark" />
        <title>{t('document.title', { title: props.title })}</title>
        <link rel="icon" href="/static/favicon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="/static/app.css" />
        <script type="module" src="/static/islands.js" />
      </head>
      <body class={props.bodyClass ?? 'app'}>{props.children}</body>
    </html>
  );
}
