import { Hono } from 'hono';
import { z } from 'zod';
import {
  apiKeySchema,
  createApiKeyInputSchema,
  createdApiKeySchema,
  issueApiKey,
  listIssuedApiKeys,
  revokeIssuedApiKey,
  toApiKey,
} from '../../lib/auth/issue_api_key.ts';
import { NotFoundError } from '../../lib/shared/errors.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { forgetCachedApiKeys } from '../middleware/api_key_auth.ts';
import { idempotency } from '../middleware/idempotency.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';
import { auth, idempotencyKey, problem } from './openapi/common.ts';
import { describeRoute, named } from './openapi/describe_route.ts';

/** A key as GET /keys lists it, named in the document for clients. */
export const ApiKey = named('ApiKey', apiKeySchema);

/** The operations below, in the order of their handlers (routes/api/openapi/describe_route.ts). */
export const KEY_OPERATIONS = [
  describeRoute({
    method: 'post',
    path: '/keys',
    operationId: 'createApiKey',
    summary: 'Create an API key (the key is in this response only)',
    scope: 'admin',
    parameters: [idempotencyKey],
    body: named('CreateApiKeyInput', createApiKeyInputSchema),
    responses: {
      201: { description: 'created', schema: named('CreatedApiKey', createdApiKeySchema) },
      ...auth,
      422: problem('invalid'),
    },
  }),
  describeRoute({
    method: 'get',
    path: '/keys',
    operationId: 'listApiKeys',
    summary: 'Every API key, with scopes and last use (never the key)',
    scope: 'admin',
    responses: {
      200: { description: 'keys', schema: named('ApiKeyList', z.object({ items: z.array(apiKeySchema) })) },
      ...auth,
    },
  }),
  describeRoute({
    method: 'delete',
    path: '/keys/{id}',
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key',
    scope: 'admin',
    parameters: [{ name: 'id', in: 'path', required: true, schema: z.int().positive() }],
    responses: { 204: { description: 'revoked' }, ...auth, 404: problem('no live key with this id') },
  }),
];

/** /api/v1/keys: API keys (admin scope). A new key is shown once; only its hash is stored. */
export function createKeysRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();

  app.post('/', jsonBody(4 * 1024), idempotency(deps, { redact: ['key'] }), async (c) => {
    const input = validate(createApiKeyInputSchema, await readJson(c));
    const { row, key } = await issueApiKey(deps.sql, input, `apikey:${c.get('apiKey').id}`);
    return c.json({ ...toApiKey(row), key }, 201, {
      Location: `/api/v1/keys/${row.id}`,
      'Cache-Control': 'no-store',
    });
  });

  app.get('/', async (c) => {
    return c.json({ items: await listIssuedApiKeys(deps.sql) });
  });

  app.delete('/:id', async (c) => {
    const id = Number(c.req.param('id'));
    if (!Number.isSafeInteger(id) || id <= 0)
      throw new NotFoundError(`No live API key ${c.req.param('id')}.`);
    await revokeIssuedApiKey(deps.sql, id, `apikey:${c.get('apiKey').id}`);
    forgetCachedApiKeys(deps.sql);
    return c.body(null, 204);
  });

  return app;
}
