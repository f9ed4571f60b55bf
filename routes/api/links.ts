import { type Context, Hono } from 'hono';
import { z } from 'zod';
import { requestDestinationArchive } from '../../lib/archive/request_destination_archive.ts';
import { hasScope } from '../../lib/auth/api_keys.ts';
import {
  getLinkStats,
  linkStatsQuerySchema,
  linkStatsSchema,
  resolveStatsRange,
} from '../../lib/clicks/link_stats.ts';
import {
  bulkChangeInputSchema,
  bulkChangeSchema,
  getBulkChangeView,
  requestBulkChange,
  toBulkChangeJson,
} from '../../lib/links/bulk_change.ts';
import { createLink } from '../../lib/links/create_link.ts';
import {
  batchResultSchema,
  createLinksBatch,
  createLinksBatchInputSchema,
} from '../../lib/links/create_links_batch.ts';
import { deleteLink } from '../../lib/links/delete_link.ts';
import { editLink } from '../../lib/links/edit_link.ts';
import {
  getLinkRowOrThrow,
  getPostLinkRowOrThrow,
  linkKeyOf,
  toLinksWithVendors,
} from '../../lib/links/get_link.ts';
import type { StoredLink as LinkRow } from '../../lib/links/link.ts';
import {
  batchLinkInputSchema,
  createLinkInputSchema,
  linkSchema,
  postIdSchema,
  siteSchema,
  toLink,
  updateLinkInputSchema,
} from '../../lib/links/link.ts';
import { linkListQuerySchema, linkListSchema, listLinkPage } from '../../lib/links/list_links.ts';
import { kickSyncQueueInBackground, syncAfterChange } from '../../lib/propagation/sync_after_change.ts';
import { BadRequestError, PreconditionFailedError } from '../../lib/shared/errors.ts';
import { toFieldErrors, validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { idempotency } from '../middleware/idempotency.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';
import {
  auth,
  codeParam,
  domainParam,
  idempotencyKey,
  ifMatch,
  problem,
  retryLater,
  temporalUnavailable,
} from './openapi/common.ts';
import { describeRoute, named } from './openapi/describe_route.ts';

const CREATE_BODY_MAX_BYTES = 64 * 1024;
/** 1,000 links of up to ~2 KB each, with room for options. */
const BATCH_BODY_MAX_BYTES = 4 * 1024 * 1024;
const PATCH_BODY_MAX_BYTES = 16 * 1024;
/** 1,000 codes of up to 64 characters, quoted, with room for the rest. */
const BULK_BODY_MAX_BYTES = 128 * 1024;

/** Where the API serves a link: its code, and its short domain when it is not the default (ADR 0078). */
function linkApiPath(row: LinkRow, link: { code: string; domain: string }): string {
  const path = `/api/v1/links/${link.code}`;
  return row.domain === '' ? path : `${path}?domain=${encodeURIComponent(link.domain)}`;
}

/** A link's version as an entity tag, for If-Match on PATCH. */
const toEtag = (row: LinkRow) => `"${row.version}"`;

/** The version an If-Match header names (`"7"` or `W/"7"`), undefined without one. */
function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const m = /^\s*(?:W\/)?"(\d{1,9})"\s*$/.exec(header);
  if (!m) throw new PreconditionFailedError('If-Match must be an ETag this API returned, e.g. "3".');
  return Number(m[1]);
}

const Link = named('Link', linkSchema);
const CreateLinkInput = named('CreateLinkInput', createLinkInputSchema);
const BulkChange = named('BulkChange', bulkChangeSchema);

/** The operations below, in the order of their handlers (routes/api/openapi/describe_route.ts). */
export const LINK_OPERATIONS = [
  describeRoute({
    method: 'post',
    path: '/links',
    operationId: 'createLink',
    summary: 'Create a short link (or get the existing one for the same url and options)',
    scope: 'links:write',
    parameters: [idempotencyKey],
    body: CreateLinkInput,
    responses: {
      201: { description: 'created', schema: Link, headers: ['Location', 'ETag', 'Lifeline-Sync'] },
      200: { description: 'the same owner already has this link (dedupe)', schema: Link },
      400: problem('malformed JSON'),
      ...auth,
      409: problem('alias taken, or the article already has its link'),
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('invalid, blocked target, or outside ALLOWED_TARGET_HOSTS; or Idempotency-Key reuse'),
      429: retryLater('creation rate limit; see Retry-After'),
    },
  }),
  describeRoute({
    method: 'post',
    path: '/links/batch',
    operationId: 'createLinksBatch',
    summary: 'Create up to 1,000 links; per-item results in input order',
    scope: 'links:write',
    parameters: [idempotencyKey],
    // The handler validates the items one by one; described whole, each item is a BatchLinkInput (a
    // CreateLinkInput without routing rules).
    body: named(
      'CreateLinksBatchInput',
      createLinksBatchInputSchema.extend({ links: z.array(batchLinkInputSchema).min(1).max(1000) }),
    ),
    responses: {
      200: {
        description: 'one result per item',
        schema: named('BatchResult', batchResultSchema),
        headers: ['Lifeline-Sync'],
      },
      400: problem('malformed, empty, or over 1,000 links'),
      ...auth,
      413: problem('body too large'),
      429: retryLater('creation rate limit'),
    },
  }),
  describeRoute({
    method: 'post',
    path: '/links/bulk',
    operationId: 'requestBulkChange',
    summary:
      'Tag, untag, set the expiry of, block or delete many links (codes or a list filter), in the background: ' +
      'audited per link, propagated through the sync queue; links the key may not change are skipped',
    scope: 'links:write',
    body: named('BulkChangeInput', bulkChangeInputSchema),
    responses: {
      202: { description: 'the run, started', schema: BulkChange, headers: ['Location'] },
      400: problem('malformed JSON'),
      ...auth,
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('invalid request; the problem names the field'),
      503: temporalUnavailable,
    },
  }),
  describeRoute({
    method: 'get',
    path: '/links/bulk/{id}',
    operationId: 'getBulkChange',
    summary: 'A bulk change: status, counts and the first skipped links with why',
    scope: 'links:read',
    parameters: [{ name: 'id', in: 'path', required: true, schema: z.string() }],
    responses: {
      200: { description: 'the run', schema: BulkChange },
      ...auth,
      404: problem('no such run'),
    },
  }),
  describeRoute({
    method: 'get',
    path: '/links',
    operationId: 'listLinks',
    summary: 'List and search links, newest first, with cursor pagination',
    scope: 'links:read',
    query: linkListQuerySchema,
    responses: {
      200: { description: 'a page of links', schema: named('LinkList', linkListSchema) },
      400: problem('a cursor this server did not issue'),
      ...auth,
      422: problem('invalid filter'),
    },
  }),
  describeRoute({
    method: 'get',
    path: '/links/by-post/{site}/{postId}',
    operationId: 'getLinkByPost',
    summary: "An article's canonical short link",
    scope: 'links:read',
    parameters: [
      { name: 'site', in: 'path', required: true, schema: siteSchema },
      { name: 'postId', in: 'path', required: true, schema: postIdSchema },
    ],
    responses: {
      200: { description: 'the link', schema: Link },
      ...auth,
      404: problem('not minted yet'),
      422: problem('invalid site or post id'),
    },
  }),
  describeRoute({
    method: 'get',
    path: '/links/{code}/stats',
    operationId: 'getLinkStats',
    summary: 'Clicks of a link: totals by kind, per day, top countries and referrers',
    scope: 'links:read',
    parameters: [codeParam, domainParam],
    query: linkStatsQuerySchema,
    responses: {
      200: { description: 'stats', schema: named('LinkStats', linkStatsSchema) },
      ...auth,
      404: problem('no such link'),
      422: problem('invalid window'),
    },
  }),
  describeRoute({
    method: 'get',
    path: '/links/{code}',
    operationId: 'getLink',
    summary: 'One link',
    scope: 'links:read',
    parameters: [codeParam, domainParam],
    responses: {
      200: { description: 'the link', schema: Link, headers: ['ETag'] },
      ...auth,
      404: problem('no such link'),
      422: problem('a domain that is not one of SHORT_DOMAINS'),
    },
  }),
  describeRoute({
    method: 'patch',
    path: '/links/{code}',
    operationId: 'updateLink',
    summary:
      'Retarget, retitle, change expiry, status (active|gone), redirect status, tags or routing rules; audited and synced',
    scope: 'links:write',
    parameters: [codeParam, domainParam, ifMatch],
    body: named('UpdateLinkInput', updateLinkInputSchema),
    responses: {
      200: { description: 'the link after the change', schema: Link, headers: ['ETag', 'Lifeline-Sync'] },
      400: problem('malformed JSON'),
      ...auth,
      404: problem('no such link (or deleted)'),
      412: problem('If-Match names an older version'),
      422: problem('invalid change'),
    },
  }),
  describeRoute({
    method: 'delete',
    path: '/links/{code}',
    operationId: 'deleteLink',
    summary: 'Delete a link: its code answers 410 forever and is never minted again',
    scope: 'links:write',
    parameters: [
      codeParam,
      domainParam,
      { name: 'reason', in: 'query', description: 'kept in the audit log', schema: z.string().max(500) },
    ],
    responses: {
      204: { description: 'deleted', headers: ['Lifeline-Sync'] },
      ...auth,
      404: problem('no such link'),
      422: problem('a domain that is not one of SHORT_DOMAINS'),
    },
  }),
];

/** /api/v1/links: the integrators' link API (API.md). */
export function createLinksRoutes(deps: WebDeps) {
  const idempotent = idempotency(deps);
  const app = new Hono<AppEnv>();
  const createDeps = (c: Context<AppEnv>) => ({
    sql: deps.sql,
    codeLength: deps.config.codeLength,
    targetPolicy: deps.targetPolicy,
    safety: deps.safety,
    mayManagePostLinks: mayManagePostLinks(c),
    domains: deps.config,
    archiveCopies: deps.config.archive.mode !== 'off',
  });
  // The link a route names: its code in the path, and its short domain in `?domain=` unless the default's.
  const keyOf = (c: Context<AppEnv>) => linkKeyOf(deps.config, c.req.param('code')!, c.req.query('domain'));
  const actorOf = (c: Context<AppEnv>) => `apikey:${c.get('apiKey').id}`;
  // Post-bound links (WordPress articles) are for admin keys only (lib/links/post_link_rules.ts).
  const mayManagePostLinks = (c: Context<AppEnv>) => hasScope(c.get('apiKey').scopes, 'admin');

  async function respondWithLink(row: LinkRow) {
    const [link] = await toLinksWithVendors(deps.sql, deps.config, [row]);
    return link!;
  }

  app.post('/', jsonBody(CREATE_BODY_MAX_BYTES), idempotent, async (c) => {
    const input = validate(createLinkInputSchema, await readJson(c));
    await deps.rateLimits.consumeCreations(actorOf(c));
    const { link, created } = await createLink(createDeps(c), input, {
      owner: actorOf(c),
      actor: actorOf(c),
      origin: 'api',
    });
    // New links are synced too: the serving store, the vendor and an expiry timer follow from Postgres.
    if (created) {
      c.header('Lifeline-Sync', await syncAfterChange(deps, link.code, `link.created by ${actorOf(c)}`));
      await requestDestinationArchive(deps, link.code);
    }
    const body = await respondWithLink(link);
    c.header('ETag', toEtag(link));
    return c.json(body, created ? 201 : 200, created ? { Location: linkApiPath(link, body) } : {});
  });

  app.post('/batch', jsonBody(BATCH_BODY_MAX_BYTES), idempotent, async (c) => {
    // A malformed batch (not an object with 1..1,000 links) is a 400; bad items fail one by one below.
    const parsed = createLinksBatchInputSchema.safeParse(await readJson(c));
    if (!parsed.success) throw new BadRequestError('The batch is not valid.', toFieldErrors(parsed.error));
    const { links } = parsed.data;
    await deps.rateLimits.consumeCreations(actorOf(c), links.length);
    const results = await createLinksBatch(createDeps(c), links, {
      owner: actorOf(c),
      actor: actorOf(c),
      origin: 'api',
    });
    const createdCodes = results.flatMap((r) => (r.status === 201 && 'link' in r ? [r.link.code] : []));
    const linked = results.flatMap((r) => ('link' in r ? [r.link] : []));
    const answered = await toLinksWithVendors(deps.sql, deps.config, linked);
    const byCode = new Map(linked.map((row, i) => [row.code, answered[i]!]));
    // Queued with the rows (createLinksBatch); one kick wakes the drainer, which syncs them in batches.
    kickSyncQueueInBackground(deps, createdCodes, `link.created by ${actorOf(c)}`);
    if (createdCodes.length > 0) c.header('Lifeline-Sync', 'queued');
    return c.json({
      results: results.map((r) =>
        'link' in r
          ? {
              index: r.index,
              status: r.status,
              link: byCode.get(r.link.code)!,
            }
          : r,
      ),
    });
  });

  app.post('/bulk', jsonBody(BULK_BODY_MAX_BYTES), async (c) => {
    const input = validate(bulkChangeInputSchema, await readJson(c));
    const run = await requestBulkChange(deps, input, {
      actor: actorOf(c),
      mayManagePostLinks: mayManagePostLinks(c),
    });
    return c.json(toBulkChangeJson(run), 202, { Location: `/api/v1/links/bulk/${run.id}` });
  });

  app.get('/bulk/:id', async (c) => {
    const { run, skippedSample } = await getBulkChangeView(deps.sql, c.req.param('id'));
    return c.json(toBulkChangeJson(run, skippedSample));
  });

  app.get('/', async (c) => {
    const query = validate(linkListQuerySchema, c.req.query());
    const page = await listLinkPage(deps.sql, query, deps.config);
    return c.json({
      items: page.items.map((row) => toLink(row, deps.config, page.vendors.get(row.code))),
      nextCursor: page.nextCursor,
      prevCursor: page.prevCursor,
    });
  });

  app.get('/by-post/:site/:postId', async (c) => {
    const site = validate(siteSchema, c.req.param('site'));
    const postId = validate(postIdSchema, c.req.param('postId'));
    return c.json(await respondWithLink(await getPostLinkRowOrThrow(deps.sql, site, postId)));
  });

  app.get('/:code/stats', async (c) => {
    const code = keyOf(c);
    await getLinkRowOrThrow(deps.sql, code);
    const range = resolveStatsRange(validate(linkStatsQuerySchema, c.req.query()));
    return c.json(await getLinkStats(deps.sql, code, range, deps.vendorClicks));
  });

  app.get('/:code', async (c) => {
    const code = keyOf(c);
    const row = await getLinkRowOrThrow(deps.sql, code);
    return c.json(await respondWithLink(row), 200, { ETag: toEtag(row) });
  });

  app.patch('/:code', jsonBody(PATCH_BODY_MAX_BYTES), async (c) => {
    const input = validate(updateLinkInputSchema, await readJson(c));
    const expectedVersion = parseIfMatch(c.req.header('If-Match'));
    const result = await editLink(deps, keyOf(c), input, actorOf(c), {
      ...(expectedVersion === undefined ? {} : { expectedVersion }),
      mayManagePostLinks: mayManagePostLinks(c),
    });
    if (result.sync) c.header('Lifeline-Sync', result.sync);
    if (result.changed && input.url !== undefined) await requestDestinationArchive(deps, result.link.code);
    return c.json(await respondWithLink(result.link), 200, { ETag: toEtag(result.link) });
  });

  app.delete('/:code', async (c) => {
    const reason = c.req.query('reason')?.slice(0, 500) ?? null;
    const { sync } = await deleteLink(deps, keyOf(c), actorOf(c), reason, {
      mayManagePostLinks: mayManagePostLinks(c),
    });
    return c.body(null, 204, { 'Lifeline-Sync': sync });
  });

  return app;
}
