import { z } from 'zod';
import { BadRequestError, ValidationError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { type ShortDomains, storedDomainFromInput } from '../shared/link_key.ts';
import {
  LINK_SORTS,
  type LinkListFilter,
  type LinkListPosition,
  type LinkSort,
  listClickTotals,
  listLinks,
} from '../stores/link_list_store.ts';
import type { LinkRow, VendorLinkRow } from '../stores/link_rows.ts';
import { groupVendorLinks, listVendorLinks } from '../stores/link_store.ts';
import type { Db } from '../stores/sql.ts';
import {
  LINK_ORIGINS,
  LINK_STATUSES,
  linkSchema,
  SAFETY_VERDICTS,
  shortDomainSchema,
  siteSchema,
  tagSchema,
} from './link.ts';

export { LINK_SORTS };

export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 200;

/** An empty query parameter (a form's "any" option) means "not given". */
const blankAsUndefined = (v: unknown) => (v === '' ? undefined : v);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blankAsUndefined, schema.optional());

/** GET /api/v1/links query (also the UI's list filters). Unknown parameters are rejected, not ignored. */
export const linkListQuerySchema = z.strictObject({
  q: optional(
    z
      .string()
      .trim()
      .min(1)
      .max(200, 'must be at most 200 characters')
      .describe(
        'Substring of the code, the target URL (as stored or percent-decoded) or the title, or an exact tag. ' +
          'Titles and decoded URLs are matched folded: case, accents, Arabic diacritics, tatweel and letter ' +
          'variants (alef forms, teh marbuta, alef maksura) do not matter.',
      ),
  ),
  status: optional(z.enum(LINK_STATUSES)),
  safety: optional(z.enum(SAFETY_VERDICTS)),
  origin: optional(z.enum(LINK_ORIGINS)),
  tag: optional(tagSchema),
  site: optional(siteSchema),
  domain: optional(shortDomainSchema),
  sort: optional(z.enum(LINK_SORTS)).transform((v) => v ?? 'newest'),
  cursor: optional(z.string().max(600, fieldProblem('badCursor'))),
  limit: optional(
    z.coerce.number().int().min(1).max(LIST_LIMIT_MAX, `must be at most ${LIST_LIMIT_MAX}`),
  ).transform((v) => v ?? LIST_LIMIT_DEFAULT),
});
export type LinkListQuery = z.infer<typeof linkListQuerySchema>;

/** GET /api/v1/links answer. */
export const linkListSchema = z.object({
  items: z.array(linkSchema),
  nextCursor: z.string().nullable().describe('pass as cursor= for the next page; null on the last page'),
  prevCursor: z.string().nullable().describe('pass as cursor= for the previous page; null on the first page'),
});

export interface LinkPage {
  items: LinkRow[];
  vendors: Map<string, VendorLinkRow[]>;
  /** Readers' clicks (human and QR) of each listed link; a link never clicked is absent (0). */
  clicks: Map<string, number>;
  /** Continues after the last item; null on the last page. */
  nextCursor: string | null;
  /** Goes back to the page before the first item; null on the first page. */
  prevCursor: string | null;
}

const cursorSchema = z.object({
  s: z.enum(LINK_SORTS),
  v: z.string().max(100),
  c: z.string().max(100),
  d: z.enum(['a', 'b']),
});

function encodeCursor(sort: LinkSort, value: string, code: string, direction: 'a' | 'b'): string {
  const json = JSON.stringify({ s: sort, v: value, c: code, d: direction });
  return btoa(String.fromCharCode(...new TextEncoder().encode(json)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

function decodeCursor(cursor: string, sort: LinkSort): LinkListPosition {
  let parsed: z.infer<typeof cursorSchema>;
  try {
    const bin = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
    const json = new TextDecoder().decode(Uint8Array.from(bin, (ch) => ch.charCodeAt(0)));
    parsed = cursorSchema.parse(JSON.parse(json));
  } catch {
    throw new BadRequestError('The cursor is not one this server issued.', [
      { path: 'cursor', message: 'is not a cursor this server issued' },
    ]);
  }
  if (parsed.s !== sort) {
    throw new BadRequestError('The cursor belongs to another sort order.', [
      { path: 'cursor', message: `was issued for sort=${parsed.s}` },
    ]);
  }
  return { value: parsed.v, code: parsed.c, direction: parsed.d === 'a' ? 'after' : 'before' };
}

/**
 * The store's filter for a list query (the API's, the UI's and the CSV export's). A `domain` filter needs the
 * deployment's short domains: one that is not among them is a 422 naming the field.
 */
export function toLinkListFilter(
  query: Omit<LinkListQuery, 'cursor' | 'limit' | 'sort'>,
  domains?: ShortDomains,
): LinkListFilter {
  let domain: string | undefined;
  if (query.domain !== undefined) {
    domain = domains ? storedDomainFromInput(domains, query.domain) : undefined;
    if (domain === undefined) {
      throw new ValidationError([{ path: 'domain', message: fieldProblem('unknownDomain') }]);
    }
  }
  return {
    ...(domain !== undefined ? { domain } : {}),
    ...(query.q ? { q: query.q } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.safety ? { safety: query.safety } : {}),
    ...(query.origin ? { origin: query.origin } : {}),
    ...(query.tag ? { tag: query.tag } : {}),
    ...(query.site ? { site: query.site } : {}),
  };
}

/** One page of links matching the query, with cursors both ways and each link's vendor replicas. */
export async function listLinkPage(db: Db, query: LinkListQuery, domains?: ShortDomains): Promise<LinkPage> {
  const filter = toLinkListFilter(query, domains);
  const position = query.cursor ? decodeCursor(query.cursor, query.sort) : undefined;
  // One extra row tells whether another page exists in the direction of travel.
  const rows = await listLinks(db, filter, query.sort, query.limit + 1, position);
  const backwards = position?.direction === 'before';
  const more = rows.length > query.limit;
  const items = more ? (backwards ? rows.slice(1) : rows.slice(0, query.limit)) : rows;
  const first = items[0];
  const last = items[items.length - 1];
  const hasNext = backwards ? true : more;
  const hasPrev = backwards ? more : position !== undefined;
  const vendors = groupVendorLinks(
    await listVendorLinks(
      db,
      items.map((i) => i.code),
    ),
  );
  const clicks = await listClickTotals(
    db,
    items.map((i) => i.code),
  );
  return {
    items,
    vendors,
    clicks,
    nextCursor: hasNext && last ? encodeCursor(query.sort, last.sortValue, last.code, 'a') : null,
    prevCursor: hasPrev && first ? encodeCursor(query.sort, first.sortValue, first.code, 'b') : null,
  };
}
