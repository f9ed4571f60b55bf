import { sha256Hex } from '../shared/crypto.ts';
import type { CreateLinkInput } from './link.ts';

/**
 * The key that makes "same owner, same url, same options" one link: a SHA-256 over a canonical JSON of the
 * url and every option (tags sorted). A title and per-link UTM values count as options when there are any
 * (asking again with another headline or campaign makes another link rather than dropping it), and so do routing
 * rules; they are appended only when set, so links without them keep the keys they always had; so is the stored
 * short domain (`domain`, '' the default). Aliased creations never dedupe, so they have no key.
 */
export async function getDedupeKey(input: CreateLinkInput, domain = ''): Promise<string | null> {
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
  // The title is a bare string and UTM a tagged array, so the two can never be mistaken for each other.
  if (input.title !== undefined) parts.push(input.title);
  const utm = input.utm;
  if (utm && (utm.campaign || utm.source || utm.medium)) {
    parts.push(['utm', utm.campaign ?? null, utm.source ?? null, utm.medium ?? null]);
  }
  // Another short domain than the default is another link (ADR 0078); the default's keys stay as they were.
  if (domain !== '') parts.push(['domain', domain]);
  // Routing rules too, in order (first match wins), tagged like UTM; none: the key links without them always had.
  if (input.rules && input.rules.length > 0) {
    parts.push(['rules', ...input.rules.map((r) => [r.kind, r.values, r.target])]);
  }
  return sha256Hex(JSON.stringify(parts));
}
