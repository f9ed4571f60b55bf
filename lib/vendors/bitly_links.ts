// A bitlink as we see it: its short ids (`domain/back-half`), Bitly's body projected to a VendorLink, and the
// tags that tell our bitlinks from anyone else's.
import { ProviderError, type VendorLink } from './short_link_provider.ts';

/** Tag on every bitlink we create, so people (and the importer) can tell ours from hand-made ones. */
export const BITLY_OWN_TAG = 'lifeline';
/** Tag on bitlinks we archived because Bitly made them with the wrong back-half or we replaced them. */
export const BITLY_DISCARDED_TAG = 'lifeline-discarded';

/** Bitly's link body (BitlinkBody), the fields we read. */
export interface BitlinkBody {
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

/** Bitly's custom bitlink body: a back-half on our domain and the bitlink it points to. */
export interface CustomBitlinkBody {
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
export function toPath(shortId: string): string {
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
