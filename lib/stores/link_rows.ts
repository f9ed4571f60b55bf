// The rows of `links` and `vendor_links` as the stores read and write them, with the enumerations the schema
// constrains (migrations/0001_data_model.sql). lib/links/link.ts builds the link model on top of these.

export const LINK_STATUSES = ['pending', 'active', 'expired', 'gone', 'blocked'] as const;
export const SAFETY_VERDICTS = ['unknown', 'clean', 'warn', 'blocked'] as const;
export const LINK_ORIGINS = ['api', 'ui', 'wordpress', 'import'] as const;
/** `inhouse`: an archive link Bitly is not to hold (ARCHIVE_LINKS_IN_HOUSE). */
export const VENDOR_STATES = ['pending', 'synced', 'failed', 'collision', 'inhouse'] as const;

export type LinkStatus = (typeof LINK_STATUSES)[number];
export type SafetyVerdict = (typeof SAFETY_VERDICTS)[number];
export type LinkOrigin = (typeof LINK_ORIGINS)[number];
export type VendorState = (typeof VENDOR_STATES)[number];

/** What a routing rule matches on (docs/adr/0080-routing-rules-on-the-link-row.md). */
export const ROUTING_RULE_KINDS = ['language', 'device', 'country'] as const;
export type RoutingRuleKind = (typeof ROUTING_RULE_KINDS)[number];
/** The devices a `device` rule tells apart, from the User-Agent. */
export const ROUTING_DEVICES = ['ios', 'android', 'desktop'] as const;
export type RoutingDevice = (typeof ROUTING_DEVICES)[number];

/**
 * One routing rule as stored (an element of `links.routing_rules`, migration 0105): readers whose language
 * (primary tag, lower case), device or country (ISO 3166 alpha-2, upper case) is one of `values` go to `target`.
 */
export interface RoutingRule {
  kind: RoutingRuleKind;
  values: string[];
  target: string;
}

/** A link as stored (one row of `links`). */
export interface LinkRow {
  /** The link's key (lib/shared/link_key.ts): its code on the default short domain, `{domain}/{code}` on another. */
  code: string;
  /** Its short domain: '' for the default one, else the host name (migrations/0100_links_short_domain.sql). */
  domain: string;
  targetUrl: string;
  status: LinkStatus;
  safety: SafetyVerdict;
  safetyReason: string | null;
  safetyCheckedAt: Date | null;
  origin: LinkOrigin;
  site: string | null;
  postId: number | null;
  title: string | null;
  owner: string;
  expiresAt: Date | null;
  expiredUrl: string | null;
  redirectStatus: number | null;
  tags: string[];
  /** Per-link UTM values appended to the Location (migrations/0040_links_utm_params.sql); null: none. */
  utmCampaign: string | null;
  utmSource: string | null;
  utmMedium: string | null;
  dedupeKey: string | null;
  sourceVersion: Date | null;
  deletedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  version: number;
  /**
   * The archived copy the link answers with while its destination is dead and its policy says `fallback`
   * (migrations/0092_links_archive_fallback.sql); null: the link answers its target.
   */
  fallbackUrl: string | null;
  /** Ordered routing rules, first match wins (migrations/0105_links_routing_rules.sql); null: none. */
  routingRules: RoutingRule[] | null;
}

export interface VendorLinkRow {
  code: string;
  vendor: string;
  vendorId: string | null;
  state: VendorState;
  syncedUrl: string | null;
  lastError: string | null;
  attempts: number;
  syncedAt: Date | null;
  updatedAt: Date;
}

/** The columns of a link row its serving record is made of (what the resolver selects on a miss). */
export type ServingRow = Pick<
  LinkRow,
  | 'code'
  | 'targetUrl'
  | 'status'
  | 'safety'
  | 'redirectStatus'
  | 'expiresAt'
  | 'expiredUrl'
  | 'utmCampaign'
  | 'utmSource'
  | 'utmMedium'
  | 'version'
  | 'fallbackUrl'
  | 'routingRules'
>;

/** What a vendor's copy of a link is derived from (toVendorTarget): its serving columns and whether it is deleted. */
export type VendorTargetRow = ServingRow & Pick<LinkRow, 'deletedAt'>;

/**
 * A link's serving columns as the resolver's hot-path lookup reads them: positional (postgres.js `.values()`, so
 * the driver fills an array by index instead of storing each value under its column's name), without the code
 * (the caller looked it up by it). Order: SERVING_VALUE_COLUMNS in lib/stores/link_store.ts.
 */
export type ServingValues = readonly [
  targetUrl: string,
  status: LinkStatus,
  safety: SafetyVerdict,
  redirectStatus: number | null,
  expiresAt: Date | null,
  expiredUrl: string | null,
  utmCampaign: string | null,
  utmSource: string | null,
  utmMedium: string | null,
  version: number,
  fallbackUrl: string | null,
  routingRules: RoutingRule[] | null,
];

/** ServingValues with the row's code appended: selectManyServingValues's rows. */
export type ServingValuesWithCode = readonly [...ServingValues, code: string];
