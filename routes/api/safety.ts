import { Hono } from 'hono';
import { z } from 'zod';
import { targetUrlSchema } from '../../lib/links/link.ts';
import { safetyCheckResultSchema } from '../../lib/operations/ops_schemas.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';
import { auth, problem, retryLater } from './openapi/common.ts';
import { describeRoute, named } from './openapi/describe_route.ts';

const checkInputSchema = z.strictObject({ url: targetUrlSchema });

/** The operation below (routes/api/openapi/describe_route.ts). */
export const SAFETY_OPERATIONS = [
  describeRoute({
    method: 'post',
    path: '/safety/check',
    operationId: 'checkSafety',
    summary: 'What the safety scanner says about a destination, without creating anything',
    scope: 'links:write',
    body: named('SafetyCheckInput', checkInputSchema),
    responses: {
      200: {
        description: 'the verdict and its findings',
        schema: named('SafetyCheckResult', safetyCheckResultSchema),
      },
      400: problem('malformed JSON'),
      ...auth,
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('not an absolute http(s) URL'),
      429: retryLater('safety-check rate limit (RATE_LIMIT_SAFETY_CHECKS_PER_MINUTE); see Retry-After'),
    },
  }),
];

/** /api/v1/safety: what the scanner would say about a destination, without creating anything. */
export function createSafetyRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();

  // links:write, like creation: a check may spend Safe Browsing quota, so it is limited per key
  // (RATE_LIMIT_SAFETY_CHECKS_PER_MINUTE; 429 + Retry-After beyond it).
  app.post('/check', jsonBody(8 * 1024), async (c) => {
    await deps.rateLimits.consumeSafetyChecks(`apikey:${c.get('apiKey').id}`);
    const { url } = validate(checkInputSchema, await readJson(c));
    const result = await deps.safety.scan(url);
    return c.json({ url, verdict: result.verdict, findings: result.findings, complete: result.complete });
  });

  return app;
}
