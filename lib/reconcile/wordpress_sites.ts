// Which WordPress listings reconciliation reads: WORDPRESS_REST_URLS when set, else what signed events named.
import type { Logger } from '../shared/logger.ts';
import { getWordPressSite, listWordPressSiteRows } from '../stores/wordpress_site_store.ts';
import type { WordPressReconcileDeps } from './wordpress_pass.ts';

/** True when WORDPRESS_REST_URLS is set: then it is the whole list of listings read. */
export const isListClosed = (deps: Pick<WordPressReconcileDeps, 'wordpress'>) =>
  Object.keys(deps.wordpress.restUrls).length > 0;

/**
 * The site's listing base. With WORDPRESS_REST_URLS set, only what it lists (a restUrl a signed event or batch
 * carried is never read then, for that site or any other); otherwise the newest signed event's restUrl, which
 * the outgoing-request rule still keeps off private addresses (docs/adr/0058-outgoing-requests-rule.md).
 */
export async function getRestUrl(deps: Pick<WordPressReconcileDeps, 'sql' | 'wordpress'>, site: string) {
  if (isListClosed(deps)) return deps.wordpress.restUrls[site] ?? null;
  return (await getWordPressSite(deps.sql, site))?.restUrl ?? null;
}

/** Every site reconciliation reads: WORDPRESS_REST_URLS's when set, else those events and backfills named. */
export async function listWordPressSites(
  deps: Pick<WordPressReconcileDeps, 'sql' | 'wordpress'> & { logger?: Logger },
): Promise<string[]> {
  const sites = new Set(Object.keys(deps.wordpress.restUrls));
  const stored = await listWordPressSiteRows(deps.sql);
  if (!isListClosed(deps)) for (const row of stored) sites.add(row.site);
  else {
    const ignored = stored.filter((row) => !sites.has(row.site)).map((row) => row.site);
    if (ignored.length > 0) {
      deps.logger?.warn(
        { ignored: ignored.length, sites: ignored.slice(0, 20) },
        'sites whose signed events named a restUrl are not in WORDPRESS_REST_URLS: not read',
      );
    }
  }
  return [...sites].sort();
}
