// Which short domain a WordPress site's posts are minted in (ADR 0078): an admin's choice, kept per site. Only
// links minted afterwards follow it; a post keeps the link it has, on the domain it was minted in.
import { z } from 'zod';
import { ValidationError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { domainNameOf, type ShortDomains, storedDomainFromInput } from '../shared/link_key.ts';
import type { Db } from '../stores/sql.ts';
import { getSiteDomain, setSiteDomain } from '../stores/wordpress_site_domain_store.ts';

/** POST /api/v1/wordpress/sites/{site}/domain body. */
export const siteDomainInputSchema = z.strictObject({
  domain: z
    .string()
    .trim()
    .toLowerCase()
    .min(1)
    .max(253)
    .describe('one of SHORT_DOMAINS; the first (the default) removes the site’s mapping'),
});

/** A site's short domain as the API shows it. */
export const siteDomainSchema = z.object({ site: z.string(), domain: z.string() });

/** Maps `site` to one of the deployment's short domains; a 422 naming `domain` for one that is not configured. */
export async function mapSiteToDomain(
  deps: { sql: Db; config: ShortDomains },
  site: string,
  domain: string,
): Promise<z.infer<typeof siteDomainSchema>> {
  const stored = storedDomainFromInput(deps.config, domain);
  if (stored === undefined) {
    throw new ValidationError([{ path: 'domain', message: fieldProblem('unknownDomain') }]);
  }
  await setSiteDomain(deps.sql, site, stored);
  return { site, domain: domainNameOf(deps.config, stored) };
}

/** The short domain a site's new links are minted in. */
export async function getSiteShortDomain(
  deps: { sql: Db; config: ShortDomains },
  site: string,
): Promise<z.infer<typeof siteDomainSchema>> {
  return { site, domain: domainNameOf(deps.config, await getSiteDomain(deps.sql, site)) };
}
