import { z } from 'zod';
import {
  LINK_STATUSES,
  type LinkRow,
  ROUTING_RULE_KINDS,
  type RoutingRule,
  SAFETY_VERDICTS,
} from '../stores/link_rows.ts';

/** Most routing rules a link may have, and most values one rule may list (the link model enforces both). */
export const ROUTING_RULES_MAX = 8;
export const ROUTING_VALUES_MAX = 30;

/** A link's own UTM values (each present only when set). */
export const servingUtmSchema = z.object({
  campaign: z.string().optional(),
  source: z.string().optional(),
  medium: z.string().optional(),
});
export type ServingUtm = z.infer<typeof servingUtmSchema>;

/**
 * What the resolver needs to answer a redirect: small, serialisable, the same in the LRU and the
 * serving store. Times are epoch milliseconds. `utm` is absent for a link without UTM values of its own
 * (and in records written before it existed, which therefore still parse).
 */
export const servingRecordSchema = z.object({
  code: z.string(),
  url: z.string().max(2048),
  status: z.enum(LINK_STATUSES),
  safety: z.enum(SAFETY_VERDICTS),
  redirectStatus: z
    .number()
    .refine((n): boolean => n === 301 || n === 302 || n === 307 || n === 308)
    .nullable(),
  expiresAt: z.number().int().nullable(),
  expiredUrl: z.string().max(2048).nullable(),
  utm: servingUtmSchema.optional(),
  version: z.number().int().nonnegative(),
  /**
   * The archived copy answered instead of `url` while the destination is dead (policy `fallback`). Absent for
   * every other link, so their records (and records written before it existed) are unchanged.
   */
  fallbackUrl: z.string().max(2048).optional(),
  /**
   * Ordered routing rules, first match wins (ADR 0080). Absent for every link without rules, so their records
   * (and records written before it existed) are unchanged and the answerer's LRU-hit path never looks further.
   */
  rules: z
    .array(
      z.object({
        kind: z.enum(ROUTING_RULE_KINDS),
        values: z.array(z.string().max(8)).min(1).max(ROUTING_VALUES_MAX),
        target: z.string().max(2048),
      }),
    )
    .min(1)
    .max(ROUTING_RULES_MAX)
    .optional(),
});
export type ServingRecord = z.infer<typeof servingRecordSchema>;

/** The link's own UTM values, or undefined when it has none. */
export function toServingUtm(
  row: Pick<LinkRow, 'utmCampaign' | 'utmSource' | 'utmMedium'>,
): ServingUtm | undefined {
  // Values are never empty (the schema and a CHECK refuse it): falsy means unset.
  if (!row.utmCampaign && !row.utmSource && !row.utmMedium) return undefined;
  return {
    ...(row.utmCampaign ? { campaign: row.utmCampaign } : {}),
    ...(row.utmSource ? { source: row.utmSource } : {}),
    ...(row.utmMedium ? { medium: row.utmMedium } : {}),
  };
}

/** Records standing in for stored ones whose target breaks the target rule (see markTampered). */
const tampered = new WeakSet<ServingRecord>();

/**
 * The record the resolver hands out instead of one whose target (or fallback) breaks the one target rule: the
 * same code, no destination, status `pending` (so every reader of it — the redirect policy, the in-house
 * replica, front verification — sees a link that does not answer), and recognisable by isTamperedRecord so
 * the answerer counts it as `tampered`.
 */
export function markTampered(record: Pick<ServingRecord, 'code' | 'version'>): ServingRecord {
  const standIn: ServingRecord = Object.freeze({
    code: record.code,
    url: '',
    status: 'pending' as const,
    safety: 'unknown' as const,
    redirectStatus: null,
    expiresAt: null,
    expiredUrl: null,
    version: record.version,
  });
  tampered.add(standIn);
  return standIn;
}

/** True for a record markTampered made: its stored target broke the rule, so the code answers 404. */
export function isTamperedRecord(record: ServingRecord): boolean {
  return tampered.has(record);
}

import type { ServingRow, ServingValues, ServingValuesWithCode } from '../stores/link_rows.ts';

export type { ServingRow, ServingValues, ServingValuesWithCode };

/** Projects a stored row to its serving record. */
export function toServingRecord(row: ServingRow): ServingRecord {
  const utm = toServingUtm(row);
  return {
    code: row.code,
    url: row.targetUrl,
    status: row.status,
    safety: row.safety,
    redirectStatus: row.redirectStatus,
    expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
    expiredUrl: row.expiredUrl,
    ...(utm ? { utm } : {}),
    version: row.version,
    ...(row.fallbackUrl ? { fallbackUrl: row.fallbackUrl } : {}),
    ...(row.routingRules && row.routingRules.length > 0 ? { rules: toServingRules(row.routingRules) } : {}),
  };
}

/**
 * A stored rule list as the record carries it: fresh objects with exactly the three fields (a row's jsonb could
 * carry more). Their shape is checked where the record enters the LRU (routingRulesProblem).
 */
export function toServingRules(rules: readonly RoutingRule[]): RoutingRule[] {
  return rules.map((rule) => ({ kind: rule.kind, values: rule.values, target: rule.target }));
}

const KINDS: ReadonlySet<unknown> = new Set(ROUTING_RULE_KINDS);

/**
 * Why a rule list read from a store is not one the link model could have written, or null: 1–ROUTING_RULES_MAX
 * rules, each a known kind, 1–ROUTING_VALUES_MAX short string values and a string target. The targets' own rule
 * (lib/targets) is the resolver's to apply.
 */
export function routingRulesProblem(rules: unknown): string | null {
  if (!Array.isArray(rules) || rules.length === 0 || rules.length > ROUTING_RULES_MAX)
    return 'not a rule list';
  for (const rule of rules as unknown[]) {
    if (typeof rule !== 'object' || rule === null) return 'a rule is not an object';
    const { kind, values, target } = rule as Record<string, unknown>;
    if (!KINDS.has(kind)) return 'a rule has no known kind';
    if (
      !Array.isArray(values) ||
      values.length === 0 ||
      values.length > ROUTING_VALUES_MAX ||
      !values.every((v) => typeof v === 'string' && v.length > 0 && v.length <= 8)
    ) {
      return 'a rule has unreadable values';
    }
    if (typeof target !== 'string' || target.length > 2048) return 'a rule has no target';
  }
  return null;
}

/**
 * toServingRecord for the hot path's positional row of `code` (selectServingValues): the same record, built as
 * one of two object literals (with or without `utm`, in toServingRecord's key order) rather than with a spread.
 */
export function servingRecordFromValues(code: string, values: ServingValues): ServingRecord {
  const expiresAt = values[4];
  const expiredUrl = values[5];
  // A link answering its archived copy, or with routing rules (rare): the general projection.
  if (values[10] !== null || values[11] !== null) return withExtras(code, values);
  if (!values[6] && !values[7] && !values[8]) {
    return {
      code,
      url: values[0],
      status: values[1],
      safety: values[2],
      redirectStatus: values[3],
      expiresAt: expiresAt === null ? null : expiresAt.getTime(),
      expiredUrl,
      version: values[9],
    };
  }
  return {
    code,
    url: values[0],
    status: values[1],
    safety: values[2],
    redirectStatus: values[3],
    expiresAt: expiresAt === null ? null : expiresAt.getTime(),
    expiredUrl,
    utm: toServingUtm({ utmCampaign: values[6], utmSource: values[7], utmMedium: values[8] }),
    version: values[9],
  };
}

/** servingRecordFromValues for a link answering its archived copy or with routing rules. */
function withExtras(code: string, values: ServingValues): ServingRecord {
  return toServingRecord({
    code,
    targetUrl: values[0],
    status: values[1],
    safety: values[2],
    redirectStatus: values[3],
    expiresAt: values[4],
    expiredUrl: values[5],
    utmCampaign: values[6],
    utmSource: values[7],
    utmMedium: values[8],
    version: values[9],
    fallbackUrl: values[10],
    routingRules: values[11],
  });
}
