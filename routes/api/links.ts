import { type Context, Hono } from 'hono';
import { hasScope } from '../../lib/auth/api_keys.ts';
import { getLinkStats, linkStatsQuerySchema, resolveStatsRange } from '../../lib/clicks/link_stats.ts';
import { createLink } from '../../lib/links/create_link.ts';
import { createLinksBatch, createLinksBatchInputSchema } from '../../lib/links/create_links_batch.ts';
import { deleteLink } from '../../lib/links/delete_link.ts';
import { editLink } from '../../lib/links/edit_link.ts';
import { getLinkRowOrThrow, getPostLinkRowOrThrow, toLinksWithVendors } from '../../lib/links/get_link.ts';
import type { StoredLink as LinkRow } from '../../lib/links/link.ts';
import {
  createLinkInputSchema,
  postIdSchema,
  siteSchema,
  toLink,
  updateLinkInputSchema,
} from '../../lib/links/link.ts';
import { linkListQuerySchema, listLinkPage } from '../../lib/links/list_links.ts';
import { kickSyncQueueInBackground, syncAfterChange } from '../../lib/propagation/sync_after_change.ts';
import { BadRequestError, PreconditionFailedError } from '../../lib/shared/errors.ts';
import { toFieldErrors, validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { createApiKeyAuth } from '../middleware/api_key_auth.ts';
import { idempotency } from '../middleware/idempotency.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';

const CREATE_BODY_MAX_BYTES = 64 * 1024;
/** 1,000 links of up to ~2 KB each, with room for options. */
const BATCH_BODY_MAX_BYTES = 4 * 1024 * 1024;
const PATCH_BODY_MAX_BYTES = 16 * 1024;

/** A link's version as an entity tag, for If-Match on PATCH. */
const toEtag = (row: LinkRow) => `"${row.version}"`;

/** The version an If-Match header names (`"7"` or `W/"7"`), undefined without one. */
function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const m = /^\s*(?:W\/)?"(\d{1,9})"\s*$/.exec(header);
  if (!m) throw new PreconditionFailedError('If-Match must be an ETag this API returned, e.g. "3".');
  return Number(m[1]);
}

/** /api/v1/links: the integrators' link API (API.md). */
export function createLinksRoutes(deps: WebDeps) {
  const requireApiKey = createApiKeyAuth(deps);
  const idempotent = idempotency(deps);
  const app = new Hono<AppEnv>();
  const createDeps = (c: Context<AppEnv>) => ({
    sql: deps.sql,
    codeLength: deps.config.codeLength,
    targetPolicy: deps.targetPolicy,
    safety: deps.safety,
    mayManagePostLinks: mayManagePostLinks(c),
  });
  const actorOf = (c: Context<AppEnv>) => `apikey:${c.get('apiKey').id}`;
  // Post-bound links (WordPress articles) are for admin keys only (lib/links/post_link_rules.ts).
  const mayManagePostLinks = (c: Context<AppEnv>) => hasScope(c.get('apiKey').scopes, 'admin');

  async function respondWithLink(row: LinkRow) {
    const [link] = await toLinksWithVendors(deps.sql, deps.config.shortBaseUrl, [row]);
    return link!;
  }

  app.post('/', requireApiKey('links:write'), jsonBody(CREATE_BODY_MAX_BYTES), idempotent, async (c) => {
    const input = validate(createLinkInputSchema, await readJson(c));
    await deps.rateLimits.consumeCreations(actorOf(c));
    const { link, created } = await createLink(createDeps(c), input, {
      owner: actorOf(c),
      actor: actorOf(c),
      origin: 'api',
    });
    // New links are synced too: the serving store, the vendor and an expiry timer follow from Postgres.
    if (created)
      c.header('Lifeline-Sync', await syncAfterChange(deps, link.code, `link.created by ${actorOf(c)}`));
    const body = await respondWithLink(link);
    c.header('ETag', toEtag(link));
    return c.json(body, created ? 201 : 200, created ? { Location: `/api/v1/links/${link.code}` } : {});
  });

  app.post('/batch', requireApiKey('links:write'), jsonBody(BATCH_BODY_MAX_BYTES), idempotent, async (c) => {
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
    const answered = await toLinksWithVendors(
      deps.sql,
      deps.config.shortBaseUrl,
      results.flatMap((r) => ('link' in r ? [r.link] : [])),
    );
    const byCode = new Map(answered.map((l) => [l.code, l]));
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

  app.get('/', requireApiKey('links:read'), async (c) => {
    const query = validate(linkListQuerySchema, c.req.query());
    const page = await listLinkPage(deps.sql, query);
    return c.json({
      items: page.items.map((row) => toLink(row, deps.config.shortBaseUrl, page.vendors.get(row.code))),
      nextCursor: page.nextCursor,
      prevCursor: page.prevCursor,
    });
  });

  app.get('/by-post/:site/:postId', requireApiKey('links:read'), async (c) => {
    const site = validate(siteSchema, c.req.param('site'));
    const postId = validate(postIdSchema, c.req.param('postId'));
    return c.json(await respondWithLink(await getPostLinkRowOrThrow(deps.sql, site, postId)));
  });

  app.get('/:code/stats', requireApiKey('links:read'), async (c) => {
    const code = c.req.param('code');
    await getLinkRowOrThrow(deps.sql, code);
    const range = resolveStatsRange(validate(linkStatsQuerySchema, c.req.query()));
    return c.json(await getLinkStats(deps.sql, code, range, deps.vendorClicks));
  });

  app.get('/:code', requireApiKey('links:read'), async (c) => {
    const code = c.req.param('code');
    const row = await getLinkRowOrThrow(deps.sql, code);
    return c.json(await respondWithLink(row), 200, { ETag: toEtag(row) });
  });

  app.patch('/:code', requireApiKey('links:write'), jsonBody(PATCH_BODY_MAX_BYTES), async (c) => {
    const input = validate(updateLinkInputSchema, await readJson(c));
    const expectedVersion = parseIfMatch(c.req.header('If-Match'));
    const result = await editLink(deps, c.req.param('code'), input, actorOf(c), {
      ...(expectedVersion === undefined ? {} : { expectedVersion }),
      mayManagePostLinks: mayManagePostLinks(c),
    });
    if (result.sync) c.header('Lifeline-Sync', result.sync);
    return c.json(await respondWithLink(result.link), 200, { ETag: toEtag(result.link) });
  });

  app.delete('/:code', requireApiKey('links:write'), async (c) => {
    const reason = c.req.query('reason')?.slice(0, 500) ?? null;
    const { sync } = await deleteLink(deps, c.req.param('code'), actorOf(c), reason, {
      mayManagePostLinks: mayManagePostLinks(c),
    });
    return c.body(null, 204, { 'Lifeline-Sync': sync });
  });

  return app;
}
