import { Hono } from 'hono';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { BLOCKLIST_OPERATIONS } from './blocklist.ts';
import { DESTINATION_OPERATIONS } from './destinations.ts';
import { EXPORT_OPERATIONS } from './exports.ts';
import { HOOK_OPERATIONS } from './hooks.ts';
import { ApiKey, KEY_OPERATIONS } from './keys.ts';
import { LINK_QR_OPERATIONS } from './link_qr.ts';
import { LINK_OPERATIONS } from './links.ts';
import { buildOpenApiDocument } from './openapi/build_document.ts';
import { type ApiOperation, describeRoute } from './openapi/describe_route.ts';
import { OPS_OPERATIONS } from './ops.ts';
import { REPORT_OPERATIONS } from './reports.ts';
import { RETARGET_OPERATIONS } from './retargets.ts';
import { SAFETY_OPERATIONS } from './safety.ts';
import { WEBHOOK_OPERATIONS } from './webhooks.ts';
import { WORDPRESS_ADMIN_OPERATIONS } from './wordpress_admin.ts';

const OPENAPI_OPERATIONS = [
  describeRoute({
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document',
    scope: null,
    responses: { 200: { description: 'OpenAPI 3.1 document' } },
  }),
];

/**
 * Every /api/v1 operation this app serves, each described beside its handler in its route group's file
 * (routes/api/openapi/describe_route.ts); tests/routes/api/openapi.test.ts holds this list to the app's routes.
 */
export const API_OPERATIONS: ApiOperation[] = [
  ...LINK_OPERATIONS,
  ...LINK_QR_OPERATIONS,
  ...EXPORT_OPERATIONS,
  ...KEY_OPERATIONS,
  ...HOOK_OPERATIONS,
  ...SAFETY_OPERATIONS,
  ...REPORT_OPERATIONS,
  ...DESTINATION_OPERATIONS,
  ...BLOCKLIST_OPERATIONS,
  ...OPS_OPERATIONS,
  ...RETARGET_OPERATIONS,
  ...WORDPRESS_ADMIN_OPERATIONS,
  ...WEBHOOK_OPERATIONS,
  ...OPENAPI_OPERATIONS,
];

/** GET /api/v1/openapi.json (public: it describes, it does not grant). */
export function createOpenApiRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  let document: string | undefined;
  app.get('/openapi.json', (c) => {
    document ??= JSON.stringify(buildOpenApiDocument(API_OPERATIONS, deps.config.appBaseUrl, [ApiKey]));
    return c.body(document, 200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'public, max-age=300',
    });
  });
  return app;
}
