import { Hono } from 'hono';
import { DashboardPage } from '../../components/DashboardPage.tsx';
import { createNewsroomDashboard, parseDashboardWindow } from '../../lib/clicks/newsroom_dashboard.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

/**
 * GET /ui/dashboard: the newsroom's clicks (today, 7 and 30 days, beside Bitly's), the chosen window's top links
 * and its clicks by tag, WordPress site and short domain. One reader per app (its brief per-window cache).
 */
export function createDashboardRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();
  const readDashboard = createNewsroomDashboard(deps.sql);

  app.get('/', async (c) => {
    const dashboard = await readDashboard(parseDashboardWindow(c.req.query('window')));
    return renderPage(
      c,
      <DashboardPage
        session={c.get('session')!}
        dashboard={dashboard}
        shortDomains={deps.config.shortDomains}
      />,
    );
  });

  return app;
}
