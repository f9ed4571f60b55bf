// Bitly's group and plan endpoints: GET /v4/groups/{guid} and GET /v4/organizations/{guid}/plan_limits.
import { BITLY_DEFAULT_DOMAIN, bitlyTime, forbidden, HttpAnswer } from './answers.ts';
import type { BitlyRouteContext } from './route_context.ts';

/** GET /v4/groups/{group_guid}: the Group (OpenAPI schema `Group`). */
export function getGroup(fake: BitlyRouteContext, group: string): HttpAnswer {
  if (group !== fake.groupGuid) return forbidden();
  return new HttpAnswer(200, {
    references: { organization: `${fake.baseUrl}/v4/organizations/${fake.organizationGuid}` },
    guid: fake.groupGuid,
    name: 'Newsroom',
    organization_guid: fake.organizationGuid,
    bsds: fake.domains,
    is_active: true,
    role: 'org-admin',
    created: bitlyTime(new Date(0)),
    modified: bitlyTime(new Date(0)),
  });
}

/** GET /v4/organizations/{organization_guid}/plan_limits, counting this month's bitlinks of our group. */
export function getPlanLimits(fake: BitlyRouteContext, organization: string): HttpAnswer {
  const planLimits = fake.switches.planLimits;
  if (organization !== fake.organizationGuid || planLimits === null) return forbidden();
  const month = new Date().toISOString().slice(0, 7);
  const made = fake.store
    .all()
    .filter((l) => l.group === fake.groupGuid && l.createdAt.slice(0, 7) === month);
  const counted: Record<string, number> = {
    encodes: made.length,
    bsd_encodes: made.filter((l) => l.domain !== BITLY_DEFAULT_DOMAIN).length,
    keyword_overrides: made.reduce((n, l) => n + l.keywords.length, 0),
  };
  return new HttpAnswer(200, {
    organization_guid: organization,
    plan_limits: planLimits.map((p) => ({
      name: p.name,
      description: p.description,
      count: p.count ?? counted[p.name] ?? 0,
      limit: p.limit,
    })),
    references: {},
  });
}
