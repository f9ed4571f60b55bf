import { Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import {
  readSignatureHeader,
  type SignedKind,
  verifyKindSignature,
} from '../../lib/auth/webhook_signature.ts';
import { acceptSiteEvent } from '../../lib/publishing/accept_site_event.ts';
import { acceptWordPressEvent } from '../../lib/publishing/accept_wordpress_event.ts';
import { getAdoptableHosts } from '../../lib/publishing/backfill_adoption.ts';
import { backfillAcceptedSchema, backfillBatchSchema } from '../../lib/publishing/backfill_batch.ts';
import { acceptBackfillBatch } from '../../lib/publishing/backfill_posts.ts';
import { type BitlyBudgetDeps, createPlanLimitReader } from '../../lib/publishing/bitly_budget.ts';
import { siteEventSchema, wordpressEventSchema } from '../../lib/publishing/wordpress_event.ts';
import { ByteBudget } from '../../lib/shared/byte_budget.ts';
import { AppError, BadRequestError, UnauthorizedError, UnavailableError } from '../../lib/shared/errors.ts';
import { keyCode } from '../../lib/shared/link_key.ts';
import { parseJsonText, toFieldErrors } from '../../lib/shared/validation.ts';
import { createBitlyProvider } from '../../lib/vendors/bitly.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { jsonBody } from '../middleware/json_body.ts';
import { problem, retryLater, signatureHeader as signatureParam } from './openapi/common.ts';
import { describeRoute, named } from './openapi/describe_route.ts';

const WEBHOOK_BODY_MAX_BYTES = 64 * 1024;
/** A backfill batch: up to 500 posts, each with a permalink and a known short URL of up to 2 KB. */
const BACKFILL_BODY_MAX_BYTES = 4 * 1024 * 1024;
/** How long a sender turned away for want of body budget is asked to wait (the plugin's outbox retries). */
const BODY_BUDGET_RETRY_AFTER_SECONDS = 5;

/** The operations below, in the order of their handlers (routes/api/openapi/describe_route.ts). */
export const HOOK_OPERATIONS = [
  describeRoute({
    method: 'post',
    path: '/hooks/wordpress',
    operationId: 'receiveWordPressEvent',
    summary: 'Signed WordPress webhook (X-Lifeline-Signature: t=<unix>,v1=<hex HMAC-SHA256>)',
    scope: null,
    parameters: [signatureParam],
    body: named('WordPressEvent', z.union([wordpressEventSchema, siteEventSchema])),
    responses: {
      202: {
        description: 'accepted durably',
        schema: named('WebhookAccepted', z.object({ workflowId: z.string(), code: z.string().optional() })),
      },
      400: problem('bad payload'),
      401: problem('bad, missing or stale signature'),
      503: retryLater('not durably accepted; retry'),
    },
  }),
  describeRoute({
    method: 'post',
    path: '/hooks/wordpress/backfill',
    operationId: 'receiveBackfillBatch',
    summary:
      'Signed archive backfill batch from the WordPress plugin (integrations/wordpress/CONTRACT.md §1)',
    scope: null,
    parameters: [signatureParam],
    body: named('BackfillBatch', backfillBatchSchema),
    responses: {
      202: {
        description: 'written durably; one result per post',
        schema: named('BackfillAccepted', backfillAcceptedSchema),
      },
      400: problem('bad batch (the field and reason in errors[])'),
      401: problem('bad, missing or stale signature'),
      413: problem('body too large'),
      415: problem('not JSON'),
      503: retryLater('not durably accepted; send the same batch again'),
    },
  }),
];

/** /api/v1/hooks: signed WordPress webhooks and archive backfill batches. */
export function createHooksRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  /** Bodies being read by every hook request of this process, together (WEBHOOK_BODIES_MAX_BYTES). */
  const bodies = new ByteBudget(deps.config.webhookBodiesMaxBytes);

  /**
   * Refuses a request whose signature header is missing, malformed or outside the replay window before a byte of
   * its body is read (the HMAC itself needs the body: `verified` checks it after). The connection is closed with
   * the answer, so an unsigned sender cannot keep streaming into it.
   */
  function signatureHeader(what: string): MiddlewareHandler {
    return async (c, next) => {
      const header = readSignatureHeader(c.req.header('X-Lifeline-Signature'), Date.now() / 1000);
      if (!header.ok) {
        deps.metrics.webhooks.inc({ event: what, outcome: 'bad_signature' });
        throw new AppError(401, 'unauthorized', 'Unauthorized', `Webhook rejected: ${header.reason}.`, {
          headers: { 'WWW-Authenticate': 'Bearer realm="lifeline"', Connection: 'close' },
        });
      }
      await next();
    };
  }

  /**
   * Takes the body's share of the process's budget before it is read (its declared length, or the route's cap
   * when it declares none: jsonBody reads such a body whole to count it) and gives it back once answered; 503 + Retry-After when it does not fit, so a flood
   * of large deliveries costs bounded memory and the plugin's outbox delivers later (nothing is lost).
   */
  function bodyBudget(maxBytes: number, what: string): MiddlewareHandler {
    return async (c, next) => {
      const declared = Number(c.req.header('Content-Length') ?? Number.NaN);
      const bytes =
        Number.isSafeInteger(declared) && declared >= 0 && declared <= maxBytes ? declared : maxBytes;
      if (!bodies.tryTake(bytes)) {
        deps.metrics.webhooks.inc({ event: what, outcome: 'busy' });
        throw new UnavailableError(
          'Too many webhook bodies are being read at once; retry shortly.',
          BODY_BUDGET_RETRY_AFTER_SECONDS,
        );
      }
      deps.metrics.webhookBodyBytes.inc(bytes);
      try {
        await next();
      } finally {
        bodies.give(bytes);
        deps.metrics.webhookBodyBytes.dec(bytes);
      }
    };
  }

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

  app.post(
    '/wordpress',
    signatureHeader('unknown'),
    bodyBudget(WEBHOOK_BODY_MAX_BYTES, 'unknown'),
    jsonBody(WEBHOOK_BODY_MAX_BYTES),
    async (c) => {
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
    },
  );

  // Archive backfill (integrations/wordpress/CONTRACT.md §1): durable before 202, answers per post.
  app.post(
    '/wordpress/backfill',
    signatureHeader('backfill'),
    bodyBudget(BACKFILL_BODY_MAX_BYTES, 'backfill'),
    jsonBody(BACKFILL_BODY_MAX_BYTES),
    async (c) => {
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
          archiveCopies: deps.config.archive.mode !== 'off',
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
      // The plugin knows a post's link by its code on the site's short domain (never the key, ADR 0078).
      return c.json(
        { ...accepted, results: accepted.results.map((r) => (r.code ? { ...r, code: keyCode(r.code) } : r)) },
        202,
      );
    },
  );

  return app;
}
