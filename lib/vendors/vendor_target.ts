import { decideRedirect, type RedirectSettings } from '../redirect/redirect_policy.ts';
import { toServingRecord } from '../redirect/serving_record.ts';
import type { LinkRow } from '../stores/link_rows.ts';

/** What a vendor's copy of a link must be so readers who reach the vendor get what our resolver answers. */
export interface VendorTarget {
  longUrl: string;
  /** Archived: our resolver no longer redirects (gone, deleted, expired without fallback, blocked). */
  archived: boolean;
}

/**
 * Derives the vendor copy from our own redirect decision (one policy for every front): the same Location
 * (UTM markers included); links we answer with a status page (410, 451, the warn interstitial) point at our
 * preview page so a reader who reaches the vendor is never sent to a blocked or unpublished target, and are
 * archived when we no longer redirect. A pending link (being published) is synced as the active link it
 * is about to become.
 */
export function toVendorTarget(
  link: LinkRow,
  settings: RedirectSettings & { shortBaseUrl: string },
  nowMs: number,
): VendorTarget {
  const record = toServingRecord(link);
  if (record.status === 'pending') record.status = 'active';
  const decision = decideRedirect(link.code, record, nowMs, settings);
  const previewUrl = `${settings.shortBaseUrl}/${link.code}+`;
  if (link.deletedAt) return { longUrl: link.targetUrl, archived: true };
  switch (decision.outcome) {
    case 'redirect':
      return { longUrl: decision.location ?? link.targetUrl, archived: false };
    case 'expired':
      return decision.location
        ? { longUrl: decision.location, archived: false }
        : { longUrl: link.targetUrl, archived: true };
    case 'warn':
      return { longUrl: previewUrl, archived: false };
    case 'blocked':
      return { longUrl: previewUrl, archived: true };
    default:
      // gone (and anything we answer 404/410 for): keep the last target, archived.
      return { longUrl: link.targetUrl, archived: true };
  }
}
