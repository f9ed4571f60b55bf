import type { Logger } from '../shared/logger.ts';
import {
  type ClicksByDayOptions,
  type DailyClicks,
  ProviderError,
  type ShortLinkProvider,
  type VendorLink,
  type VendorLinkSpec,
} from './short_link_provider.ts';

/** Where and as whom to call Bitly (config.bitly). */
export interface BitlyConfig {
  token: string;
  /** The branded short domain (BSD), e.g. `sho.rt`. */
  domain: string;
  groupGuid: string;
  /** Requests go to `<apiBaseUrl>/v4/...`. */
  apiBaseUrl: string;
}

export interface BitlyOptions {
  /** Per-request deadline; a timeout is retryable (the create is idempotent on our side, see syncToBitly). */
  timeoutMs?: number;
  /** Bitly allows at most 5 concurrent connections per IP (VENDORS.md 1.7). */
  maxConcurrent?: number;
  /** Bitly sends no Retry-After: how long to wait after a per-minute/per-hour rate limit. */
  rateLimitRetryMs?: number;
  /** How long to wait after a monthly quota is used up. */
  quotaRetryMs?: number;
  logger?: Logger;
}

/** One page of the group's bitlinks. */
export interface BitlinkPage {
  links: VendorLink[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
  total: number | null;
}

/** The Bitly provider, plus what reconciliation and import need: paging through the group's bitlinks. */
export interface BitlyProvider extends ShortLinkProvider {
  readonly name: 'bitly';
  readonly groupGuid: string;
  /** One page of the group's bitlinks, newest first (`archived`: Bitly's on | off | both). */
  listLinks(options?: {
    cursor?: string | null;
    size?: number;
    archived?: 'on' | 'off' | 'both';
    /** Only links created at or after this time (Bitly's `created_after`, whole seconds). */
    createdAfter?: Date;
  }): Promise<BitlinkPage>;
  /** Archives a bitlink we do not want (wrong back-half, replaced) and tags it so nobody mistakes it for ours. */
  discard(vendorId: string): Promise<void>;
  /** Bitly's clicks per day (GET /v4/bitlinks/{bitlink}/clicks?unit=day); null when Bitly has no such link. */
  getClicksByDay(codeOrBitlink: string, options: ClicksByDayOptions): Promise<DailyClicks | null>;
  /**
   * The plan's tightest monthly limit on new links, read from Bitly's plan limits (the group's organization,
   * then its plan_limits); null when Bitly names none we know. Throws a ProviderError when Bitly cannot be read.
   */
  getMonthlyCreateLimit(): Promise<MonthlyCreateLimit | null>;
  /** Every bitlink of the group, page by page. */
  iterateLinks(options?: {
    size?: number;
    archived?: 'on' | 'off' | 'both';
    createdAfter?: Date;
  }): AsyncGenerator<VendorLink>;
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

/** Tag on every bitlink we create, so people (and the importer) can tell ours from hand-made ones. */
export const BITLY_OWN_TAG = 'lifeline';
/** Tag on bitlinks we archived because Bitly made them with the wrong back-half or we replaced them. */
export const BITLY_DISCARDED_TAG = 'lifeline-discarded';

// Bitly's error `message` codes that mean "wait", by how long (VENDORS.md 1.6).
const RATE_LIMIT_CODES = new Set(['RATE_LIMIT_EXCEEDED']);
const QUOTA_CODES = new Set([
  'API_USAGE_LIMIT_EXCEEDED',
  'MONTHLY_BSD_ENCODE_LIMIT_REACHED',
  'BRANDED_LINK_MONTHLY_LIMIT_EXCEEDED',
  'MONTHLY_ENCODE_LIMIT_REACHED',
  'KEYWORD_OVERRIDES_LIMIT_EXCEEDED',
  'LIMIT_EXCEEDED_DESTINATION_OVERRIDES',
]);

/** Bitly's link body (BitlinkBody), the fields we read. */
interface BitlinkBody {
  id?: string;
  link?: string;
  long_url?: string;
  archived?: boolean;
  custom_bitlinks?: string[];
  references?: Record<string, string>;
  title?: string | null;
  created_at?: string;
  tags?: string[];
}

interface CustomBitlinkBody {
  custom_bitlink?: string;
  bitlink?: BitlinkBody;
}

const DOMAIN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;
const BACK_HALF = /^[A-Za-z0-9_-]{1,128}$/;

/** `domain/back-half` from a Bitly id or link (scheme optional), or null when it is not one. */
export function toShortId(value: string): string | null {
  const m = /^(?:https?:\/\/)?([^/?#]+)\/([^/?#]+)$/i.exec(value.trim());
  if (!m) return null;
  const domain = m[1]!.toLowerCase();
  return DOMAIN.test(domain) && BACK_HALF.test(m[2]!) ? `${domain}/${m[2]}` : null;
}

/** The path form of a short id: each segment encoded, the slash kept (Bitly ids keep their literal slash). */
function toPath(shortId: string): string {
  const id = toShortId(shortId);
  if (!id) throw new ProviderError('rejected', `not a Bitly id: ${JSON.stringify(shortId)}`);
  return id.split('/').map(encodeURIComponent).join('/');
}

/** Projects Bitly's BitlinkBody to a VendorLink (every short id that reaches it). */
export function toVendorLink(body: BitlinkBody, extraShortIds: string[] = []): VendorLink {
  const id = toShortId(body.id ?? body.link ?? '');
  if (!id) throw new ProviderError('unavailable', `Bitly answered without a usable link id (${body.id})`);
  const shortIds = new Set([id]);
  for (const value of [body.link, ...(body.custom_bitlinks ?? []), ...extraShortIds]) {
    const s = value ? toShortId(value) : null;
    if (s) shortIds.add(s);
  }
  const groupRef = body.references?.group;
  return {
    vendorId: id,
    shortIds: [...shortIds],
    longUrl: body.long_url ?? '',
    archived: body.archived === true,
    group: groupRef ? (groupRef.split('/').pop() ?? null) : null,
    title: body.title ?? null,
    createdAt: body.created_at ?? null,
    tags: Array.isArray(body.tags) ? body.tags.filter((t): t is string => typeof t === 'string') : [],
  };
}

/** A small counting semaphore: at most `max` calls in flight. */
function createLimiter(max: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

/** The Bitly v4 client behind ShortLinkProvider (VENDORS.md section 1). */
export function createBitlyProvider(config: BitlyConfig, options: BitlyOptions = {}): BitlyProvider {
  const base = `${config.apiBaseUrl.replace(/\/+$/, '')}/v4`;
  const domain = config.domain.toLowerCase();
  const timeoutMs = options.timeoutMs ?? 10_000;
  const rateLimitRetryMs = options.rateLimitRetryMs ?? 60_000;
  const quotaRetryMs = options.quotaRetryMs ?? 3_600_000;
  const limit = createLimiter(options.maxConcurrent ?? 5);

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return limit(async () => {
      let res: Response;
      try {
        res = await fetch(`${base}${path}`, {
          method,
          headers: {
            Authorization: `Bearer ${config.token}`,
            Accept: 'application/json',
            ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
        throw new ProviderError(
          'unavailable',
          timedOut
            ? `Bitly ${method} ${path} timed out after ${timeoutMs} ms`
            : `Bitly ${method} ${path} failed: ${(error as Error).message}`,
        );
      }
      let text: string;
      try {
        text = await res.text();
      } catch (error) {
        throw new ProviderError('unavailable', `Bitly ${method} ${path}: ${(error as Error).message}`);
      }
      const bsdError = res.headers.get('X-Bsd-Error');
      if (bsdError)
        options.logger?.warn({ path, bsdError }, 'Bitly reports a problem with the branded domain');
      if (res.ok) {
        try {
          return (text ? JSON.parse(text) : {}) as T;
        } catch {
          throw new ProviderError(
            'unavailable',
            `Bitly ${method} ${path} answered ${res.status} with non-JSON`,
          );
        }
      }
      throw toProviderError(method, path, res, text);
    });
  }

  function toProviderError(method: string, path: string, res: Response, text: string): ProviderError {
    let envelope: { message?: string; description?: string } = {};
    try {
      envelope = JSON.parse(text) as typeof envelope;
    } catch {}
    const code = envelope.message ?? '';
    const summary = `Bitly ${method} ${path} → ${res.status}${code ? ` ${code}` : ''}${
      envelope.description ? `: ${envelope.description}` : ''
    }`.slice(0, 500);
    const status = res.status;
    const retryAfterHeader = Number(res.headers.get('Retry-After'));
    const retryAfter = (fallback: number) =>
      Number.isFinite(retryAfterHeader) && retryAfterHeader > 0 ? retryAfterHeader * 1000 : fallback;
    if (QUOTA_CODES.has(code) && (status === 429 || status === 403)) {
      return new ProviderError('quota_exceeded', summary, {
        status,
        code,
        retryAfterMs: retryAfter(quotaRetryMs),
      });
    }
    // The 429 form is current; 403 RATE_LIMIT_EXCEEDED (with X-Ratelimit-Reason) is the legacy one.
    if (
      status === 429 ||
      (status === 403 && (RATE_LIMIT_CODES.has(code) || res.headers.has('X-Ratelimit-Reason')))
    ) {
      return new ProviderError('rate_limited', summary, {
        status,
        code,
        retryAfterMs: retryAfter(rateLimitRetryMs),
      });
    }
    if (status === 409) return new ProviderError('conflict', summary, { status, code });
    if (status === 404 || status === 410) return new ProviderError('not_found', summary, { status, code });
    if (status === 402) return new ProviderError('plan_refused', summary, { status, code });
    if (status >= 500 || status === 408) return new ProviderError('unavailable', summary, { status, code });
    // 400 / 401 / 403 FORBIDDEN / 417 DNS_CONFIGURATION_ERROR / 422: the same call will fail again.
    return new ProviderError('rejected', summary, { status, code });
  }

  async function orNull<T>(promise: Promise<T>): Promise<T | null> {
    try {
      return await promise;
    } catch (error) {
      if (error instanceof ProviderError && error.kind === 'not_found') return null;
      throw error;
    }
  }

  const isPlanRefusal = (error: unknown) =>
    error instanceof ProviderError &&
    (error.kind === 'plan_refused' || (error.kind === 'rejected' && error.details.status === 403));

  async function discard(vendorId: string) {
    await call('PATCH', `/bitlinks/${toPath(vendorId)}`, { archived: true, tags: [BITLY_DISCARDED_TAG] });
  }

  async function discardQuietly(vendorId: string) {
    try {
      await discard(vendorId);
    } catch (error) {
      options.logger?.warn({ err: error, vendorId }, 'could not archive a discarded bitlink');
    }
  }

  /**
   * A new bitlink for `longUrl` WITHOUT a keyword, tagged as ours from the first byte: POST /v4/bitlinks (not
   * /v4/shorten, which takes no tags), so a bitlink whose answer is lost can still be found by the stray sweep.
   */
  async function createUntagged(longUrl: string, title: string | null | undefined): Promise<BitlinkBody> {
    return call<BitlinkBody>('POST', '/bitlinks', {
      long_url: longUrl,
      domain,
      group_guid: config.groupGuid,
      force_new_link: true,
      tags: [BITLY_OWN_TAG],
      ...(title ? { title: title.slice(0, 500) } : {}),
    });
  }

  /** Two-step create (a tagged bitlink, then the keyword): for plans that refuse `keyword` on POST /v4/bitlinks. */
  async function createInTwoSteps(spec: VendorLinkSpec): Promise<VendorLink> {
    const made = await createUntagged(spec.longUrl, spec.title);
    const hashId = toShortId(made.id ?? '');
    if (!hashId) throw new ProviderError('unavailable', 'Bitly /v4/bitlinks answered without an id');
    try {
      const custom = await call<CustomBitlinkBody>('POST', '/custom_bitlinks', {
        custom_bitlink: `${domain}/${spec.code}`,
        bitlink_id: hashId,
      });
      return toVendorLink(custom.bitlink ?? made, custom.custom_bitlink ? [custom.custom_bitlink] : []);
    } catch (error) {
      // The keyword-less bitlink would otherwise linger in the group as a stray link.
      await discardQuietly(hashId);
      throw error;
    }
  }

  return {
    name: 'bitly',
    domain,
    groupGuid: config.groupGuid,

    async create(spec) {
      try {
        // One call: the keyword override rides on the create (current v4), and force_new_link keeps one
        // bitlink per code even when two codes share a target (so retargeting one never moves the other).
        const body = await call<BitlinkBody>('POST', '/bitlinks', {
          long_url: spec.longUrl,
          domain,
          group_guid: config.groupGuid,
          keyword: spec.code,
          force_new_link: true,
          tags: [BITLY_OWN_TAG],
          ...(spec.title ? { title: spec.title.slice(0, 500) } : {}),
        });
        return toVendorLink(body);
      } catch (error) {
        if (error instanceof ProviderError && error.kind === 'plan_refused') return createInTwoSteps(spec);
        throw error;
      }
    },

    async findByCode(code) {
      const body = await orNull(
        call<CustomBitlinkBody>('GET', `/custom_bitlinks/${toPath(`${domain}/${code}`)}`),
      );
      if (!body?.bitlink) return null;
      return toVendorLink(body.bitlink, [body.custom_bitlink ?? `${domain}/${code}`]);
    },

    async get(vendorId) {
      const body = await orNull(call<BitlinkBody>('GET', `/bitlinks/${toPath(vendorId)}`));
      return body ? toVendorLink(body) : null;
    },

    async updateTarget(vendorId, code, longUrl) {
      try {
        return toVendorLink(
          await call<BitlinkBody>('PATCH', `/bitlinks/${toPath(vendorId)}`, { long_url: longUrl }),
        );
      } catch (error) {
        if (!isPlanRefusal(error)) throw error;
      }
      // Plans without destination edits: make a new bitlink for the new target and move our keyword onto it
      // (the classic way to "redirect" a custom back-half), then retire the old bitlink.
      const made = await createUntagged(longUrl, null);
      const newId = toShortId(made.id ?? '');
      if (!newId) throw new ProviderError('unavailable', 'Bitly /v4/bitlinks answered without an id');
      const moved = await call<CustomBitlinkBody>(
        'PATCH',
        `/custom_bitlinks/${toPath(`${domain}/${code}`)}`,
        {
          bitlink_id: newId,
        },
      );
      if (newId !== toShortId(vendorId)) await discardQuietly(vendorId);
      return toVendorLink(moved.bitlink ?? made, [`${domain}/${code}`]);
    },

    async setArchived(vendorId, archived) {
      return toVendorLink(await call<BitlinkBody>('PATCH', `/bitlinks/${toPath(vendorId)}`, { archived }));
    },

    discard,

    async getClicks(vendorId) {
      const body = await call<{ total_clicks?: number }>(
        'GET',
        `/bitlinks/${toPath(vendorId)}/clicks/summary?unit=day&units=-1`,
      );
      return { total: Math.max(0, Math.trunc(body.total_clicks ?? 0)) };
    },

    async getClicksByDay(codeOrBitlink, { days, unitReference }) {
      if (!Number.isInteger(days) || days < 1 || days > 365) {
        throw new ProviderError('rejected', `days must be an integer from 1 to 365, not ${days}`);
      }
      if (unitReference && Number.isNaN(unitReference.getTime())) {
        throw new ProviderError('rejected', 'unitReference is not a valid date');
      }
      const id = toShortId(codeOrBitlink.includes('/') ? codeOrBitlink : `${domain}/${codeOrBitlink}`);
      if (!id)
        throw new ProviderError('rejected', `not a code or Bitly id: ${JSON.stringify(codeOrBitlink)}`);
      const params = new URLSearchParams({ unit: 'day', units: String(days) });
      // Bitly's time style: `2020-01-02T23:51:47+0000`.
      if (unitReference) params.set('unit_reference', `${unitReference.toISOString().slice(0, 19)}+0000`);
      const body = await orNull(
        call<{ unit_reference?: string; link_clicks?: { date?: string; clicks?: number }[] }>(
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
    },

    async listLinks(opts = {}) {
      const params = new URLSearchParams({
        size: String(opts.size ?? 100),
        archived: opts.archived ?? 'both',
      });
      if (opts.createdAfter)
        params.set('created_after', String(Math.floor(opts.createdAfter.getTime() / 1000)));
      // Current Bitly pages with an opaque search_after token; older deployments only with page numbers.
      if (opts.cursor?.startsWith('page:')) params.set('page', opts.cursor.slice(5));
      else if (opts.cursor) params.set('search_after', opts.cursor);
      const body = await call<{
        links?: BitlinkBody[];
        pagination?: { search_after?: string; next?: string; page?: number; total?: number };
      }>('GET', `/groups/${encodeURIComponent(config.groupGuid)}/bitlinks?${params}`);
      const links = (body.links ?? []).map((l) => toVendorLink(l));
      const p = body.pagination ?? {};
      let nextCursor: string | null = null;
      if (links.length > 0 && p.search_after) nextCursor = p.search_after;
      else if (links.length > 0 && p.next) {
        const page = new URL(p.next, 'https://api-ssl.bitly.com').searchParams.get('page');
        nextCursor = page ? `page:${page}` : null;
      }
      return { links, nextCursor, total: typeof p.total === 'number' ? p.total : null };
    },

    async getMonthlyCreateLimit() {
      // The plan belongs to the group's organization (the Group schema's organization_guid).
      const group = await call<{ organization_guid?: string }>(
        'GET',
        `/groups/${encodeURIComponent(config.groupGuid)}`,
      );
      if (!group.organization_guid) return null;
      const body = await call<{ plan_limits?: { name?: unknown; count?: unknown; limit?: unknown }[] }>(
        'GET',
        `/organizations/${encodeURIComponent(group.organization_guid)}/plan_limits`,
      );
      return pickMonthlyCreateLimit(Array.isArray(body.plan_limits) ? body.plan_limits : []);
    },

    async *iterateLinks(opts = {}) {
      let cursor: string | null = null;
      do {
        const page: BitlinkPage = await this.listLinks({ ...opts, cursor });
        yield* page.links;
        cursor = page.nextCursor;
      } while (cursor);
    },
  };
}
