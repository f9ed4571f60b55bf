import type { LinkResolver } from '../redirect/link_resolver.ts';
import type { ServingRecord } from '../redirect/serving_record.ts';
import type { ShortLinkProvider, VendorLink } from './short_link_provider.ts';

/**
 * The in-house front: our own resolver on our own short domain. It is a no-op replica, since Postgres is
 * the truth and the resolver reads it; "writing" a link means refreshing the serving store and caches from
 * Postgres, so the back-half is always exactly our code and a collision cannot happen.
 */
export function createInHouseProvider(deps: {
  resolver: LinkResolver;
  shortBaseUrl: string;
}): ShortLinkProvider {
  const domain = new URL(deps.shortBaseUrl).host.toLowerCase();

  async function current(code: string): Promise<VendorLink | null> {
    await deps.resolver.refresh(code);
    const record = await deps.resolver.resolve(code);
    return record ? toVendorLink(record) : null;
  }

  function toVendorLink(record: ServingRecord): VendorLink {
    return {
      vendorId: record.code,
      shortIds: [`${domain}/${record.code}`],
      longUrl: record.url,
      archived: record.status !== 'active',
      group: null,
      title: null,
      createdAt: null,
      tags: [],
    };
  }

  async function required(code: string): Promise<VendorLink> {
    const link = await current(code);
    if (!link) throw new Error(`no link ${code} in Postgres`);
    return link;
  }

  return {
    name: 'inhouse',
    domain,
    create: (spec) => required(spec.code),
    findByCode: current,
    get: current,
    updateTarget: (_vendorId, code) => required(code),
    setArchived: (vendorId) => required(vendorId),
    // Our own clicks live in click_counts; this front adds no vendor-side count.
    getClicks: async () => null,
  };
}
