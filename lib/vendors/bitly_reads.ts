// What we read from Bitly: a code's bitlink, a bitlink, its clicks (in all and per day), the group's bitlinks a
// page at a time, and the plan's monthly limit on new links.
import { type BitlyClient, orNull } from './bitly_http.ts';
import { type BitlinkBody, type CustomBitlinkBody, toPath, toShortId, toVendorLink } from './bitly_links.ts';
import {
  type ClicksByDayOptions,
  type DailyClicks,
  ProviderError,
  type VendorLink,
} from './short_link_provider.ts';

/** One page of the group's bitlinks. */
export interface BitlinkPage {
  links: VendorLink[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
  total: number | null;
}

/** A monthly plan limit a new link counts against (GET /v4/organizations/{guid}/plan_limits). */
export interface MonthlyCreateLimit {
  /** Bitly's name for it, e.g. `bsd_encodes`. */
  name: string;
  limit: number;
  /** Used so far this month (the plan resets on the 1st). */
  used: number;
}

/**
 * The plan limits one of our creates counts against: a link (`encodes`), on the branded domain (`bsd_encodes`),
 * with a custom back-half (`keyword_overrides`). Bitly's sources name the monthly quotas only through their error
 * codes (MONTHLY_ENCODE_LIMIT_REACHED, MONTHLY_BSD_ENCODE_LIMIT_REACHED, KEYWORD_OVERRIDES_LIMIT_EXCEEDED); these
 * names follow them and are matched case-insensitively. A plan that names none: BITLY_MONTHLY_CREATE_LIMIT.
 */
const CREATE_LIMIT_NAMES = new Set(['encodes', 'bsd_encodes', 'keyword_overrides']);

/** The limit with the fewest creates left among the plan's limits on new links; null when none is named. */
export function pickMonthlyCreateLimit(
  planLimits: { name?: unknown; count?: unknown; limit?: unknown }[],
): MonthlyCreateLimit | null {
  let tightest: MonthlyCreateLimit | null = null;
  for (const entry of planLimits) {
    if (typeof entry?.name !== 'string' || !CREATE_LIMIT_NAMES.has(entry.name.toLowerCase())) continue;
    const limit = Number(entry.limit);
    const used = Math.max(0, Math.trunc(Number(entry.count) || 0));
    // A negative or missing limit is no limit.
    if (!Number.isFinite(limit) || limit < 0) continue;
    const candidate = { name: entry.name, limit: Math.trunc(limit), used };
    if (!tightest || candidate.limit - candidate.used < tightest.limit - tightest.used) tightest = candidate;
  }
  return tightest;
}

/** The bitlink reachable at `domain/code` (our back-half), or null when that back-half is free. */
export async function findBitlinkByCode(client: BitlyClient, code: string): Promise<VendorLink | null> {
  const domain = client.domain;
  const body = await orNull(
    client.call<CustomBitlinkBody>('GET', `/custom_bitlinks/${toPath(`${domain}/${code}`)}`),
  );
  if (!body?.bitlink) return null;
  return toVendorLink(body.bitlink, [body.custom_bitlink ?? `${domain}/${code}`]);
}

/** A bitlink by its id; null when Bitly has no such link. */
export async function getBitlink(client: BitlyClient, vendorId: string): Promise<VendorLink | null> {
  const body = await orNull(client.call<BitlinkBody>('GET', `/bitlinks/${toPath(vendorId)}`));
  return body ? toVendorLink(body) : null;
}

/** A bitlink's clicks in all (Bitly's summary over every day). */
export async function getBitlinkClicks(client: BitlyClient, vendorId: string): Promise<{ total: number }> {
  const body = await client.call<{ total_clicks?: number }>(
    'GET',
    `/bitlinks/${toPath(vendorId)}/clicks/summary?unit=day&units=-1`,
  );
  return { total: Math.max(0, Math.trunc(body.total_clicks ?? 0)) };
}

/** Bitly's clicks per day, oldest day first (GET /v4/bitlinks/{bitlink}/clicks?unit=day); null when no such link. */
export async function getBitlinkClicksByDay(
  client: BitlyClient,
  codeOrBitlink: string,
  { days, unitReference }: ClicksByDayOptions,
): Promise<DailyClicks | null> {
  const domain = client.domain;
  if (!Number.isInteger(days) || days < 1 || days > 365) {
    throw new ProviderError('rejected', `days must be an integer from 1 to 365, not ${days}`);
  }
  if (unitReference && Number.isNaN(unitReference.getTime())) {
    throw new ProviderError('rejected', 'unitReference is not a valid date');
  }
  const id = toShortId(codeOrBitlink.includes('/') ? codeOrBitlink : `${domain}/${codeOrBitlink}`);
  if (!id) throw new ProviderError('rejected', `not a code or Bitly id: ${JSON.stringify(codeOrBitlink)}`);
  const params = new URLSearchParams({ unit: 'day', units: String(days) });
  // Bitly's time style: `2020-01-02T23:51:47+0000`.
  if (unitReference) params.set('unit_reference', `${unitReference.toISOString().slice(0, 19)}+0000`);
  const body = await orNull(
    client.call<{ unit_reference?: string; link_clicks?: { date?: string; clicks?: number }[] }>(
      'GET',
      `/bitlinks/${toPath(id)}/clicks?${params}`,
    ),
  );
  if (!body) return null;
  const perDay = (Array.isArray(body.link_clicks) ? body.link_clicks : [])
    .filter((d) => typeof d?.date === 'string' && /^\d{4}-\d{2}-\d{2}/.test(d.date))
    .map((d) => ({ date: d.date!.slice(0, 10), clicks: Math.max(0, Math.trunc(Number(d.clicks) || 0)) }))
    // Bitly lists the newest day first.
    .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  return { vendorId: id, unitReference: body.unit_reference ?? '', days: perDay };
}

/**
 * One page of the group's bitlinks, newest first. The cursor is Bitly's opaque search_after token, or
 * `page:<n>` where Bitly still pages by number.
 */
export async function listBitlinks(
  client: BitlyClient,
  opts: {
    cursor?: string | null;
    size?: number;
    archived?: 'on' | 'off' | 'both';
    createdAfter?: Date;
  } = {},
): Promise<BitlinkPage> {
  const params = new URLSearchParams({
    size: String(opts.size ?? 100),
    archived: opts.archived ?? 'both',
  });
  if (opts.createdAfter) params.set('created_after', String(Math.floor(opts.createdAfter.getTime() / 1000)));
  // Current Bitly pages with an opaque search_after token; older deployments only with page numbers.
  if (opts.cursor?.startsWith('page:')) params.set('page', opts.cursor.slice(5));
  else if (opts.cursor) params.set('search_after', opts.cursor);
  const body = await client.call<{
    links?: BitlinkBody[];
    pagination?: { search_after?: string; next?: string; page?: number; total?: number };
  }>('GET', `/groups/${encodeURIComponent(client.groupGuid)}/bitlinks?${params}`);
  const links = (body.links ?? []).map((l) => toVendorLink(l));
  const p = body.pagination ?? {};
  let nextCursor: string | null = null;
  if (links.length > 0 && p.search_after) nextCursor = p.search_after;
  else if (links.length > 0 && p.next) {
    const page = new URL(p.next, 'https://api-ssl.bitly.com').searchParams.get('page');
    nextCursor = page ? `page:${page}` : null;
  }
  return { links, nextCursor, total: typeof p.total === 'number' ? p.total : null };
}

/** The plan's tightest monthly limit on new links (the group's organization, then its plan_limits). */
export async function getMonthlyCreateLimit(client: BitlyClient): Promise<MonthlyCreateLimit | null> {
  // The plan belongs to the group's organization (the Group schema's organization_guid).
  const group = await client.call<{ organization_guid?: string }>(
    'GET',
    `/groups/${encodeURIComponent(client.groupGuid)}`,
  );
  if (!group.organization_guid) return null;
  const body = await client.call<{ plan_limits?: { name?: unknown; count?: unknown; limit?: unknown }[] }>(
    'GET',
    `/organizations/${encodeURIComponent(group.organization_guid)}/plan_limits`,
  );
  return pickMonthlyCreateLimit(Array.isArray(body.plan_limits) ? body.plan_limits : []);
}
