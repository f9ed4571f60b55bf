import { Hono } from 'hono';
import { z } from 'zod';
import type { ApiKeyScope } from '../../lib/auth/api_keys.ts';
import { apiKeySchema, createApiKeyInputSchema, createdApiKeySchema } from '../../lib/auth/issue_api_key.ts';
import { clicksExportQuerySchema } from '../../lib/clicks/export_clicks.ts';
import { linkStatsQuerySchema, linkStatsSchema } from '../../lib/clicks/link_stats.ts';
import {
  batchResultSchema,
  createLinksBatchInputSchema,
  problemSchema,
} from '../../lib/links/create_links_batch.ts';
import { linkExportQuerySchema } from '../../lib/links/export_links.ts';
import { createLinkInputSchema, linkSchema, updateLinkInputSchema } from '../../lib/links/link.ts';
import { linkListQuerySchema, linkListSchema } from '../../lib/links/list_links.ts';
import {
  activeFrontSchema,
  blocklistEntrySchema,
  blocklistInputDocSchema,
  blocklistListSchema,
  failoverInputSchema,
  opsRunListSchema,
  reconcileInputSchema,
  safetyCheckInputSchema,
  safetyCheckResultSchema,
  workflowAcceptedSchema,
} from '../../lib/operations/ops_schemas.ts';
import { backfillAcceptedSchema, backfillBatchSchema } from '../../lib/publishing/backfill_batch.ts';
import {
  breakerDecisionSchema,
  breakerHoldListSchema,
  resolveReviewInputSchema,
  reviewItemSchema,
  reviewListSchema,
  wordpressSiteListSchema,
} from '../../lib/publishing/wordpress_admin.ts';
import { siteEventSchema, wordpressEventSchema } from '../../lib/publishing/wordpress_event.ts';
import {
  retargetActionSchema,
  retargetChangesSchema,
  retargetRequestSchema,
  retargetRunListSchema,
  retargetRunSchema,
} from '../../lib/retarget/retarget_rule.ts';
import {
  REPORT_STATUSES,
  reportQueueItemSchema,
  reportQueueQuerySchema,
  resolveReportsInputSchema,
} from '../../lib/safety/moderate_reports.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';

/** Named schemas, each generated from the zod schema the route validates with or answers with. */
const SCHEMAS = {
  Link: linkSchema,
  CreateLinkInput: createLinkInputSchema,
  UpdateLinkInput: updateLinkInputSchema,
  CreateLinksBatchInput: createLinksBatchInputSchema.extend({
    links: z.array(createLinkInputSchema).min(1).max(1000),
  }),
  BatchResult: batchResultSchema,
  LinkList: linkListSchema,
  LinkStats: linkStatsSchema,
  ApiKey: apiKeySchema,
  ApiKeyList: z.object({ items: z.array(apiKeySchema) }),
  CreateApiKeyInput: createApiKeyInputSchema,
  CreatedApiKey: createdApiKeySchema,
  WordPressEvent: z.union([wordpressEventSchema, siteEventSchema]),
  WebhookAccepted: z.object({ workflowId: z.string(), code: z.string().optional() }),
  Problem: problemSchema,
  // Safety, blocklist and operations (issue 6).
  BlocklistInput: blocklistInputDocSchema,
  BlocklistEntry: blocklistEntrySchema,
  BlocklistList: blocklistListSchema,
  SafetyCheckInput: safetyCheckInputSchema,
  SafetyCheckResult: safetyCheckResultSchema,
  WorkflowAccepted: workflowAcceptedSchema,
  OpsRunList: opsRunListSchema,
  ActiveFront: activeFrontSchema,
  FailoverInput: failoverInputSchema,
  ReconcileInput: reconcileInputSchema,
  // The moderation queue of reader reports (issue 13).
  ReportQueue: z.object({ items: z.array(reportQueueItemSchema), nextCursor: z.string().nullable() }),
  LinkReports: z.object({
    code: z.string(),
    shortUrl: z.string(),
    url: z.string(),
    status: z.string(),
    safety: z.string(),
    owner: z.string(),
    reports: z.array(
      z.object({
        reason: z.string().nullable(),
        status: z.enum(REPORT_STATUSES),
        createdAt: z.string(),
        resolvedAt: z.string().optional(),
        resolvedBy: z.string().optional(),
        note: z.string().optional(),
      }),
    ),
  }),
  ResolveReportsInput: resolveReportsInputSchema,
  ResolveReportsResult: z.object({
    code: z.string(),
    action: resolveReportsInputSchema.shape.action,
    resolved: z.number().int(),
    safety: z.string(),
    status: z.string(),
  }),
  // Adopting an existing newsroom (issue 15).
  BackfillBatch: backfillBatchSchema,
  BackfillAccepted: backfillAcceptedSchema,
  RetargetRequest: retargetRequestSchema,
  RetargetRun: retargetRunSchema,
  RetargetRunList: retargetRunListSchema,
  RetargetChanges: retargetChangesSchema,
  RetargetAction: retargetActionSchema,
  // A post's identity and the breaker on mass change (ADR 0057).
  WordPressSiteList: wordpressSiteListSchema,
  ReviewList: reviewListSchema,
  ResolveReviewInput: resolveReviewInputSchema,
  ReviewItem: reviewItemSchema.extend({ migrationEnded: z.boolean() }),
  BreakerHoldList: breakerHoldListSchema,
  BreakerDecision: breakerDecisionSchema,
} satisfies Record<string, z.ZodType>;
type SchemaName = keyof typeof SCHEMAS;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  description?: string;
  schema: z.ZodType;
}

/** One documented operation; the test checks each exists in the app and behaves as documented. */
export interface ApiOperation {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI path under /api/v1, e.g. /links/{code}. */
  path: string;
  operationId: string;
  summary: string;
  /** The API-key scope required; null for routes authenticated otherwise (or public). */
  scope: ApiKeyScope | null;
  parameters?: Parameter[];
  query?: z.ZodObject;
  body?: SchemaName;
  responses: Record<
    number,
    {
      description: string;
      schema?: SchemaName;
      /** A CSV download (text/csv, UTF-8 with a BOM) instead of JSON. */
      csv?: boolean;
      headers?: string[];
    }
  >;
}

const code: Parameter = { name: 'code', in: 'path', required: true, schema: z.string() };
const idempotencyKey: Parameter = {
  name: 'Idempotency-Key',
  in: 'header',
  description: 'Replays the first response for the same key and body (24 h); a different body is a 422.',
  schema: z.string().min(1).max(255),
};
const ifMatch: Parameter = {
  name: 'If-Match',
  in: 'header',
  description: 'The ETag of the version you edited; 412 if the link changed since.',
  schema: z.string(),
};
const problem = (description: string) => ({ description, schema: 'Problem' as const });
const auth = { 401: problem('no valid API key'), 403: problem('the key lacks the scope') };

/** Every /api/v1 operation this app serves. */
export const API_OPERATIONS: ApiOperation[] = [
  {
    method: 'post',
    path: '/links',
    operationId: 'createLink',
    summary: 'Create a short link (or get the existing one for the same url and options)',
    scope: 'links:write',
    parameters: [idempotencyKey],
    body: 'CreateLinkInput',
    responses: {
      201: { description: 'created', schema: 'Link', headers: ['Location', 'ETag', 'Lifeline-Sync'] },
      200: { description: 'the same owner already has this link (dedupe)', schema: 'Link' },
      400: problem('malformed JSON'),
      ...auth,
      409: problem('alias taken, or the article already has its link'),
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('invalid, blocked target, or outside ALLOWED_TARGET_HOSTS; or Idempotency-Key reuse'),
      429: {
        description: 'creation rate limit; see Retry-After',
        schema: 'Problem',
        headers: ['Retry-After'],
      },
    },
  },
  {
    method: 'post',
    path: '/links/batch',
    operationId: 'createLinksBatch',
    summary: 'Create up to 1,000 links; per-item results in input order',
    scope: 'links:write',
    parameters: [idempotencyKey],
    body: 'CreateLinksBatchInput',
    responses: {
      200: { description: 'one result per item', schema: 'BatchResult', headers: ['Lifeline-Sync'] },
      400: problem('malformed, empty, or over 1,000 links'),
      ...auth,
      413: problem('body too large'),
      429: { description: 'creation rate limit', schema: 'Problem', headers: ['Retry-After'] },
    },
  },
  {
    method: 'get',
    path: '/links',
    operationId: 'listLinks',
    summary: 'List and search links, newest first, with cursor pagination',
    scope: 'links:read',
    query: linkListQuerySchema,
    responses: {
      200: { description: 'a page of links', schema: 'LinkList' },
      400: problem('a cursor this server did not issue'),
      ...auth,
      422: problem('invalid filter'),
    },
  },
  {
    method: 'get',
    path: '/links/by-post/{site}/{postId}',
    operationId: 'getLinkByPost',
    summary: "An article's canonical short link",
    scope: 'links:read',
    parameters: [
      { name: 'site', in: 'path', required: true, schema: z.string() },
      { name: 'postId', in: 'path', required: true, schema: z.int().positive() },
    ],
    responses: {
      200: { description: 'the link', schema: 'Link' },
      ...auth,
      404: problem('not minted yet'),
      422: problem('invalid site or post id'),
    },
  },
  {
    method: 'get',
    path: '/links/{code}',
    operationId: 'getLink',
    summary: 'One link',
    scope: 'links:read',
    parameters: [code],
    responses: {
      200: { description: 'the link', schema: 'Link', headers: ['ETag'] },
      ...auth,
      404: problem('no such link'),
    },
  },
  {
    method: 'patch',
    path: '/links/{code}',
    operationId: 'updateLink',
    summary:
      'Retarget, retitle, change expiry, status (active|gone), redirect status or tags; audited and synced',
    scope: 'links:write',
    parameters: [code, ifMatch],
    body: 'UpdateLinkInput',
    responses: {
      200: { description: 'the link after the change', schema: 'Link', headers: ['ETag', 'Lifeline-Sync'] },
      400: problem('malformed JSON'),
      ...auth,
      404: problem('no such link (or deleted)'),
      412: problem('If-Match names an older version'),
      422: problem('invalid change'),
    },
  },
  {
    method: 'delete',
    path: '/links/{code}',
    operationId: 'deleteLink',
    summary: 'Delete a link: its code answers 410 forever and is never minted again',
    scope: 'links:write',
    parameters: [
      code,
      { name: 'reason', in: 'query', description: 'kept in the audit log', schema: z.string().max(500) },
    ],
    responses: {
      204: { description: 'deleted', headers: ['Lifeline-Sync'] },
      ...auth,
      404: problem('no such link'),
    },
  },
  {
    method: 'get',
    path: '/links/{code}/stats',
    operationId: 'getLinkStats',
    summary: 'Clicks of a link: totals by kind, per day, top countries and referrers',
    scope: 'links:read',
    parameters: [code],
    query: linkStatsQuerySchema,
    responses: {
      200: { description: 'stats', schema: 'LinkStats' },
      ...auth,
      404: problem('no such link'),
      422: problem('invalid window'),
    },
  },
  {
    method: 'get',
    path: '/links.csv',
    operationId: 'exportLinksCsv',
    summary:
      'Every link matching the list filters (no paging), as CSV for spreadsheets: UTF-8 with a BOM, RFC 4180, ' +
      'formula-safe, streamed',
    scope: 'links:read',
    query: linkExportQuerySchema,
    responses: {
      200: { description: 'the links', csv: true, headers: ['Content-Disposition'] },
      ...auth,
      422: problem('invalid filter'),
    },
  },
  {
    method: 'get',
    path: '/links/{code}/clicks.csv',
    operationId: 'exportLinkClicksCsv',
    summary:
      'Clicks of a link as CSV: by day (every kind, and Bitly’s own count beside ours when Bitly holds the ' +
      'link), by country or by referrer host',
    scope: 'links:read',
    parameters: [code],
    query: clicksExportQuerySchema,
    responses: {
      200: { description: 'the clicks', csv: true, headers: ['Content-Disposition'] },
      ...auth,
      404: problem('no such link'),
      422: problem('invalid window or breakdown'),
    },
  },
  {
    method: 'post',
    path: '/keys',
    operationId: 'createApiKey',
    summary: 'Create an API key (the key is in this response only)',
    scope: 'admin',
    parameters: [idempotencyKey],
    body: 'CreateApiKeyInput',
    responses: { 201: { description: 'created', schema: 'CreatedApiKey' }, ...auth, 422: problem('invalid') },
  },
  {
    method: 'get',
    path: '/keys',
    operationId: 'listApiKeys',
    summary: 'Every API key, with scopes and last use (never the key)',
    scope: 'admin',
    responses: { 200: { description: 'keys', schema: 'ApiKeyList' }, ...auth },
  },
  {
    method: 'delete',
    path: '/keys/{id}',
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key',
    scope: 'admin',
    parameters: [{ name: 'id', in: 'path', required: true, schema: z.int().positive() }],
    responses: { 204: { description: 'revoked' }, ...auth, 404: problem('no live key with this id') },
  },
  {
    method: 'post',
    path: '/hooks/wordpress',
    operationId: 'receiveWordPressEvent',
    summary: 'Signed WordPress webhook (X-Lifeline-Signature: t=<unix>,v1=<hex HMAC-SHA256>)',
    scope: null,
    parameters: [{ name: 'X-Lifeline-Signature', in: 'header', required: true, schema: z.string() }],
    body: 'WordPressEvent',
    responses: {
      202: { description: 'accepted durably', schema: 'WebhookAccepted' },
      400: problem('bad payload'),
      401: problem('bad, missing or stale signature'),
      503: { description: 'not durably accepted; retry', schema: 'Problem', headers: ['Retry-After'] },
    },
  },
  {
    method: 'post',
    path: '/safety/check',
    operationId: 'checkSafety',
    summary: 'What the safety scanner says about a destination, without creating anything',
    scope: 'links:write',
    body: 'SafetyCheckInput',
    responses: {
      200: { description: 'the verdict and its findings', schema: 'SafetyCheckResult' },
      400: problem('malformed JSON'),
      ...auth,
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('not an absolute http(s) URL'),
      429: {
        description: 'safety-check rate limit (RATE_LIMIT_SAFETY_CHECKS_PER_MINUTE); see Retry-After',
        schema: 'Problem',
        headers: ['Retry-After'],
      },
    },
  },
  {
    method: 'get',
    path: '/reports',
    operationId: 'listReportQueue',
    summary:
      'The moderation queue: links with reader reports (open by default), reasons counted, newest first',
    scope: 'admin',
    query: reportQueueQuerySchema,
    responses: {
      200: { description: 'a page of reported links', schema: 'ReportQueue' },
      ...auth,
      400: problem('a cursor this server did not issue'),
      422: problem('bad status or limit'),
    },
  },
  {
    method: 'get',
    path: '/reports/{code}',
    operationId: 'getLinkReports',
    summary: "A link's reader reports in every state (reporters stay anonymous)",
    scope: 'admin',
    parameters: [code],
    responses: {
      200: { description: 'the reports', schema: 'LinkReports' },
      ...auth,
      404: problem('no such link'),
    },
  },
  {
    method: 'post',
    path: '/reports/{code}/resolve',
    operationId: 'resolveReports',
    summary:
      'Dismiss (lift the warning), confirm (block, 451) or ignore (leave as is) a link’s reports; audited',
    scope: 'admin',
    parameters: [code],
    body: 'ResolveReportsInput',
    responses: {
      200: { description: 'decided; the link’s verdict now', schema: 'ResolveReportsResult' },
      400: problem('malformed JSON'),
      ...auth,
      404: problem('no such link'),
      409: problem('no reports to decide about'),
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('unknown action'),
    },
  },
  {
    method: 'get',
    path: '/blocklist',
    operationId: 'listBlocklist',
    summary: 'The local blocklist, by pattern, with cursor pagination',
    scope: 'admin',
    query: z.object({ cursor: z.string().optional(), limit: z.int().min(1).max(500).optional() }),
    responses: {
      200: { description: 'a page of entries', schema: 'BlocklistList' },
      ...auth,
      422: problem('bad limit'),
    },
  },
  {
    method: 'post',
    path: '/blocklist',
    operationId: 'addBlocklistEntry',
    summary: 'Block a host (and its subdomains) or a URL prefix; existing links are re-scanned',
    scope: 'admin',
    body: 'BlocklistInput',
    responses: {
      201: { description: 'listed', schema: 'BlocklistEntry' },
      400: problem('malformed JSON'),
      ...auth,
      409: problem('already listed'),
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('not a host or an absolute http(s) URL'),
    },
  },
  {
    method: 'delete',
    path: '/blocklist',
    operationId: 'removeBlocklistEntry',
    summary: 'Unblock a pattern; the links it blocked are re-scanned',
    scope: 'admin',
    parameters: [{ name: 'pattern', in: 'query', required: true, schema: z.string().min(1).max(2048) }],
    responses: {
      200: { description: 'removed', schema: 'BlocklistEntry' },
      ...auth,
      404: problem('not listed'),
      422: problem('no pattern'),
    },
  },
  {
    method: 'post',
    path: '/ops/rescan',
    operationId: 'startRescan',
    summary: 'Re-check every live destination now (rescan:manual:{taskQueue})',
    scope: 'admin',
    responses: {
      202: { description: 'started', schema: 'WorkflowAccepted' },
      ...auth,
      409: problem('one is running'),
      503: { description: 'Temporal unavailable', schema: 'Problem', headers: ['Retry-After'] },
    },
  },
  {
    method: 'post',
    path: '/ops/reconcile',
    operationId: 'startReconcile',
    summary:
      'Reconcile Postgres, the serving store and Bitly now (reconcile:manual:{taskQueue}); import Bitly-only links',
    scope: 'admin',
    body: 'ReconcileInput',
    responses: {
      202: { description: 'started', schema: 'WorkflowAccepted' },
      400: problem('malformed JSON'),
      ...auth,
      409: problem('one is running'),
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('invalid options'),
      503: { description: 'Temporal unavailable', schema: 'Problem', headers: ['Retry-After'] },
    },
  },
  {
    method: 'get',
    path: '/ops/runs',
    operationId: 'listOpsRuns',
    summary: 'Operations runs (re-scans, reconciliations, failovers, drills) and their reports, newest first',
    scope: 'admin',
    query: z.object({
      kind: z.enum(['reconcile', 'rescan', 'import', 'failover', 'failback', 'drill']).optional(),
      limit: z.int().min(1).max(100).optional(),
    }),
    responses: { 200: { description: 'runs', schema: 'OpsRunList' }, ...auth, 422: problem('bad filter') },
  },
  {
    method: 'get',
    path: '/ops/front',
    operationId: 'getActiveFront',
    summary: 'Who answers the short domain, since when, the last drill and any front change in progress',
    scope: 'admin',
    responses: { 200: { description: 'the active front', schema: 'ActiveFront' }, ...auth },
  },
  {
    method: 'post',
    path: '/ops/failover',
    operationId: 'startFailover',
    summary: 'Fail over (to inhouse), fail back (to bitly), or drill either; one at a time',
    scope: 'admin',
    body: 'FailoverInput',
    responses: {
      202: { description: 'started', schema: 'WorkflowAccepted' },
      400: problem('malformed JSON'),
      ...auth,
      409: problem('one is running, or `to` is already the active front'),
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('invalid, or Bitly not configured'),
      503: { description: 'Temporal unavailable', schema: 'Problem', headers: ['Retry-After'] },
    },
  },
  {
    method: 'post',
    path: '/ops/front/dns-changed',
    operationId: 'reportDnsChanged',
    summary: 'The operator changed the short domain’s DNS: the waiting failover continues',
    scope: 'admin',
    responses: {
      202: { description: 'the failover was told', schema: 'WorkflowAccepted' },
      ...auth,
      409: problem('no failover is waiting for DNS'),
    },
  },
  {
    method: 'post',
    path: '/hooks/wordpress/backfill',
    operationId: 'receiveBackfillBatch',
    summary:
      'Signed archive backfill batch from the WordPress plugin (integrations/wordpress/CONTRACT.md §1)',
    scope: null,
    parameters: [{ name: 'X-Lifeline-Signature', in: 'header', required: true, schema: z.string() }],
    body: 'BackfillBatch',
    responses: {
      202: { description: 'written durably; one result per post', schema: 'BackfillAccepted' },
      400: problem('bad batch (the field and reason in errors[])'),
      401: problem('bad, missing or stale signature'),
      413: problem('body too large'),
      415: problem('not JSON'),
      503: {
        description: 'not durably accepted; send the same batch again',
        schema: 'Problem',
        headers: ['Retry-After'],
      },
    },
  },
  {
    method: 'post',
    path: '/retargets',
    operationId: 'requestRetarget',
    summary: 'Plans a mass retarget (prefix, regex or CSV rule) as a dry run; nothing changes until approved',
    scope: 'admin',
    body: 'RetargetRequest',
    responses: {
      202: { description: 'the run, planning', schema: 'RetargetRun' },
      400: problem('malformed JSON'),
      ...auth,
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('invalid rule (each field and reason)'),
      503: { description: 'Temporal unavailable', schema: 'Problem', headers: ['Retry-After'] },
    },
  },
  {
    method: 'get',
    path: '/retargets',
    operationId: 'listRetargets',
    summary: 'Mass retarget runs, newest first',
    scope: 'admin',
    responses: { 200: { description: 'runs', schema: 'RetargetRunList' }, ...auth },
  },
  {
    method: 'get',
    path: '/retargets/{id}',
    operationId: 'getRetarget',
    summary: 'A run: status, the dry run count and sample, progress by state',
    scope: 'admin',
    parameters: [{ name: 'id', in: 'path', required: true, schema: z.string() }],
    responses: {
      200: { description: 'the run', schema: 'RetargetRun' },
      ...auth,
      404: problem('no such run'),
    },
  },
  {
    method: 'get',
    path: '/retargets/{id}/changes',
    operationId: 'listRetargetChanges',
    summary: 'A page of the run’s planned (or invalid, applied, skipped) changes: before → after',
    scope: 'admin',
    parameters: [{ name: 'id', in: 'path', required: true, schema: z.string() }],
    query: z.object({
      state: z.enum(['planned', 'invalid', 'applied', 'skipped']).optional(),
      cursor: z.string().optional(),
      limit: z.int().min(1).max(1000).optional(),
    }),
    responses: {
      200: { description: 'changes by code', schema: 'RetargetChanges' },
      ...auth,
      404: problem('no such run'),
      422: problem('bad filter'),
    },
  },
  ...(['approve', 'pause', 'resume', 'cancel'] as const).map(
    (action): ApiOperation => ({
      method: 'post',
      path: `/retargets/{id}/${action}`,
      operationId: `${action}Retarget`,
      summary: {
        approve: 'Approves a planned run: it applies the plan in batches',
        pause: 'Pauses a running run after its current batch',
        resume: 'Resumes a paused run',
        cancel: 'Cancels a run (what was applied stays, and can be undone)',
      }[action],
      scope: 'admin',
      parameters: [{ name: 'id', in: 'path', required: true, schema: z.string() }],
      responses: {
        202: { description: 'the run was told', schema: 'RetargetAction' },
        ...auth,
        404: problem('no such run'),
        409: problem('not allowed in the run’s status'),
        503: { description: 'Temporal unavailable', schema: 'Problem', headers: ['Retry-After'] },
      },
    }),
  ),
  {
    method: 'get',
    path: '/wordpress/sites',
    operationId: 'listWordPressSites',
    summary: 'WordPress sites: installation, migration mode, open review items',
    scope: 'admin',
    responses: { 200: { description: 'sites', schema: 'WordPressSiteList' }, ...auth },
  },
  {
    method: 'get',
    path: '/wordpress/reviews',
    operationId: 'listWordPressReviews',
    summary: 'What identity matching could not decide (a claim refused, ambiguous matches, reused post IDs)',
    scope: 'admin',
    query: z.object({
      site: z.string().optional(),
      status: z.enum(['open', 'resolved']).optional(),
      after: z.int().min(0).optional(),
      limit: z.int().min(1).max(500).optional(),
    }),
    responses: {
      200: { description: 'review items, oldest first', schema: 'ReviewList' },
      ...auth,
      422: problem('bad filter'),
    },
  },
  {
    method: 'post',
    path: '/wordpress/reviews/{id}/resolve',
    operationId: 'resolveWordPressReview',
    summary: 'Binds a code to a post, leaves it gone, or keeps everything as it is (audited)',
    scope: 'admin',
    parameters: [{ name: 'id', in: 'path', required: true, schema: z.string() }],
    body: 'ResolveReviewInput',
    responses: {
      200: { description: 'the item, resolved', schema: 'ReviewItem' },
      400: problem('malformed JSON'),
      ...auth,
      404: problem('no such item'),
      409: problem('already resolved, or the code cannot be bound'),
      415: problem('not JSON'),
      422: problem('invalid decision (each field and reason)'),
    },
  },
  {
    method: 'get',
    path: '/wordpress/breaker',
    operationId: 'listBreakerHolds',
    summary: 'The breaker’s holds: changes beyond a site’s budget, with counts and a sample',
    scope: 'admin',
    query: z.object({ status: z.enum(['waiting', 'applied', 'discarded']).optional() }),
    responses: { 200: { description: 'holds, newest first', schema: 'BreakerHoldList' }, ...auth },
  },
  ...(['approve', 'discard'] as const).map(
    (action): ApiOperation => ({
      method: 'post',
      path: `/wordpress/breaker/{id}/${action}`,
      operationId: `${action}BreakerHold`,
      summary: {
        approve: 'Applies a hold’s changes (each only while its link is as it was read)',
        discard: 'Forgets a hold’s changes: nothing of it is applied',
      }[action],
      scope: 'admin',
      parameters: [{ name: 'id', in: 'path', required: true, schema: z.string() }],
      responses: {
        202: { description: 'the site’s reconciliation was told', schema: 'BreakerDecision' },
        ...auth,
        404: problem('no such hold'),
        409: problem('already decided'),
        503: { description: 'Temporal unavailable', schema: 'Problem', headers: ['Retry-After'] },
      },
    }),
  ),
  {
    method: 'post',
    path: '/retargets/{id}/undo',
    operationId: 'undoRetarget',
    summary: 'Plans a run that puts back every target the run changed (a dry run, then approval)',
    scope: 'admin',
    parameters: [{ name: 'id', in: 'path', required: true, schema: z.string() }],
    responses: {
      202: { description: 'the undo run, planning', schema: 'RetargetRun' },
      ...auth,
      404: problem('no such run'),
      409: problem('the run is still going, is an undo, or already has one'),
      503: { description: 'Temporal unavailable', schema: 'Problem', headers: ['Retry-After'] },
    },
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document',
    scope: null,
    responses: { 200: { description: 'OpenAPI 3.1 document' } },
  },
];

const HEADER_DOCS: Record<string, { description: string; schema: object }> = {
  Location: { description: 'where the new resource lives', schema: { type: 'string' } },
  ETag: { description: 'the link version, for If-Match', schema: { type: 'string' } },
  'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } },
  'Content-Disposition': {
    description: 'attachment; filename="…csv"',
    schema: { type: 'string' },
  },
  'Lifeline-Sync': {
    description:
      'accepted: caches and vendors are being updated; deferred: Temporal was unreachable, the change is ' +
      'saved in Postgres and reconciliation repairs replicas; queued (batches): the new links were queued ' +
      'for the sync queue with them, and its drainer syncs them in batches after this response',
    schema: { type: 'string', enum: ['accepted', 'deferred', 'queued'] },
  },
};

/** A zod schema as an OpenAPI 3.1 (JSON Schema 2020-12) schema object. */
function toSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return json;
}

const INPUT_SCHEMAS = new Set<SchemaName>([
  'BlocklistInput',
  'SafetyCheckInput',
  'FailoverInput',
  'ReconcileInput',
  'CreateLinkInput',
  'UpdateLinkInput',
  'CreateLinksBatchInput',
  'CreateApiKeyInput',
  'WordPressEvent',
  'BackfillBatch',
  'RetargetRequest',
]);

/** The OpenAPI 3.1 document, generated from API_OPERATIONS and the zod schemas (never written by hand). */
export function buildOpenApiDocument(serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of API_OPERATIONS) {
    const parameters = [
      ...(op.parameters ?? []).map((p) => ({
        name: p.name,
        in: p.in,
        required: p.in === 'path' ? true : (p.required ?? false),
        ...(p.description ? { description: p.description } : {}),
        schema: toSchema(p.schema, 'input'),
      })),
      ...Object.entries(op.query?.shape ?? {}).map(([name, schema]) => ({
        name,
        in: 'query',
        required: false,
        schema: toSchema(schema as z.ZodType, 'input'),
      })),
    ];
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(op.responses)) {
      const type = r.schema === 'Problem' ? 'application/problem+json' : 'application/json';
      responses[status] = {
        description: r.description,
        ...(r.csv
          ? {
              content: {
                'text/csv': {
                  schema: { type: 'string', description: 'UTF-8 with a byte-order mark; CRLF line ends' },
                },
              },
            }
          : {}),
        ...(r.schema
          ? { content: { [type]: { schema: { $ref: `#/components/schemas/${r.schema}` } } } }
          : {}),
        ...(r.headers ? { headers: Object.fromEntries(r.headers.map((h) => [h, HEADER_DOCS[h]!])) } : {}),
      };
    }
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      security: op.scope ? [{ apiKey: [op.scope] }] : [],
      ...(op.scope ? { 'x-required-scope': op.scope } : {}),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(op.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { $ref: `#/components/schemas/${op.body}` } } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Lifeline API',
      version: '1.0.0',
      description:
        'Branded short links a newsroom owns. Errors are RFC 9457 problem details. Authenticate with ' +
        '`Authorization: Bearer <api key>`; scopes are links:read, links:write and admin (admin implies all).',
    },
    servers: [{ url: `${serverUrl}/api/v1` }],
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'an API key (ll_...)' } },
      schemas: Object.fromEntries(
        Object.entries(SCHEMAS).map(([name, schema]) => [
          name,
          toSchema(schema, INPUT_SCHEMAS.has(name as SchemaName) ? 'input' : 'output'),
        ]),
      ),
    },
  };
}

/** GET /api/v1/openapi.json (public: it describes, it does not grant). */
export function createOpenApiRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  let document: string | undefined;
  app.get('/openapi.json', (c) => {
    document ??= JSON.stringify(buildOpenApiDocument(deps.config.appBaseUrl));
    return c.body(document, 200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'public, max-age=300',
    });
  });
  return app;
}
