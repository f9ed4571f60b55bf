// The serving store and the LRUs are the in-house copies: a refresh re-reads a link from Postgres, writes the
// serving store (version-guarded) and announces the code on the invalidation bus, so every web instance drops
// its LRU entry (lib/redirect: the resolver, the store, the bus).
import type { LinkResolver } from '../redirect/link_resolver.ts';
import { createInHouseProvider } from '../vendors/inhouse.ts';

/**
 * Refreshes the in-house copies of these codes (each re-read from Postgres; a code that no longer exists
 * is dropped) and reports what the in-house resolver now answers: the first step of a propagation pass and of a
 * first publish, before Bitly is asked.
 */
export async function writeServingStore(
  deps: { resolver: LinkResolver; shortBaseUrl: string },
  codes: readonly string[],
): Promise<{ serves: { code: string; url: string | null }[] }> {
  const inhouse = createInHouseProvider(deps);
  const serves = [];
  for (const code of codes) {
    const link = await inhouse.findByCode(code);
    serves.push({ code, url: link && !link.archived ? link.longUrl : null });
  }
  return { serves };
}

/**
 * One link's in-house copies refreshed (LinkResolver.refresh). The name is an activity type older sync passes
 * recorded; passes today call writeServingStore.
 */
export async function purgeLinkCaches(deps: { resolver: LinkResolver }, code: string): Promise<void> {
  await deps.resolver.refresh(code);
}
