// The Bitly provider, composed: the HTTP call and its errors (bitly_http.ts), the bitlink model
// (bitly_links.ts), what we create and change (bitly_writes.ts) and what we read (bitly_reads.ts).
import { type BitlyConfig, type BitlyOptions, createBitlyClient } from './bitly_http.ts';
import {
  type BitlinkPage,
  findBitlinkByCode,
  getBitlink,
  getBitlinkClicks,
  getBitlinkClicksByDay,
  getMonthlyCreateLimit,
  listBitlinks,
  type MonthlyCreateLimit,
} from './bitly_reads.ts';
import { createBitlink, discardBitlink, retargetBitlink, setBitlinkArchived } from './bitly_writes.ts';
import type {
  ClicksByDayOptions,
  DailyClicks,
  ShortLinkProvider,
  VendorLink,
} from './short_link_provider.ts';

export type { BitlyConfig, BitlyOptions } from './bitly_http.ts';
export { BITLY_DISCARDED_TAG, BITLY_OWN_TAG, toShortId, toVendorLink } from './bitly_links.ts';
export { type BitlinkPage, type MonthlyCreateLimit, pickMonthlyCreateLimit } from './bitly_reads.ts';

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

/** The Bitly v4 client behind ShortLinkProvider (VENDORS.md section 1): each operation one named function. */
export function createBitlyProvider(config: BitlyConfig, options: BitlyOptions = {}): BitlyProvider {
  const client = createBitlyClient(config, options);
  return {
    name: 'bitly',
    domain: client.domain,
    groupGuid: config.groupGuid,
    create: (spec) => createBitlink(client, spec),
    findByCode: (code) => findBitlinkByCode(client, code),
    get: (vendorId) => getBitlink(client, vendorId),
    updateTarget: (vendorId, code, longUrl) => retargetBitlink(client, vendorId, code, longUrl),
    setArchived: (vendorId, archived) => setBitlinkArchived(client, vendorId, archived),
    discard: (vendorId) => discardBitlink(client, vendorId),
    getClicks: (vendorId) => getBitlinkClicks(client, vendorId),
    getClicksByDay: (codeOrBitlink, byDay) => getBitlinkClicksByDay(client, codeOrBitlink, byDay),
    listLinks: (opts) => listBitlinks(client, opts),
    getMonthlyCreateLimit: () => getMonthlyCreateLimit(client),

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
