import type { Front } from '../failover/active_front.ts';

/** Vendors that can hold a replica of our links (`vendor_links.vendor`): the fronts that can answer the short domain. */
export type VendorName = Front;

/** A link as a vendor holds it: what the vendor actually made, not what we asked for. */
export interface VendorLink {
  /** The vendor's own id of the link (Bitly: `domain/hash`, no scheme). */
  vendorId: string;
  /**
   * Every short id that reaches this link, as `domain/back-half` without scheme: the vendor's own id and each
   * keyword override (custom back-half). Domains lower case, back-halves case-sensitive.
   */
  shortIds: string[];
  longUrl: string;
  archived: boolean;
  /** The vendor's group / account scope (Bitly: group guid), when it says. */
  group: string | null;
  title: string | null;
  createdAt: string | null;
  /** The vendor's tags on the link (Bitly: `tags`); ours carry `lifeline`. */
  tags: string[];
}

/** What the caller wants a vendor's copy of one link to be. */
export interface VendorLinkSpec {
  /** Our code: the back-half the vendor must use on our branded domain. */
  code: string;
  longUrl: string;
  title?: string | null;
}

/** How a vendor call failed; decides retry (and how soon) versus record-and-stop. */
export type ProviderErrorKind =
  /** 429, or Bitly's legacy 403 RATE_LIMIT_EXCEEDED: retry after `retryAfterMs`. */
  | 'rate_limited'
  /** Monthly plan quota used up: retry much later. */
  | 'quota_exceeded'
  /** 5xx, timeouts, connection failures: retry with backoff. */
  | 'unavailable'
  /** The back-half is taken (409). */
  | 'conflict'
  /** The link does not exist (404). */
  | 'not_found'
  /** The plan does not allow this call (402 UPGRADE_REQUIRED, 403 FORBIDDEN on a premium call). */
  | 'plan_refused'
  /** Bad request, bad credentials, misconfiguration: retrying the same call cannot help. */
  | 'rejected';

/** A failed vendor call, classified. `message` never contains credentials. */
export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly details: { status?: number; code?: string; retryAfterMs?: number } = {},
  ) {
    super(message);
    this.name = 'ProviderError';
  }

  /** True when the same call may succeed later. */
  get retryable(): boolean {
    return this.kind === 'rate_limited' || this.kind === 'quota_exceeded' || this.kind === 'unavailable';
  }
}

/**
 * A short-link front that can hold replicas of our links with OUR code as the back-half: Bitly v4, or the
 * in-house resolver (a no-op replica: the serving store is our own). Implementations never decide policy
 * (collisions, retries): they report what the vendor did, and the activities decide.
 */
export interface ShortLinkProvider {
  readonly name: VendorName;
  /** The branded short domain this provider answers on (lower case). */
  readonly domain: string;
  /**
   * Asks for a new link at `domain/code`. Resolves with what the vendor actually made, which may carry another
   * back-half (Bitly can silently pick a random one): the caller must check it with holdsBackHalf.
   */
  create(spec: VendorLinkSpec): Promise<VendorLink>;
  /** The vendor's link reachable at `domain/code`, or null when that back-half is free. */
  findByCode(code: string): Promise<VendorLink | null>;
  /** The vendor's link by its id, or null when it is gone. */
  get(vendorId: string): Promise<VendorLink | null>;
  /**
   * Points `domain/code` (held by `vendorId`) at `longUrl`; resolves with the link that now holds the
   * back-half (its id can change when the vendor's plan forces a new link).
   */
  updateTarget(vendorId: string, code: string, longUrl: string): Promise<VendorLink>;
  /** Archives (true) or restores (false) the link. */
  setArchived(vendorId: string, archived: boolean): Promise<VendorLink>;
  /** All-time clicks the vendor counted for the link, or null when the vendor does not count. */
  getClicks(vendorId: string): Promise<{ total: number } | null>;
  /**
   * Clicks per UTC day for the `days` days ending with `unitReference`'s day (default today), oldest first; null
   * when the vendor has no such link. `codeOrVendorId`: our code (on the provider's domain) or a `domain/hash` id.
   */
  getClicksByDay?(codeOrVendorId: string, options: ClicksByDayOptions): Promise<DailyClicks | null>;
}

export interface ClicksByDayOptions {
  /** How many days, 1 to 365. */
  days: number;
  /** The last day counted (its UTC day); default now. */
  unitReference?: Date;
}

/** A vendor's per-day click counts for one link. */
export interface DailyClicks {
  /** The vendor's id of the link counted (`domain/back-half`). */
  vendorId: string;
  /** The reference time the vendor counted back from, as it said it. */
  unitReference: string;
  /** One entry per day the vendor reported, oldest first. */
  days: { /** UTC day, `YYYY-MM-DD`. */ date: string; clicks: number }[];
}

/** True when `link` answers `code` on `domain`: the collision assertion (case-sensitive back-half). */
export function holdsBackHalf(link: VendorLink, domain: string, code: string): boolean {
  return link.shortIds.includes(`${domain.toLowerCase()}/${code}`);
}
