// What the domain watch takes from an RDAP domain object (RFC 9083 §5.3): the events `registration`,
// `expiration` and `last changed`, the `status` values (RFC 9083 §10.2.2, the EPP statuses in RDAP's spelling),
// `secureDNS.delegationSigned` and the registrar's name. Anything else in the answer is ignored.

/** The parts of an RDAP domain answer the watch reads. */
export interface RdapDomain {
  /** `ldhName` as the registry spells it, lower-cased. */
  name: string | null;
  registeredAt: Date | null;
  expiresAt: Date | null;
  lastChangedAt: Date | null;
  /** `status`, lower-cased (`client transfer prohibited`, `active`, …). */
  statuses: string[];
  /** `secureDNS.delegationSigned`; null when the registry does not show it. */
  delegationSigned: boolean | null;
  /** The fn of the entity with the role `registrar`, when shown. */
  registrar: string | null;
}

/** Statuses that mean the domain does not resolve, or is on its way out, whatever its expiry says. */
export const ALARMING_STATUSES = [
  'client hold',
  'server hold',
  'redemption period',
  'pending delete',
  'pending restore',
  'inactive',
] as const;

/** The registrar and registry locks RDAP may show; `transfer prohibited` is the one that keeps a domain ours. */
export const LOCK_STATUSES = [
  'client transfer prohibited',
  'server transfer prohibited',
  'client delete prohibited',
  'server delete prohibited',
  'client update prohibited',
  'server update prohibited',
] as const;

const asDate = (value: unknown): Date | null => {
  if (typeof value !== 'string') return null;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? null : at;
};

function eventDate(events: unknown, action: string): Date | null {
  if (!Array.isArray(events)) return null;
  for (const event of events) {
    const e = event as { eventAction?: unknown; eventDate?: unknown };
    if (typeof e.eventAction === 'string' && e.eventAction.toLowerCase() === action)
      return asDate(e.eventDate);
  }
  return null;
}

/** The registrar's name from a jCard (RFC 7095) `fn` property. */
function registrarName(entities: unknown): string | null {
  if (!Array.isArray(entities)) return null;
  for (const entity of entities) {
    const e = entity as { roles?: unknown; vcardArray?: unknown };
    if (!Array.isArray(e.roles) || !e.roles.includes('registrar')) continue;
    const card = Array.isArray(e.vcardArray) ? e.vcardArray[1] : undefined;
    if (!Array.isArray(card)) continue;
    for (const property of card) {
      if (Array.isArray(property) && property[0] === 'fn' && typeof property[3] === 'string')
        return property[3].slice(0, 200);
    }
  }
  return null;
}

/** Reads a parsed RDAP answer as a domain object; null when it is not one (`objectClassName` is not `domain`). */
export function parseRdapDomain(body: unknown): RdapDomain | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as Record<string, unknown>;
  if (b.objectClassName !== 'domain') return null;
  const secureDns = b.secureDNS as { delegationSigned?: unknown } | undefined;
  return {
    name: typeof b.ldhName === 'string' ? b.ldhName.toLowerCase().replace(/\.$/, '') : null,
    registeredAt: eventDate(b.events, 'registration'),
    expiresAt: eventDate(b.events, 'expiration'),
    lastChangedAt: eventDate(b.events, 'last changed'),
    statuses: Array.isArray(b.status)
      ? b.status.filter((s): s is string => typeof s === 'string').map((s) => s.toLowerCase().slice(0, 80))
      : [],
    delegationSigned: typeof secureDns?.delegationSigned === 'boolean' ? secureDns.delegationSigned : null,
    registrar: registrarName(b.entities),
  };
}
