import { Hono } from 'hono';
import { verifyWebhookSignature } from '../../lib/auth/webhook_signature.ts';
import { acceptWordPressEvent } from '../../lib/publishing/accept_wordpress_event.ts';
import { wordpressEventSchema } from '../../lib/publishing/wordpress_event.ts';
import { BadRequestError, UnauthorizedError } from '../../lib/shared/errors.ts';
import { parseJsonText, toFieldErrors } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { jsonBody } from '../middleware/json_body.ts';

const WEBHOOK_BODY_MAX_BYTES = 64 * 1024;

/** /api/v1/hooks: signed WordPress webhooks. */
export function createHooksRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();

  app.post('/wordpress', jsonBody(WEBHOOK_BODY_MAX_BYTES), async (c) => {
    // The HMAC covers the raw bytes exactly as sent, so read them before any parsing.
    const raw = await c.req.text();
    const check = await verifyWebhookSignature(
      await deps.getWebhookSecret(),
      c.req.header('X-Lifeline-Signature'),
      raw,
      Date.now() / 1000,
    );
    if (!check.ok) {
      deps.metrics.webhooks.inc({ event: 'unknown', outcome: 'bad_signature' });
      throw new UnauthorizedError(`Webhook rejected: ${check.reason}.`);
    }
    const parsed = wordpressEventSchema.safeParse(parseJsonText(raw));
    if (!parsed.success) {
      deps.metrics.webhooks.inc({ event: 'unknown', outcome: 'bad_payload' });
      throw new BadRequestError('The webhook payload is not valid.', toFieldErrors(parsed.error));
    }
    let accepted: Awaited<ReturnType<typeof acceptWordPressEvent>>;
    try {
      accepted = await acceptWordPressEvent(deps, parsed.data);
    } catch (error) {
      if (error instanceof BadRequestError)
        deps.metrics.webhooks.inc({ event: parsed.data.event, outcome: 'bad_payload' });
      throw error;
    }
    deps.metrics.webhooks.inc({
      event: parsed.data.event,
      outcome: accepted.duplicate ? 'duplicate' : 'accepted',
    });
    deps.logger.info(
      { reqId: c.get('requestId'), deliveryId: parsed.data.id, event: parsed.data.event, ...accepted },
      'webhook accepted',
    );
    return c.json(
      { workflowId: accepted.workflowId, ...(accepted.code ? { code: accepted.code } : {}) },
      202,
    );
  });

  return app;
}
