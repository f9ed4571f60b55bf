import { Hono } from 'hono';
import { type SignedKind, verifyKindSignature } from '../../lib/auth/webhook_signature.ts';
import { acceptSiteEvent } from '../../lib/publishing/accept_site_event.ts';
import { acceptWordPressEvent } from '../../lib/publishing/accept_wordpress_event.ts';
import { backfillBatchSchema } from '../../lib/publishing/backfill_batch.ts';
import { acceptBackfillBatch, getAdoptableHosts } from '../../lib/publishing/backfill_posts.ts';
import { type BitlyBudgetDeps, createPlanLimitReader } from '../../lib/publishing/bitly_budget.ts';
import { siteEventSchema, wordpressEventSchema } from '../../lib/publishing/wordpress_event.ts';
import { BadRequestError, UnauthorizedError } from '../../lib/shared/errors.ts';
import { parseJsonText, toFieldErrors } from '../../lib/shared/validation.ts';
import { createBitlyProvider } from '../../lib/vendors/bitly.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { jsonBody } from '../middleware/json_body.ts';

const WEBHOOK_BODY_MAX_BYTES = 64 * 1024;
/** A backfill batch: up to 500 posts, each with a permalink and a known short URL of up to 2 KB. */
const BACKFILL_BODY_MAX_BYTES = 4 * 1024 * 1024;

/** /api/v1/hooks: signed WordPress webhooks and archive backfill batches. */
export function createHooksRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  // What a backfill may spend on Bitly; the plan limit is read from Bitly once a minute at most.
  const bitlyBudget: BitlyBudgetDeps | undefined = deps.config.bitly
    ? {
        ...deps.config.bitlyBudget,
        readPlanLimit: createPlanLimitReader(
          createBitlyProvider(deps.config.bitly, { logger: deps.logger }),
          deps.logger,
        ),
      }
    : undefined;

  /**
   * The raw body, once its signature checks out (the HMAC covers the bytes exactly as sent), signed for its kind;
   * a v1 signature from a plugin that predates kind-bound ones still passes (lib/auth/webhook_signature.ts).
   */
  async function verified(
    raw: string,
    header: string | undefined,
    what: string,
    kind: SignedKind,
  ): Promise<void> {
    const secret = await deps.getWebhookSecret();
    const check = await verifyKindSignature(secret, kind, header, raw, Date.now() / 1000, { legacy: true });
    if (!check.ok) {
      deps.metrics.webhooks.inc({ event: what, outcome: 'bad_signature' });
      throw new UnauthorizedError(`Webhook rejected: ${check.reason}.`);
    }
  }

  app.post('/wordpress', jsonBody(WEBHOOK_BODY_MAX_BYTES), async (c) => {
    const raw = await c.req.text();
    await verified(raw, c.req.header('X-Lifeline-Signature'), 'unknown', 'event');
    const body = parseJsonText(raw);
    if ((body as { event?: unknown } | null)?.event === 'site.permalinks_changed') {
      const site = siteEventSchema.safeParse(body);
      if (!site.success) {
        deps.metrics.webhooks.inc({ event: 'unknown', outcome: 'bad_payload' });
        throw new BadRequestError('The webhook payload is not valid.', toFieldErrors(site.error));
      }
      const accepted = await acceptSiteEvent(deps, site.data);
      deps.metrics.webhooks.inc({
        event: site.data.event,
        outcome: accepted.duplicate ? 'duplicate' : 'accepted',
      });
      deps.logger.info(
        { reqId: c.get('requestId'), deliveryId: site.data.id, event: site.data.event, ...accepted },
        'webhook accepted',
      );
      return c.json({ workflowId: accepted.workflowId }, 202);
    }
    const parsed = wordpressEventSchema.safeParse(body);
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

  // Archive backfill (integrations/wordpress/CONTRACT.md §1): durable before 202, answers per post.
  app.post('/wordpress/backfill', jsonBody(BACKFILL_BODY_MAX_BYTES), async (c) => {
    const raw = await c.req.text();
    await verified(raw, c.req.header('X-Lifeline-Signature'), 'backfill', 'backfill');
    const parsed = backfillBatchSchema.safeParse(parseJsonText(raw));
    if (!parsed.success) {
      deps.metrics.webhooks.inc({ event: 'backfill', outcome: 'bad_payload' });
      throw new BadRequestError('The backfill batch is not valid.', toFieldErrors(parsed.error));
    }
    const batch = parsed.data;
    const accepted = await acceptBackfillBatch(
      {
        sql: deps.sql,
        logger: deps.logger,
        codeLength: deps.config.codeLength,
        safety: deps.safety,
        targetPolicy: deps.targetPolicy,
        adoptableHosts: getAdoptableHosts(deps.config),
        bitlyDomain: deps.config.bitly?.domain.toLowerCase(),
        bitlyBudget,
        resolver: deps.resolver,
        workflows: deps.adoption,
      },
      batch,
    );
    deps.metrics.webhooks.inc({ event: 'backfill', outcome: batch.dryRun ? 'dry_run' : 'accepted' });
    const counts: Record<string, number> = {};
    for (const r of accepted.results) counts[r.outcome] = (counts[r.outcome] ?? 0) + 1;
    deps.logger.info(
      { reqId: c.get('requestId'), id: batch.id, site: batch.site, posts: batch.posts.length, counts },
      'backfill batch accepted',
    );
    return c.json(accepted, 202);
  });

  return app;
}
