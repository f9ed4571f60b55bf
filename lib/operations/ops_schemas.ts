import { z } from 'zod';
import { FRONTS } from '../failover/active_front.ts';
import { BLOCKLIST_KINDS } from '../safety/blocklist_entry.ts';

// The JSON shapes of the safety, blocklist and operations endpoints, for the OpenAPI document.

const VERDICTS = ['clean', 'warn', 'blocked'] as const;
const isoTime = z.string().describe('ISO 8601 time');

/** POST /api/v1/blocklist body (as documented; the route parses with blocklistInputSchema). */
export const blocklistInputDocSchema = z.strictObject({
  pattern: z.string().max(2048).describe('a host (with its subdomains) or an absolute URL prefix'),
  kind: z.enum(BLOCKLIST_KINDS).optional().describe('default: url_prefix when the pattern has a scheme'),
  reason: z.string().max(500).optional(),
});

export const blocklistEntrySchema = z.object({
  pattern: z.string(),
  kind: z.enum(BLOCKLIST_KINDS),
  reason: z.string().optional(),
  createdBy: z.string(),
  createdAt: isoTime,
  rescanWorkflowId: z.string().nullable().optional().describe('the re-scan of the links the change affects'),
});

export const blocklistListSchema = z.object({
  items: z.array(blocklistEntrySchema),
  nextCursor: z.string().nullable(),
});

export const safetyCheckInputSchema = z.strictObject({ url: z.string() });

export const safetyCheckResultSchema = z.object({
  url: z.string(),
  verdict: z.enum(VERDICTS),
  findings: z.array(z.object({ verdict: z.enum(VERDICTS), rule: z.string(), reason: z.string() })),
  complete: z
    .boolean()
    .describe('false when Safe Browsing could not be asked (the verdict is local rules only)'),
});

export const workflowAcceptedSchema = z.object({ workflowId: z.string() });

export const opsRunSchema = z.object({
  kind: z.enum(['reconcile', 'rescan', 'import', 'failover', 'failback', 'drill']),
  workflowId: z.string(),
  status: z.enum(['running', 'succeeded', 'failed', 'cancelled']),
  report: z.record(z.string(), z.unknown()),
  startedAt: isoTime,
  finishedAt: isoTime.optional(),
});

export const opsRunListSchema = z.object({ items: z.array(opsRunSchema) });

const lastDrillSchema = z.object({
  workflowId: z.string(),
  status: z.string(),
  to: z.string().optional(),
  startedAt: isoTime,
  finishedAt: isoTime.optional(),
  durationMs: z.number().optional(),
  estimatedFailoverMs: z.number().optional(),
  error: z.string().optional(),
});

/** One short domain's front (ADR 0073). */
export const domainFrontSchema = z.object({
  domain: z.string().describe('the short domain (host name)'),
  active: z.enum(FRONTS),
  since: isoTime.nullable(),
  lastDrill: lastDrillSchema.optional(),
});

export const activeFrontSchema = z.object({
  active: z.enum(FRONTS).describe('the default short domain’s front (each domain’s is in `domains`)'),
  since: isoTime.nullable(),
  domain: z.string().optional().describe('the default short domain (host name)'),
  domains: z
    .array(domainFrontSchema)
    .optional()
    .describe('every configured short domain’s front, the default first'),
  lastDrill: lastDrillSchema.optional(),
  inProgress: z
    .object({
      kind: z.string(),
      workflowId: z.string(),
      startedAt: isoTime,
      step: z.string().optional(),
      waitingForDns: z.boolean().optional(),
      domain: z.string().optional().describe('the short domain whose front is changing (host name)'),
    })
    .optional(),
});

export const failoverInputSchema = z.strictObject({
  to: z.enum(FRONTS),
  domain: z
    .string()
    .max(253)
    .optional()
    .describe(
      'the short domain whose front changes (one of SHORT_DOMAINS; default: the default short domain)',
    ),
  drill: z.boolean().optional(),
  emergency: z
    .boolean()
    .optional()
    .describe(
      'switch at once, without lowering the DNS TTL and waiting out the old one first (default false)',
    ),
});

export const reconcileInputSchema = z.strictObject({
  repair: z.boolean().optional().describe('false: only report drift (default true)'),
  import: z.boolean().optional().describe('import links that exist only on Bitly (default true)'),
});
