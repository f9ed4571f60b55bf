// /ui/ops (admins only): the page, and the actions of each of its cards (routes/ui/ops/).
import { Hono } from 'hono';
import type { WebDeps } from '../app_env.ts';
import { createApiKeyRoutes } from './ops/api_keys.ts';
import { createEscrowActionRoutes } from './ops/escrow_actions.ts';
import { createFrontActionRoutes } from './ops/front_actions.ts';
import { DONE, opsPageRenderer } from './ops/ops_page.tsx';
import { createUserRoutes } from './ops/users.ts';
import type { UiEnv } from './ui_env.ts';

/** /ui/ops (admins only): operations status, API keys and users. */
export function createOpsRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();
  const render = opsPageRenderer(deps);

  app.route('/', createFrontActionRoutes(deps, render));
  app.route('/', createEscrowActionRoutes(deps, render));

  app.get('/', (c) => {
    const done = DONE.find((d) => d === c.req.query('done'));
    return render(c, done ? { notice: { tone: 'good', title: c.get('i18n').t(`ops.done.${done}`) } } : {});
  });

  app.route('/', createApiKeyRoutes(deps, render));
  app.route('/', createUserRoutes(deps, render));

  return app;
}
