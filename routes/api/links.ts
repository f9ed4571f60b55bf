import { Hono } from 'hono';
import { NotFoundError } from '../../lib/errors.ts';
import { validate } from '../../lib/http/validation.ts';
import { createLink } from '../../lib/links/create_link.ts';
import { createLinkInputSchema, postIdSchema, siteSchema, toLink } from '../../lib/links/link.ts';
import { getLinkByCode, getLinkByPost, listVendorLinks } from '../../lib/stores/link_store.ts';
import type { WebDeps } from '../../lib/web_deps.ts';
import type { AppEnv } from '../app_env.ts';
import { createApiKeyAuth } from '../middleware/api_key_auth.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';

const CREATE_BODY_MAX_BYTES = 64 * 1024;

/** /api/v1/links: the integrators' link API. */
export function createLinksRoutes(deps: WebDeps) {
  const requireApiKey = createApiKeyAuth(deps);
  const app = new Hono<AppEnv>();

  async function respondWithLink(code: string | null, row: Parameters<typeof toLink>[0] | null) {
    if (!row || row.deletedAt) throw new NotFoundError(code ? `No link ${code}.` : 'No such link.');
    return toLink(row, deps.config.shortBaseUrl, await listVendorLinks(deps.sql, [row.code]));
  }

  app.post('/', requireApiKey('links:write'), jsonBody(CREATE_BODY_MAX_BYTES), async (c) => {
    const input = validate(createLinkInputSchema, await readJson(c));
    const key = c.get('apiKey');
    const { link, created } = await createLink(
      {
        sql: deps.sql,
        codeLength: deps.config.codeLength,
        targetPolicy: deps.targetPolicy,
        safety: deps.safety,
      },
      input,
      { owner: `apikey:${key.id}`, actor: `apikey:${key.id}`, origin: 'api' },
    );
    // A link that expires needs its durable timer (the sync workflow arms it). Best effort: the link exists
    // either way, and reconciliation re-arms timers Temporal did not get.
    if (created && link.expiresAt) {
      await deps.workflows
        .syncLink(link.code, 'link created')
        .catch((err) =>
          deps.logger.warn({ err, code: link.code }, 'could not start the sync of a new expiring link'),
        );
    }
    const body = await respondWithLink(link.code, link);
    return c.json(body, created ? 201 : 200, created ? { Location: `/api/v1/links/${link.code}` } : {});
  });

  app.get('/by-post/:site/:postId', requireApiKey('links:read'), async (c) => {
    const site = validate(siteSchema, c.req.param('site'));
    const postId = validate(postIdSchema, c.req.param('postId'));
    const row = await getLinkByPost(deps.sql, site, postId);
    if (!row || row.status === 'pending')
      throw new NotFoundError(`Post ${postId} of ${site} has no link yet.`);
    return c.json(await respondWithLink(null, row));
  });

  app.get('/:code', requireApiKey('links:read'), async (c) => {
    const code = c.req.param('code');
    return c.json(await respondWithLink(code, await getLinkByCode(deps.sql, code)));
  });

  return app;
}
