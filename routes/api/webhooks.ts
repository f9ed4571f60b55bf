import { type Context, Hono } from 'hono';
import { z } from 'zod';
import { NotFoundError } from '../../lib/shared/errors.ts';
import { parseJsonText, validate } from '../../lib/shared/validation.ts';
import {
  createEndpoint,
  createWebhookInputSchema,
  DELIVERY_STATES,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  redeliver,
  rotateEndpointSecret,
  rotateWebhookInputSchema,
  updateEndpoint,
  updateWebhookInputSchema,
  type WebhookManagementDeps,
  webhookDeliverySchema,
  webhookEndpointSchema,
  webhookSecretAnswerSchema,
} from '../../lib/webhooks/manage_webhooks.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { idempotency } from '../middleware/idempotency.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';
import { auth, idempotencyKey, problem } from './openapi/common.ts';
import { describeRoute, named } from './openapi/describe_route.ts';

/** What managing webhooks needs of the web tier (the API and /ui/webhooks share it). */
export function webhookManagementDepsOf(deps: WebDeps): WebhookManagementDeps {
  return {
    sql: deps.sql,
    logger: deps.logger,
    outgoing: deps.config.outgoing,
    secretGraceMs: deps.config.webhooks.secretGraceMs,
    kick: (reason) => deps.workflows.kickWebhooks(reason, deps.config.webhooks.pollIntervalMs),
  };
}

const WebhookEndpoint = named('WebhookEndpoint', webhookEndpointSchema);
const WebhookEndpointWithSecret = named('WebhookEndpointWithSecret', webhookSecretAnswerSchema);
const WebhookDelivery = named('WebhookDelivery', webhookDeliverySchema);
const idParam = { name: 'id', in: 'path' as const, required: true, schema: z.int().positive() };
const deliveryQuerySchema = z.strictObject({
  state: z.enum(DELIVERY_STATES).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
});

/** The operations below, in the order of their handlers (routes/api/openapi/describe_route.ts). */
export const WEBHOOK_OPERATIONS = [
  describeRoute({
    method: 'post',
    path: '/webhooks',
    operationId: 'createWebhookEndpoint',
    summary: 'Add an outgoing webhook endpoint (its signing secret is in this answer only)',
    scope: 'admin',
    parameters: [idempotencyKey],
    body: named('CreateWebhookInput', createWebhookInputSchema),
    responses: {
      201: { description: 'created', schema: WebhookEndpointWithSecret },
      ...auth,
      422: problem('invalid, or an address the outgoing-request rule refuses'),
    },
  }),
  describeRoute({
    method: 'get',
    path: '/webhooks',
    operationId: 'listWebhookEndpoints',
    summary: 'Every outgoing webhook endpoint (never its secret)',
    scope: 'admin',
    responses: {
      200: {
        description: 'endpoints',
        schema: named('WebhookEndpointList', z.object({ items: z.array(webhookEndpointSchema) })),
      },
      ...auth,
    },
  }),
  describeRoute({
    method: 'get',
    path: '/webhooks/{id}',
    operationId: 'getWebhookEndpoint',
    summary: 'One outgoing webhook endpoint',
    scope: 'admin',
    parameters: [idParam],
    responses: {
      200: { description: 'the endpoint', schema: WebhookEndpoint },
      ...auth,
      404: problem('none'),
    },
  }),
  describeRoute({
    method: 'patch',
    path: '/webhooks/{id}',
    operationId: 'updateWebhookEndpoint',
    summary: 'Change an endpoint: URL, description, events, or switch it on or off',
    scope: 'admin',
    parameters: [idParam],
    body: named('UpdateWebhookInput', updateWebhookInputSchema),
    responses: {
      200: { description: 'changed', schema: WebhookEndpoint },
      ...auth,
      404: problem('none'),
      422: problem('invalid'),
    },
  }),
  describeRoute({
    method: 'delete',
    path: '/webhooks/{id}',
    operationId: 'deleteWebhookEndpoint',
    summary: 'Remove an endpoint with its deliveries',
    scope: 'admin',
    parameters: [idParam],
    responses: { 204: { description: 'removed' }, ...auth, 404: problem('none') },
  }),
  describeRoute({
    method: 'post',
    path: '/webhooks/{id}/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: 'A new signing secret (in this answer only); the old one still signs for the grace',
    scope: 'admin',
    parameters: [idParam],
    body: named('RotateWebhookSecretInput', rotateWebhookInputSchema),
    responses: {
      200: { description: 'rotated', schema: WebhookEndpointWithSecret },
      ...auth,
      404: problem('none'),
      422: problem('invalid'),
    },
  }),
  describeRoute({
    method: 'get',
    path: '/webhooks/{id}/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: "An endpoint's deliveries, newest first, each with its attempts",
    scope: 'admin',
    parameters: [idParam],
    query: deliveryQuerySchema,
    responses: {
      200: {
        description: 'deliveries',
        schema: named('WebhookDeliveryList', z.object({ items: z.array(webhookDeliverySchema) })),
      },
      ...auth,
      404: problem('none'),
      422: problem('invalid query'),
    },
  }),
  describeRoute({
    method: 'post',
    path: '/webhooks/{id}/deliveries/{deliveryId}/redeliver',
    operationId: 'redeliverWebhook',
    summary: 'Send a delivery again, under the same webhook-id, with a new round of retries',
    scope: 'admin',
    parameters: [idParam, { name: 'deliveryId', in: 'path', required: true, schema: z.string() }],
    responses: {
      202: { description: 'queued', schema: WebhookDelivery },
      ...auth,
      404: problem('none'),
    },
  }),
];

const idOf = (c: Context<AppEnv>) => {
  const id = Number(c.req.param('id'));
  if (!Number.isSafeInteger(id) || id <= 0)
    throw new NotFoundError(`No webhook endpoint ${c.req.param('id')}.`);
  return id;
};

/** /api/v1/webhooks: outgoing webhook endpoints, their deliveries, "send again" (admin scope; ADR 0082). */
export function createWebhookRoutes(deps: WebDeps) {
  const manage = webhookManagementDepsOf(deps);
  const actorOf = (c: Context<AppEnv>) => `apikey:${c.get('apiKey').id}`;
  const app = new Hono<AppEnv>();

  app.post('/', jsonBody(8 * 1024), idempotency(deps, { redact: ['secret'] }), async (c) => {
    const input = validate(createWebhookInputSchema, await readJson(c));
    const { endpoint, secret } = await createEndpoint(manage, input, actorOf(c));
    return c.json({ ...endpoint, secret }, 201, {
      Location: `/api/v1/webhooks/${endpoint.id}`,
      'Cache-Control': 'no-store',
    });
  });

  app.get('/', async (c) => c.json({ items: await listEndpoints(deps.sql) }));

  app.get('/:id', async (c) => c.json(await getEndpoint(deps.sql, idOf(c))));

  app.patch('/:id', jsonBody(8 * 1024), async (c) => {
    const id = idOf(c);
    const input = validate(updateWebhookInputSchema, await readJson(c));
    return c.json(await updateEndpoint(manage, id, input, actorOf(c)));
  });

  app.delete('/:id', async (c) => {
    await deleteEndpoint(manage, idOf(c), actorOf(c));
    return c.body(null, 204);
  });

  app.post('/:id/rotate-secret', jsonBody(1024), async (c) => {
    const id = idOf(c);
    // No body: the default grace.
    const raw = await c.req.text();
    const input = validate(
      rotateWebhookInputSchema,
      raw.trim() ? parseJsonText(raw, { refuseNul: false }) : {},
    );
    const { endpoint, secret } = await rotateEndpointSecret(manage, id, input, actorOf(c));
    return c.json({ ...endpoint, secret }, 200, { 'Cache-Control': 'no-store' });
  });

  app.get('/:id/deliveries', async (c) => {
    const id = idOf(c);
    const query = validate(deliveryQuerySchema, c.req.query());
    return c.json({ items: await listDeliveries(deps.sql, id, query) });
  });

  app.post('/:id/deliveries/:deliveryId/redeliver', async (c) => {
    const delivery = await redeliver(manage, idOf(c), c.req.param('deliveryId'), actorOf(c));
    return c.json(delivery, 202);
  });

  return app;
}
