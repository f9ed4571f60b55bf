import { Hono } from 'hono';
import { z } from 'zod';
import {
  blocklistEntrySchema,
  blocklistInputDocSchema,
  blocklistListSchema,
} from '../../lib/operations/ops_schemas.ts';
import { type BlocklistEntry, blocklistInputSchema } from '../../lib/safety/blocklist_entry.ts';
import {
  addBlocklistEntry,
  getBlocklistRescanScope,
  listBlocklist,
  removeBlocklistEntry,
} from '../../lib/safety/manage_blocklist.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';
import { auth, problem } from './openapi/common.ts';
import { describeRoute, named } from './openapi/describe_route.ts';

const deleteQuerySchema = z.object({ pattern: z.string().min(1, 'is required').max(2048) });
const listQuerySchema = z.object({
  cursor: z.string().max(2048).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

function toEntryJson(entry: BlocklistEntry) {
  return {
    pattern: entry.pattern,
    kind: entry.kind,
    ...(entry.reason ? { reason: entry.reason } : {}),
    createdBy: entry.createdBy,
    createdAt: entry.createdAt.toISOString(),
  };
}

const EntryAnswer = named('BlocklistEntry', blocklistEntrySchema);

/** The operations below, in the order of their handlers (routes/api/openapi/describe_route.ts). */
export const BLOCKLIST_OPERATIONS = [
  describeRoute({
    method: 'get',
    path: '/blocklist',
    operationId: 'listBlocklist',
    summary: 'The local blocklist, by pattern, with cursor pagination',
    scope: 'moderation',
    query: listQuerySchema,
    responses: {
      200: { description: 'a page of entries', schema: named('BlocklistList', blocklistListSchema) },
      ...auth,
      422: problem('bad limit'),
    },
  }),
  describeRoute({
    method: 'post',
    path: '/blocklist',
    operationId: 'addBlocklistEntry',
    summary: 'Block a host (and its subdomains) or a URL prefix; existing links are re-scanned',
    scope: 'moderation',
    body: named('BlocklistInput', blocklistInputDocSchema),
    responses: {
      201: { description: 'listed', schema: EntryAnswer },
      400: problem('malformed JSON'),
      ...auth,
      409: problem('already listed'),
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('not a host or an absolute http(s) URL'),
    },
  }),
  describeRoute({
    method: 'delete',
    path: '/blocklist',
    operationId: 'removeBlocklistEntry',
    summary: 'Unblock a pattern; the links it blocked are re-scanned',
    scope: 'moderation',
    query: deleteQuerySchema,
    responses: {
      200: { description: 'removed', schema: EntryAnswer },
      ...auth,
      404: problem('not listed'),
      422: problem('no pattern'),
    },
  }),
];

/**
 * /api/v1/blocklist (admin scope): the local blocklist of hosts (with subdomains) and URL prefixes. A change
 * starts a re-scan of the links it can affect, so existing links are blocked (or released) within minutes.
 */
export function createBlocklistRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();

  async function rescanAfter(entry: BlocklistEntry, change: 'added' | 'removed') {
    const contains = getBlocklistRescanScope(entry);
    try {
      const { workflowId } = await deps.ops.startRescan({
        trigger: 'blocklist',
        reason: `blocklist ${change} ${entry.pattern}`,
        ...(contains !== undefined ? { contains } : {}),
      });
      return workflowId;
    } catch (err) {
      // The entry is stored either way; the scheduled re-scan applies it to existing links.
      deps.logger.warn(
        { err, pattern: entry.pattern },
        'could not start the re-scan after a blocklist change',
      );
      return null;
    }
  }

  app.get('/', async (c) => {
    const query = validate(listQuerySchema, c.req.query());
    const rows = await listBlocklist(deps.sql, {
      limit: query.limit + 1,
      ...(query.cursor ? { cursor: query.cursor } : {}),
    });
    const items = rows.slice(0, query.limit);
    return c.json({
      items: items.map(toEntryJson),
      nextCursor: rows.length > query.limit ? (items.at(-1)?.pattern ?? null) : null,
    });
  });

  app.post('/', jsonBody(16 * 1024), async (c) => {
    const input = validate(blocklistInputSchema, await readJson(c));
    const entry = await addBlocklistEntry(deps.sql, input, `apikey:${c.get('apiKey').id}`);
    const rescanWorkflowId = await rescanAfter(entry, 'added');
    return c.json({ ...toEntryJson(entry), rescanWorkflowId }, 201);
  });

  // DELETE /api/v1/blocklist?pattern=… (a query parameter: URL prefixes contain slashes).
  app.delete('/', async (c) => {
    const { pattern } = validate(deleteQuerySchema, c.req.query());
    const entry = await removeBlocklistEntry(deps.sql, pattern, `apikey:${c.get('apiKey').id}`);
    const rescanWorkflowId = await rescanAfter(entry, 'removed');
    return c.json({ ...toEntryJson(entry), rescanWorkflowId });
  });

  return app;
}
