import { Hono } from 'hono';
import { z } from 'zod';
import { targetUrlSchema } from '../../lib/links/link.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { createApiKeyAuth } from '../middleware/api_key_auth.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';

const checkInputSchema = z.strictObject({ url: targetUrlSchema });

/** /api/v1/safety: what the scanner would say about a destination, without creating anything. */
export function createSafetyRoutes(deps: WebDeps) {
  const requireApiKey = createApiKeyAuth(deps);
  const app = new Hono<AppEnv>();

  // links:write, like creation: a check may spend Safe Browsing quota, so it is limited per key
  // (RATE_LIMIT_SAFETY_CHECKS_PER_MINUTE; 429 + Retry-After beyond it).
  app.post('/check', requireApiKey('links:write'), jsonBody(8 * 1024), async (c) => {
    await deps.rateLimits.consumeSafetyChecks(`apikey:${c.get('apiKey').id}`);
    const { url } = validate(checkInputSchema, await readJson(c));
    const result = await deps.safety.scan(url);
    return c.json({ url, verdict: result.verdict, findings: result.findings, complete: result.complete });
  });

  return app;
}
