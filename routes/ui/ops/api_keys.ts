// API keys from the page: issue one (its secret shown once) and revoke one.
import { Hono } from 'hono';
import { createApiKeyInputSchema, issueApiKey, revokeIssuedApiKey } from '../../../lib/auth/issue_api_key.ts';
import { toFieldErrors } from '../../../lib/shared/validation.ts';
import { toFieldMap } from '../../../lib/ui/link_form.ts';
import type { WebDeps } from '../../app_env.ts';
import { forgetCachedApiKeys } from '../../middleware/api_key_auth.ts';
import type { UiEnv } from '../ui_env.ts';
import { actorOf, type RenderOps } from './ops_page.tsx';

export function createApiKeyRoutes(deps: WebDeps, render: RenderOps) {
  const app = new Hono<UiEnv>();

  app.post('/keys', async (c) => {
    const body = await c.req.parseBody({ all: true });
    const scopes = [body.scopes ?? []].flat().filter((s): s is string => typeof s === 'string');
    const name = typeof body.name === 'string' ? body.name : '';
    const parsed = createApiKeyInputSchema.safeParse({ name, scopes });
    if (!parsed.success) {
      return render(
        c,
        { keyForm: { values: { name, scopes }, errors: toFieldMap(toFieldErrors(parsed.error)) } },
        422,
      );
    }
    const { row, key } = await issueApiKey(deps.sql, parsed.data, actorOf(c).name);
    return render(c, { newKey: { name: row.name, key } }, 201);
  });

  app.post('/keys/:id/revoke', async (c) => {
    await revokeIssuedApiKey(deps.sql, Number(c.req.param('id')), actorOf(c).name);
    forgetCachedApiKeys(deps.sql);
    return c.redirect('/ui/ops?done=revoked#keys', 303);
  });

  return app;
}
