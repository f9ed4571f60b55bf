import { Hono } from 'hono';
import { z } from 'zod';
import { siteSchema } from '../../lib/links/link.ts';
import {
  getSiteShortDomain,
  mapSiteToDomain,
  siteDomainInputSchema,
  siteDomainSchema,
} from '../../lib/publishing/site_domain.ts';
import {
  breakerDecisionSchema,
  breakerHoldListSchema,
  listHolds,
  listReviewItems,
  listWordPressSiteStates,
  requestBreakerDecision,
  resolveReviewInputSchema,
  resolveReviewItem,
  reviewItemSchema,
  reviewListSchema,
  reviewQuerySchema,
  wordpressSiteListSchema,
} from '../../lib/publishing/wordpress_admin.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';
import { auth, problem, temporalUnavailable } from './openapi/common.ts';
import { type ApiOperation, describeRoute, named, type Parameter } from './openapi/describe_route.ts';

const idSchema = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const holdQuerySchema = z.object({ status: z.enum(['waiting', 'applied', 'discarded']).optional() });
const idParam: Parameter = { name: 'id', in: 'path', required: true, schema: idSchema };
const DECISIONS = {
  approve: 'Applies a hold’s changes (each only while its link is as it was read)',
  discard: 'Forgets a hold’s changes: nothing of it is applied',
} as const;
const BreakerDecision = named('BreakerDecision', breakerDecisionSchema);
const SiteDomain = named('WordPressSiteDomain', siteDomainSchema);
const siteParam: Parameter = { name: 'site', in: 'path', required: true, schema: siteSchema };

/** The operations below, in the order of their handlers (routes/api/openapi/describe_route.ts). */
export const WORDPRESS_ADMIN_OPERATIONS = [
  describeRoute({
    method: 'get',
    path: '/wordpress/sites',
    operationId: 'listWordPressSites',
    summary: 'WordPress sites: installation, migration mode, open review items',
    scope: 'admin',
    responses: {
      200: { description: 'sites', schema: named('WordPressSiteList', wordpressSiteListSchema) },
      ...auth,
    },
  }),
  describeRoute({
    method: 'get',
    path: '/wordpress/sites/{site}/domain',
    operationId: 'getWordPressSiteDomain',
    summary: 'The short domain a site’s new links are minted in',
    scope: 'admin',
    parameters: [siteParam],
    responses: {
      200: { description: 'the site’s short domain', schema: SiteDomain },
      ...auth,
      422: problem('invalid site'),
    },
  }),
  describeRoute({
    method: 'post',
    path: '/wordpress/sites/{site}/domain',
    operationId: 'setWordPressSiteDomain',
    summary: 'Mints a site’s new links in one of SHORT_DOMAINS (its existing links keep theirs)',
    scope: 'admin',
    parameters: [siteParam],
    body: named('WordPressSiteDomainInput', siteDomainInputSchema),
    responses: {
      200: { description: 'the site’s short domain now', schema: SiteDomain },
      400: problem('malformed JSON'),
      ...auth,
      415: problem('not JSON'),
      422: problem('invalid site, or a domain that is not one of SHORT_DOMAINS'),
    },
  }),
  describeRoute({
    method: 'get',
    path: '/wordpress/reviews',
    operationId: 'listWordPressReviews',
    summary: 'What identity matching could not decide (a claim refused, ambiguous matches, reused post IDs)',
    scope: 'admin',
    query: reviewQuerySchema,
    responses: {
      200: { description: 'review items, oldest first', schema: named('ReviewList', reviewListSchema) },
      ...auth,
      422: problem('bad filter'),
    },
  }),
  describeRoute({
    method: 'post',
    path: '/wordpress/reviews/{id}/resolve',
    operationId: 'resolveWordPressReview',
    summary: 'Binds a code to a post, leaves it gone, or keeps everything as it is (audited)',
    scope: 'admin',
    parameters: [idParam],
    body: named('ResolveReviewInput', resolveReviewInputSchema),
    responses: {
      200: {
        description: 'the item, resolved',
        schema: named('ReviewItem', reviewItemSchema.extend({ migrationEnded: z.boolean() })),
      },
      400: problem('malformed JSON'),
      ...auth,
      404: problem('no such item'),
      409: problem('already resolved, or the code cannot be bound'),
      415: problem('not JSON'),
      422: problem('invalid decision (each field and reason)'),
    },
  }),
  describeRoute({
    method: 'get',
    path: '/wordpress/breaker',
    operationId: 'listBreakerHolds',
    summary: 'The breaker’s holds: changes beyond a site’s budget, with counts and a sample',
    scope: 'admin',
    query: holdQuerySchema,
    responses: {
      200: { description: 'holds, newest first', schema: named('BreakerHoldList', breakerHoldListSchema) },
      ...auth,
    },
  }),
  ...(Object.keys(DECISIONS) as (keyof typeof DECISIONS)[]).map(
    (action): ApiOperation =>
      describeRoute({
        method: 'post',
        path: `/wordpress/breaker/{id}/${action}`,
        operationId: `${action}BreakerHold`,
        summary: DECISIONS[action],
        scope: 'admin',
        parameters: [idParam],
        responses: {
          202: { description: 'the site’s reconciliation was told', schema: BreakerDecision },
          ...auth,
          404: problem('no such hold'),
          409: problem('already decided'),
          503: temporalUnavailable,
        },
      }),
  ),
];

/**
 * /api/v1/wordpress (admin scope): WordPress sites' installations and migration mode, the review list of what
 * identity matching could not decide, and the breaker's holds with their decisions (ADR 0057).
 */
export function createWordPressAdminRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  const actor = (id: string | number) => `apikey:${id}`;

  app.get('/sites', async (c) => c.json(await listWordPressSiteStates(deps.sql)));

  app.get('/sites/:site/domain', async (c) => {
    const site = validate(siteSchema, c.req.param('site'));
    return c.json(await getSiteShortDomain(deps, site));
  });

  app.post('/sites/:site/domain', jsonBody(4 * 1024), async (c) => {
    const site = validate(siteSchema, c.req.param('site'));
    const input = validate(siteDomainInputSchema, await readJson(c));
    return c.json(await mapSiteToDomain(deps, site, input.domain));
  });

  app.get('/reviews', async (c) =>
    c.json(await listReviewItems(deps.sql, validate(reviewQuerySchema, c.req.query()))),
  );

  app.post('/reviews/:id/resolve', jsonBody(16 * 1024), async (c) => {
    const id = validate(idSchema, c.req.param('id'));
    const input = validate(resolveReviewInputSchema, await readJson(c));
    return c.json(await resolveReviewItem(deps, id, input, actor(c.get('apiKey').id)));
  });

  app.get('/breaker', async (c) => {
    const query = validate(holdQuerySchema, c.req.query());
    return c.json(await listHolds(deps.sql, query.status));
  });

  for (const action of Object.keys(DECISIONS) as (keyof typeof DECISIONS)[]) {
    app.post(`/breaker/:id/${action}`, async (c) => {
      const id = validate(idSchema, c.req.param('id'));
      return c.json(await requestBreakerDecision(deps, id, action, actor(c.get('apiKey').id)), 202);
    });
  }

  return app;
}
