import { sha256Hex } from '../shared/crypto.ts';
import type { CreateLinkInput } from './link.ts';

/**
 * The key that makes "same owner, same url, same options" one link: a SHA-256 over a canonical JSON of the
 * url and every option (tags sorted). Aliased creations never dedupe, so they have no key.
 */
export async function getDedupeKey(input: CreateLinkInput): Promise<string | null> {
  if (input.alias !== undefined) return null;
  const parts: unknown[] = [
    input.url,
    input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
    input.expiredUrl ?? null,
    input.redirectStatus ?? null,
    [...new Set(input.tags ?? [])].sort(),
    input.site ?? null,
    input.postId ?? null,
  ];
  // Appended only when set, so the keys of links without UTM values stay what they were before UTM existed.
  const utm = input.utm;
  if (utm && (utm.campaign || utm.source || utm.medium)) {
    parts.push(['utm', utm.campaign ?? null, utm.source ?? null, utm.medium ?? null]);
  }
  const canonical = JSON.stringify(parts);
  return sha256Hex(canonical);
}
