// Reading links for the API and the UI: a live link or a 404, with its vendor replicas, in the API's shape.
import { NotFoundError, ValidationError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { linkKey, type ShortDomains, storedDomainFromInput } from '../shared/link_key.ts';
import type { LinkRow, VendorLinkRow } from '../stores/link_rows.ts';
import { getLinkByCode, getLinkByPost, groupVendorLinks, listVendorLinks } from '../stores/link_store.ts';
import type { Db } from '../stores/sql.ts';
import { type Link, toLink } from './link.ts';

/**
 * The key of the link a request names by its code and, for a link on another short domain, `domain` (a query
 * parameter of the link routes); a domain that is not one of SHORT_DOMAINS is a 422 naming the field.
 */
export function linkKeyOf(domains: ShortDomains, code: string, domain: string | undefined): string {
  const stored = storedDomainFromInput(domains, domain);
  if (stored === undefined) {
    throw new ValidationError([{ path: 'domain', message: fieldProblem('unknownDomain') }]);
  }
  return linkKey(stored, code);
}

/** The stored link `code`, unless deleted; a 404 otherwise. */
export async function getLinkRowOrThrow(db: Db, code: string): Promise<LinkRow> {
  const row = await getLinkByCode(db, code);
  if (!row || row.deletedAt) throw new NotFoundError(`No link ${code}.`);
  return row;
}

/** The article's canonical link once it is shared (not pending, not deleted); a 404 until then. */
export async function getPostLinkRowOrThrow(db: Db, site: string, postId: number): Promise<LinkRow> {
  const row = await getLinkByPost(db, site, postId);
  if (!row || row.status === 'pending' || row.deletedAt)
    throw new NotFoundError(`Post ${postId} of ${site} has no link yet.`);
  return row;
}

/** True when `code` was ever used: deleted codes stay taken, a code is never reused. */
export async function isCodeTaken(db: Db, code: string): Promise<boolean> {
  return (await getLinkByCode(db, code)) !== null;
}

/** The vendor replicas of a link. */
export function listLinkVendors(db: Db, code: string): Promise<VendorLinkRow[]> {
  return listVendorLinks(db, [code]);
}

/** Stored links in the API's shape, each with its vendor replicas (one query for all of them). */
export async function toLinksWithVendors(
  db: Db,
  domains: ShortDomains,
  rows: readonly LinkRow[],
): Promise<Link[]> {
  const vendors = groupVendorLinks(
    await listVendorLinks(
      db,
      rows.map((r) => r.code),
    ),
  );
  return rows.map((row) => toLink(row, domains, vendors.get(row.code)));
}
