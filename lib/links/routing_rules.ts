// A link's routing rules as callers send them (API, UI) and as the API shows them (ADR 0080): ordered, first
// match wins, each to its own target under the same target rule as the link's url. Stored as given once valid
// (lib/stores/link_rows.ts RoutingRule); the redirect path reads them through the serving record.

import { z } from 'zod';
import { ROUTING_RULES_MAX, ROUTING_VALUES_MAX } from '../redirect/serving_record.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import {
  ROUTING_DEVICES,
  ROUTING_RULE_KINDS,
  type RoutingRule,
  type RoutingRuleKind,
} from '../stores/link_rows.ts';
import { canonicalizeTarget } from '../targets/canonical_url.ts';

export { ROUTING_DEVICES, ROUTING_RULE_KINDS, ROUTING_RULES_MAX, ROUTING_VALUES_MAX, type RoutingRule };

/** What each kind's values look like once normalised, and how a typed value is normalised. */
const VALUE_RULES: Record<
  RoutingRuleKind,
  { normalise(v: string): string; valid(v: string): boolean; says: string }
> = {
  language: {
    normalise: (v) => v.trim().toLowerCase(),
    valid: (v) => /^[a-z]{2,3}$/.test(v),
    says: fieldProblem('ruleLanguage', { examples: 'ar, en, fr' }),
  },
  device: {
    normalise: (v) => v.trim().toLowerCase(),
    valid: (v) => (ROUTING_DEVICES as readonly string[]).includes(v),
    says: fieldProblem('ruleDevice', { devices: ROUTING_DEVICES.join(', ') }),
  },
  country: {
    normalise: (v) => v.trim().toUpperCase(),
    valid: (v) => /^[A-Z]{2}$/.test(v),
    says: fieldProblem('ruleCountry', { examples: 'EG, GB' }),
  },
};

/** One rule's target: the same canonical form as a link's url (the target rule is applied by the caller). */
const ruleTargetSchema = z.string().transform((value, ctx) => {
  const canonical = canonicalizeTarget(value);
  if (canonical.ok) return canonical.url;
  ctx.addIssue({ code: 'custom', message: canonical.problem, input: value });
  return z.NEVER;
});

/** One routing rule: its values normalised (lower-case languages and devices, upper-case countries), deduplicated. */
export const routingRuleSchema = z
  .strictObject({
    kind: z.enum(ROUTING_RULE_KINDS),
    values: z
      .array(z.string().max(16))
      .min(1, fieldProblem('ruleValuesMissing'))
      .max(ROUTING_VALUES_MAX, fieldProblem('maxNumber', { max: ROUTING_VALUES_MAX })),
    target: ruleTargetSchema,
  })
  .transform((rule, ctx): RoutingRule => {
    const spec = VALUE_RULES[rule.kind];
    const values: string[] = [];
    rule.values.forEach((raw, i) => {
      const value = spec.normalise(raw);
      if (!spec.valid(value)) ctx.addIssue({ code: 'custom', message: spec.says, path: ['values', i] });
      else if (!values.includes(value)) values.push(value);
    });
    return { kind: rule.kind, values, target: rule.target };
  });

/** A link's rules in order, at most ROUTING_RULES_MAX; an empty list means none. */
export const routingRulesSchema = z
  .array(routingRuleSchema)
  .max(ROUTING_RULES_MAX, fieldProblem('maxRules', { max: ROUTING_RULES_MAX }))
  .describe(
    'Ordered routing rules, first match wins: readers whose preferred language (primary tag of the highest-q ' +
      'Accept-Language entry), device (ios, android, desktop, from the User-Agent) or country (TRUSTED_COUNTRY_HEADER) ' +
      'is one of `values` go to `target`; everyone else to `url`. Bitly and the static snapshot answer `url`.',
  );

/** A rule list as stored: null for none. */
export function toStoredRules(rules: readonly RoutingRule[] | null | undefined): RoutingRule[] | null {
  return rules && rules.length > 0
    ? rules.map((r) => ({ kind: r.kind, values: [...r.values], target: r.target }))
    : null;
}

/** True when two stored rule lists are the same (order matters: first match wins). */
export function sameRules(a: readonly RoutingRule[] | null, b: readonly RoutingRule[] | null): boolean {
  return JSON.stringify(toStoredRules(a)) === JSON.stringify(toStoredRules(b));
}

/** The API's view of each rule: as stored. */
export const routingRuleOutputSchema = z.object({
  kind: z.enum(ROUTING_RULE_KINDS),
  values: z.array(z.string()),
  target: z.string(),
});
