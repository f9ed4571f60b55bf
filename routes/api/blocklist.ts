import { Hono } from 'hono';
import { z } from 'zod';
import { type BlocklistEntry, blocklistInputSchema } from '../../lib/safety/blocklist_entry.ts';
import {
  addBlocklistEntry,
  getBlocklistRescanScope,
  listBlocklist,
  removeBlocklistEntry,
} from '../../lib/safety/manage_blocklist.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { createApiKeyAuth } from '../middleware/api_key_auth.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';

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

/**
 * /api/v1/blocklist (admin scope): the local blocklist of hosts (with subdomains) and URL prefixes. A change
 * starts a re-scan of the links it can affect, so existing links are blocked (or released) within minutes.
 */
export function createBlocklistRoutes(deps: WebDeps) {
  const requireApiKey = createApiKeyAuth(deps);
  const app = new Hono<AppEnv>();
  app.use(requireApiKey('admin'));

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
