import { decideRedirect, type RedirectSettings } from '../redirect/redirect_policy.ts';
import { toServingRecord } from '../redirect/serving_record.ts';
import { shortUrlOfKey } from '../shared/link_key.ts';
import type { VendorTargetRow } from '../stores/link_rows.ts';

/** What a vendor's copy of a link must be so readers who reach the vendor get what our resolver answers. */
export interface VendorTarget {
  longUrl: string;
  /**
   * Archived: our resolver no longer redirects (gone, deleted, expired without fallback, blocked); `longUrl` is
   * then our preview page, never the old target.
   */
  archived: boolean;
}

/**
 * Derives the vendor copy from our own redirect decision (one policy for every front): the same Location
 * (UTM markers included); links we answer with a status page (410, 451, the warn interstitial) point at our
 * preview page `/{code}+` so a reader who reaches the vendor is never sent to a blocked, unpublished, deleted or
 * expired target, and are archived when we no longer redirect. Bitly cannot answer 410 and an archived bitlink
 * may still redirect, so "archived" alone would leave the old article one click away whenever Bitly fronts the
 * short domain. A pending link (being published) is synced as the active link it is about to become.
 */
export function toVendorTarget(
  link: VendorTargetRow,
  settings: RedirectSettings & { shortBaseUrl: string },
  nowMs: number,
): VendorTarget {
  // On the link's own short domain (ADR 0078).
  const previewUrl = `${shortUrlOfKey(settings, link.code)}+`;
  // Deleted: 410 forever, whatever its status says.
  if (link.deletedAt) return { longUrl: previewUrl, archived: true };
  const record = toServingRecord(link);
  if (record.status === 'pending') record.status = 'active';
  const decision = decideRedirect(link.code, record, nowMs, settings);
  switch (decision.outcome) {
    case 'redirect':
      return { longUrl: decision.location ?? link.targetUrl, archived: false };
    case 'expired':
      return decision.location
        ? { longUrl: decision.location, archived: false }
        : { longUrl: previewUrl, archived: true };
    case 'warn':
    case 'archived':
      // The archived copy of a dead destination: our preview names it (and the switch back is ours to make).
      return { longUrl: previewUrl, archived: false };
    default:
      // blocked, gone (unpublished), and anything else we answer with a status page: our page, archived.
      return { longUrl: previewUrl, archived: true };
  }
}
