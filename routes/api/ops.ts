import { Hono } from 'hono';
import { z } from 'zod';
import { validate } from '../../lib/http/validation.ts';
import { listOpsRuns, OPS_RUN_KINDS, type OpsRunRow } from '../../lib/stores/ops_run_store.ts';
import type { WebDeps } from '../../lib/web_deps.ts';
import type { AppEnv } from '../app_env.ts';
import { createApiKeyAuth } from '../middleware/api_key_auth.ts';

const runsQuerySchema = z.object({
  kind: z.enum(OPS_RUN_KINDS).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

/** An operations run as the API returns it. */
export function toOpsRunJson(run: OpsRunRow) {
  return {
    kind: run.kind,
    workflowId: run.workflowId,
    status: run.status,
    report: run.report,
    startedAt: run.startedAt.toISOString(),
    ...(run.finishedAt ? { finishedAt: run.finishedAt.toISOString() } : {}),
  };
}

/** /api/v1/ops (admin scope): operations workflows and their reports. */
export function createOpsRoutes(deps: WebDeps) {
  const requireApiKey = createApiKeyAuth(deps);
  const app = new Hono<AppEnv>();
  app.use(requireApiKey('admin'));

  // Re-checks every live destination now (the Schedule does it every SAFETY_RESCAN_INTERVAL); 409 while one runs.
  app.post('/rescan', async (c) => {
    const { workflowId } = await deps.ops.startRescan({
      trigger: 'manual',
      reason: `manual, by apikey:${c.get('apiKey').id}`,
    });
    return c.json({ workflowId }, 202);
  });

  app.get('/runs', async (c) => {
    const query = validate(runsQuerySchema, c.req.query());
    const runs = await listOpsRuns(deps.sql, {
      limit: query.limit,
      ...(query.kind ? { kind: query.kind } : {}),
    });
    return c.json({ items: runs.map(toOpsRunJson) });
  });

  return app;
}
