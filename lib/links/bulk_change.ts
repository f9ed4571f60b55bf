// Asking for a bulk change of links (the API's and the UI's side, ADR 0086): the request is checked, recorded
// in bulk_changes with its selection as asked (codes, or a list filter), and its workflow `bulk:{id}` started;
// the answer does not wait for the links. The worker's side is run_bulk_change.ts.
import { z } from 'zod';
import { getBulkChangeWorkflowId } from '../../workflows/contract.ts';
import { randomToken } from '../shared/crypto.ts';
import { NotFoundError, ValidationError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { toFieldErrors } from '../shared/validation.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import {
  BULK_ACTIONS,
  type BulkAction,
  type BulkChangeRow,
  type BulkSelection,
  countFilteredLinks,
  finishBulkChange,
  getBulkChange,
  insertBulkChange,
  listSkippedBulkLinks,
} from '../stores/bulk_change_store.ts';
import type { Sql } from '../stores/sql.ts';
import { tagSchema } from './link.ts';
import { type LinkListQuery, linkListQuerySchema, toLinkListFilter } from './list_links.ts';

export { BULK_ACTIONS, type BulkAction, type BulkChangeRow };

/** Most codes one request may name; larger selections go by filter. */
export const BULK_MAX_CODES = 1000;
/** The confirmation counts a filter's matches up to this many (and says "more than" beyond). */
export const BULK_COUNT_CAP = 1_000_000;

/** Starts a bulk change's workflow (lib/temporal/adoption_gateway.ts). */
export interface BulkChangeStarter {
  startBulkChange(input: { runId: string }): Promise<{ workflowId: string }>;
}

const filterSchema = linkListQuerySchema.pick({
  q: true,
  status: true,
  safety: true,
  origin: true,
  tag: true,
  site: true,
});

/** POST /api/v1/links/bulk body (the UI's confirmation form sends the same fields). */
export const bulkChangeInputSchema = z
  .strictObject({
    action: z.enum(BULK_ACTIONS).describe('tag_add, tag_remove, expire, block or delete'),
    tag: tagSchema.optional().describe('for tag_add and tag_remove'),
    expiresAt: z.iso
      .datetime({ offset: true, message: fieldProblem('isoDate') })
      .nullable()
      .optional()
      .describe('for expire: the new expiry (in the future), or null to clear it'),
    reason: z
      .string()
      .trim()
      .max(500, fieldProblem('maxChars', { max: 500 }))
      .optional()
      .describe('kept in every audit entry; required for block'),
    codes: z
      .array(z.string().min(1).max(64))
      .min(1, fieldProblem('empty'))
      .max(BULK_MAX_CODES, fieldProblem('maxNumber', { max: BULK_MAX_CODES }))
      .optional()
      .describe('the links to change (at most 1,000); or give filter'),
    filter: filterSchema
      .optional()
      .describe('every live link this list filter matches when the run starts (as GET /links takes it)'),
  })
  .superRefine((v, ctx) => {
    if ((v.codes === undefined) === (v.filter === undefined))
      ctx.addIssue({ code: 'custom', path: ['codes'], message: fieldProblem('codesOrFilter') });
    if ((v.action === 'tag_add' || v.action === 'tag_remove') && v.tag === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['tag'],
        message: fieldProblem('requiredFor', { action: v.action }),
      });
    if (v.action === 'expire' && v.expiresAt === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['expiresAt'],
        message: fieldProblem('requiredFor', { action: v.action }),
      });
    if (v.action === 'block' && !v.reason)
      ctx.addIssue({ code: 'custom', path: ['reason'], message: fieldProblem('reasonMissing') });
  });
export type BulkChangeInput = z.infer<typeof bulkChangeInputSchema>;

/** A bulk change as the API answers it. */
export const bulkChangeSchema = z.object({
  id: z.string(),
  action: z.enum(BULK_ACTIONS),
  tag: z.string().optional(),
  expiresAt: z.string().nullable().optional(),
  reason: z.string().nullable(),
  status: z.enum(['selecting', 'running', 'finished', 'failed']),
  total: z.number().int().describe('links selected (known once the selection is fixed)'),
  applied: z.number().int(),
  skipped: z.number().int(),
  skippedSample: z
    .array(z.object({ code: z.string(), problem: z.string().nullable() }))
    .optional()
    .describe('the first skipped links, with why'),
  workflowId: z.string(),
  requestedBy: z.string(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});

const newRunId = () => `bk_${randomToken(12)}`;

/** The store's selection for a request: the codes, or the list filter. */
export function toBulkSelection(input: Pick<BulkChangeInput, 'codes' | 'filter'>): BulkSelection {
  if (input.codes) return { codes: [...new Set(input.codes)] };
  return { filter: toLinkListFilter((input.filter ?? {}) as LinkListQuery) };
}

/** How many links a selection holds now (the confirmation page's count; a filter is counted up to the cap). */
export async function countBulkSelection(
  sql: Sql,
  selection: BulkSelection,
  cap = BULK_COUNT_CAP,
): Promise<number> {
  if ('codes' in selection) return selection.codes.length;
  return countFilteredLinks(sql, selection.filter, cap);
}

/**
 * Records a bulk change and starts its workflow. The request is audited once (`links.bulk_requested`, with the
 * selection); each link changed is audited on its own by the run. 422 names the field of a bad request.
 */
export async function requestBulkChange(
  deps: { sql: Sql; adoption: BulkChangeStarter },
  raw: unknown,
  options: { actor: string; mayManagePostLinks: boolean },
): Promise<BulkChangeRow> {
  const parsed = bulkChangeInputSchema.safeParse(raw);
  if (!parsed.success)
    throw new ValidationError(toFieldErrors(parsed.error), 'The bulk change is not valid.');
  const input = parsed.data;
  if (input.action === 'expire' && input.expiresAt && new Date(input.expiresAt).getTime() <= Date.now())
    throw new ValidationError([{ path: 'expiresAt', message: fieldProblem('future') }]);
  const id = newRunId();
  const selection = toBulkSelection(input);
  const params =
    input.action === 'tag_add' || input.action === 'tag_remove'
      ? { tag: input.tag! }
      : input.action === 'expire'
        ? { expiresAt: input.expiresAt ?? null }
        : {};
  const run = await deps.sql.begin(async (tx) => {
    const row = await insertBulkChange(tx, {
      id,
      action: input.action,
      params,
      selection,
      reason: input.reason || null,
      requestedBy: options.actor,
      mayManagePostLinks: options.mayManagePostLinks,
      workflowId: getBulkChangeWorkflowId(id),
    });
    await insertAuditEntry(tx, {
      code: null,
      actor: options.actor,
      action: 'links.bulk_requested',
      after: { run: id, action: input.action, ...params, selection },
      reason: input.reason || null,
    });
    return row;
  });
  try {
    await deps.adoption.startBulkChange({ runId: id });
  } catch (error) {
    // Not started: the run says so rather than waiting forever; nothing was changed.
    await finishBulkChange(deps.sql, id, 'failed');
    throw error;
  }
  return run;
}

/** A run with the first skipped links, or 404. */
export async function getBulkChangeView(sql: Sql, id: string) {
  const run = await getBulkChange(sql, id);
  if (!run) throw new NotFoundError(`No bulk change ${id}.`);
  return { run, skippedSample: await listSkippedBulkLinks(sql, id, 20) };
}

/** A run as the API returns it. */
export function toBulkChangeJson(
  run: BulkChangeRow,
  skippedSample?: { code: string; problem: string | null }[],
): z.infer<typeof bulkChangeSchema> {
  return {
    id: run.id,
    action: run.action,
    ...(run.params.tag !== undefined ? { tag: run.params.tag } : {}),
    ...(run.action === 'expire' ? { expiresAt: run.params.expiresAt ?? null } : {}),
    reason: run.reason,
    status: run.status,
    total: run.total,
    applied: run.applied,
    skipped: run.skipped,
    ...(skippedSample ? { skippedSample } : {}),
    workflowId: run.workflowId,
    requestedBy: run.requestedBy,
    createdAt: run.createdAt.toISOString(),
    finishedAt: run.finishedAt?.toISOString() ?? null,
  };
}
