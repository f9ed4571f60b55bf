import { sha256Hex } from '../shared/crypto.ts';
import type { CreateLinkInput } from './link.ts';

/**
 * The key that makes "same owner, same url, same options" one link: a SHA-256 over a canonical JSON of the
 * url and every option (tags sorted). A title counts as an option when there is one (asking again with
 * another headline makes another link rather than dropping the headline); links without a title keep the
 * keys they always had. Aliased creations never dedupe, so they have no key.
 */
export async function getDedupeKey(input: CreateLinkInput): Promise<string | null> {
  if (input.alias !== undefined) return null;
  const canonical = JSON.stringify([
    input.url,
    input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
    input.expiredUrl ?? null,
    input.redirectStatus ?? null,
    [...new Set(input.tags ?? [])].sort(),
    input.site ?? null,
    input.postId ?? null,
    ...(input.title !== undefined ? [input.title] : []),
  ]);
  return sha256Hex(canonical);
}
