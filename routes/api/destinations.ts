import { type Context, Hono } from 'hono';
import { z } from 'zod';
import { requestDestinationArchive } from '../../lib/archive/request_destination_archive.ts';
import { hasScope } from '../../lib/auth/api_keys.ts';
import { actOnDestination, type DestinationDeps } from '../../lib/destinations/act_on_destination.ts';
import { applyProposedRetarget } from '../../lib/destinations/apply_proposed_retarget.ts';
import {
  DEAD_POLICIES,
  destinationItemSchema,
  destinationQuerySchema,
  listDestinationsPage,
} from '../../lib/destinations/list_destinations.ts';
import {
  deadPolicyInputSchema,
  setDeadPolicy,
  setHostPolicy,
  toPolicyHost,
} from '../../lib/destinations/set_dead_policy.ts';
import { ValidationError } from '../../lib/shared/errors.ts';
import { fieldProblem } from '../../lib/shared/field_problems.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';
import { auth, codeParam, problem } from './openapi/common.ts';
import { describeRoute, named } from './openapi/describe_route.ts';

const policySchema = z.object({ code: z.string(), policy: z.enum(DEAD_POLICIES).nullable() });
const hostPolicySchema = z.object({
  host: z.string(),
  policy: z.enum(DEAD_POLICIES).nullable(),
  actedOn: z.number().int(),
});
const retargetedSchema = z.object({ code: z.string(), url: z.string(), version: z.number().int() });
const hostParam = { name: 'host', in: 'path' as const, required: true, schema: z.string() };

/** The operations below, in the order of their handlers (routes/api/openapi/describe_route.ts). */
export const DESTINATION_OPERATIONS = [
  describeRoute({
    method: 'get',
    path: '/destinations',
    operationId: 'listDestinations',
    summary:
      'Dead destinations (or moved, suspect, answering their archived copy, with a retarget proposed): what the checks saw, the chain, the archived copy and the policy, newest verdict first',
    scope: 'links:read',
    query: destinationQuerySchema,
    responses: {
      200: {
        description: 'a page of destinations',
        schema: named(
          'DestinationQueue',
          z.object({
            items: z.array(destinationItemSchema),
            nextCursor: z.string().nullable(),
          }),
        ),
      },
      ...auth,
      400: problem('a cursor this server did not issue'),
      422: problem('bad state or limit'),
    },
  }),
  describeRoute({
    method: 'post',
    path: '/destinations/{code}/policy',
    operationId: 'setDestinationPolicy',
    summary:
      "What to do when the link's destination dies: notify, fallback (answer the archived copy) or off; null follows the host's policy. Applied at once to a destination already dead; audited",
    scope: 'links:write',
    parameters: [codeParam],
    body: named('DeadPolicyInput', deadPolicyInputSchema),
    responses: {
      200: { description: 'set', schema: named('DestinationPolicy', policySchema) },
      400: problem('malformed JSON'),
      ...auth,
      404: problem('no such link'),
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('unknown policy'),
    },
  }),
  describeRoute({
    method: 'post',
    path: '/destinations/{code}/retarget',
    operationId: 'applyDestinationRetarget',
    summary:
      'Retarget a link to the new address proposed for its moved destination (one of our own hosts); an ordinary, audited edit',
    scope: 'links:write',
    parameters: [codeParam],
    responses: {
      200: { description: 'retargeted', schema: named('DestinationRetargeted', retargetedSchema) },
      ...auth,
      404: problem('no such link, or no retarget proposed'),
      409: problem('the link changed since the proposal'),
      422: problem('the proposed address breaks the target rule'),
    },
  }),
  describeRoute({
    method: 'post',
    path: '/destinations/hosts/{host}/policy',
    operationId: 'setDestinationHostPolicy',
    summary:
      "The dead-destination policy of every link to a host that has none of its own; null removes it. Applied at once to the host's dead links (the first 200; the others at their next check)",
    scope: 'admin',
    parameters: [hostParam],
    body: named('DeadPolicyInput', deadPolicyInputSchema),
    responses: {
      200: { description: 'set', schema: named('DestinationHostPolicy', hostPolicySchema) },
      400: problem('malformed JSON'),
      ...auth,
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('not a host name, or unknown policy'),
    },
  }),
];

/** What acting on a verdict needs, from the web tier's dependencies. */
export function destinationDepsOf(deps: WebDeps): DestinationDeps {
  return {
    sql: deps.sql,
    logger: deps.logger,
    sync: deps.workflows,
    wordpress: deps.adoption,
    destinations: {
      ownHosts: deps.config.safety.trustedHosts,
      autoRetargetMoved: deps.config.deadDestinations.autoRetargetMoved,
    },
    edit: { targetPolicy: deps.targetPolicy, safety: deps.safety },
  };
}

/** /api/v1/destinations: the queue of dead destinations and the policies acting on them (docs/API_EXTENSIONS.md). */
export function createDestinationRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  const actorOf = (c: Context<AppEnv>) => `apikey:${c.get('apiKey').id}`;

  app.get('/', async (c) => {
    const query = validate(destinationQuerySchema, c.req.query());
    return c.json(await listDestinationsPage(deps.sql, deps.config.shortBaseUrl, query));
  });

  app.post('/:code/policy', jsonBody(1024), async (c) => {
    const { policy } = validate(deadPolicyInputSchema, await readJson(c));
    const result = await setDeadPolicy(deps, { code: c.req.param('code'), policy, actor: actorOf(c) });
    await actOnDestination(destinationDepsOf(deps), { code: result.code, actor: actorOf(c) });
    return c.json(result);
  });

  app.post('/:code/retarget', async (c) => {
    const { link } = await applyProposedRetarget(deps, {
      code: c.req.param('code'),
      actor: actorOf(c),
      mayManagePostLinks: hasScope(c.get('apiKey').scopes, 'admin'),
    });
    await requestDestinationArchive(deps, link.code);
    return c.json({ code: link.code, url: link.targetUrl, version: link.version });
  });

  app.post('/hosts/:host/policy', jsonBody(1024), async (c) => {
    const { policy } = validate(deadPolicyInputSchema, await readJson(c));
    const host = toPolicyHost(c.req.param('host'));
    if (!host) throw new ValidationError([{ path: 'host', message: fieldProblem('needsHost') }]);
    return c.json(await setHostPolicy(destinationDepsOf(deps), { host, policy, actor: actorOf(c) }));
  });

  return app;
}
