import { Hono } from 'hono';
import {
  createApiKeyInputSchema,
  issueApiKey,
  listIssuedApiKeys,
  revokeIssuedApiKey,
  toApiKey,
} from '../../lib/auth/issue_api_key.ts';
import { NotFoundError } from '../../lib/shared/errors.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { createApiKeyAuth, forgetCachedApiKeys } from '../middleware/api_key_auth.ts';
import { idempotency } from '../middleware/idempotency.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';

/** /api/v1/keys: API keys (admin scope). A new key is shown once; only its hash is stored. */
export function createKeysRoutes(deps: WebDeps) {
  const requireApiKey = createApiKeyAuth(deps);
  const app = new Hono<AppEnv>();

  app.post(
    '/',
    requireApiKey('admin'),
    jsonBody(4 * 1024),
    idempotency(deps, { redact: ['key'] }),
    async (c) => {
      const input = validate(createApiKeyInputSchema, await readJson(c));
      const { row, key } = await issueApiKey(deps.sql, input, `apikey:${c.get('apiKey').id}`);
      return c.json({ ...toApiKey(row), key }, 201, {
        Location: `/api/v1/keys/${row.id}`,
        'Cache-Control': 'no-store',
      });
    },
  );

  app.get('/', requireApiKey('admin'), async (c) => {
    return c.json({ items: await listIssuedApiKeys(deps.sql) });
  });

  app.delete('/:id', requireApiKey('admin'), async (c) => {
    const id = Number(c.req.param('id'));
    if (!Number.isSafeInteger(id) || id <= 0)
      throw new NotFoundError(`No live API key ${c.req.param('id')}.`);
    await revokeIssuedApiKey(deps.sql, id, `apikey:${c.get('apiKey').id}`);
    forgetCachedApiKeys(deps.sql);
    return c.body(null, 204);
  });

  return app;
}
