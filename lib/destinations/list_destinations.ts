// The queue of dead destinations as the API and the editor UI show it: each link with what its checks saw (the
// verdict, the chain of redirects followed), its archived copy, the policy that applies and where it comes from.

import { z } from 'zod';
import { BadRequestError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { shortUrlOfKey } from '../shared/link_key.ts';
import {
  ARCHIVE_STATES,
  DEAD_POLICIES,
  DESTINATION_LIST_STATES,
  DESTINATION_VERDICTS,
  type DestinationListRow,
  listDestinationStates,
} from '../stores/destination_state_store.ts';
import type { Db } from '../stores/sql.ts';
import { effectiveDeadPolicy } from './act_on_destination.ts';

export {
  DEAD_POLICIES,
  type DeadPolicy,
  type DestinationListState,
} from '../stores/destination_state_store.ts';

export const destinationQuerySchema = z.strictObject({
  state: z.enum(DESTINATION_LIST_STATES).default('dead'),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(200).optional(),
});
export type DestinationQuery = z.infer<typeof destinationQuerySchema>;

export const destinationItemSchema = z.object({
  code: z.string(),
  shortUrl: z.string(),
  url: z.string(),
  host: z.string(),
  title: z.string().optional(),
  verdict: z.enum(DESTINATION_VERDICTS),
  outcome: z.string().nullable(),
  verdictAt: z.string().nullable(),
  checkedAt: z.string().nullable(),
  httpStatus: z.number().int().nullable(),
  finalUrl: z.string().nullable(),
  chain: z.array(
    z.object({ url: z.string(), status: z.number().int(), location: z.string().nullable().optional() }),
  ),
  error: z.string().nullable(),
  archive: z.object({
    state: z.enum(ARCHIVE_STATES),
    url: z.string().nullable(),
    at: z.string().nullable(),
  }),
  /** When the link started answering its archived copy (policy `fallback`), or null. */
  fallbackSince: z.string().nullable(),
  /** The retarget proposed for a moved destination on one of our own hosts, or null. */
  proposedUrl: z.string().nullable(),
  policy: z.object({
    effective: z.enum(DEAD_POLICIES),
    from: z.enum(['link', 'host', 'default']),
  }),
  /** Set for a link bound to a WordPress post: WordPress reconciliation decides, never a fallback. */
  post: z.object({ site: z.string(), postId: z.number().int() }).nullable(),
});
export type DestinationItem = z.infer<typeof destinationItemSchema>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toDestinationItem(row: DestinationListRow, shortBaseUrl: string): DestinationItem {
  return {
    code: row.code,
    shortUrl: shortUrlOfKey({ shortBaseUrl }, row.code),
    url: row.url,
    host: row.host,
    ...(row.title ? { title: row.title } : {}),
    verdict: row.verdict,
    outcome: row.outcome,
    verdictAt: iso(row.verdictAt),
    checkedAt: iso(row.checkedAt),
    httpStatus: row.httpStatus,
    finalUrl: row.finalUrl,
    chain: Array.isArray(row.chain) ? row.chain : [],
    error: row.error,
    archive: { state: row.archiveState, url: row.archiveUrl, at: iso(row.archiveAt) },
    fallbackSince: iso(row.fallbackSince),
    proposedUrl: row.proposedUrl,
    policy: {
      effective: effectiveDeadPolicy(row.linkPolicy, row.hostPolicy),
      from: row.linkPolicy ? 'link' : row.hostPolicy ? 'host' : 'default',
    },
    post: row.site !== null && row.postId !== null ? { site: row.site, postId: row.postId } : null,
  };
}

function encodeCursor(row: DestinationListRow): string {
  return Buffer.from(JSON.stringify([(row.verdictAt ?? row.updatedAt).toISOString(), row.code])).toString(
    'base64url',
  );
}

function decodeCursor(cursor: string): { verdictAt: Date; code: string } {
  try {
    const [at, code] = z
      .tuple([z.iso.datetime(), z.string().max(100)])
      .parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    return { verdictAt: new Date(at), code };
  } catch {
    throw new BadRequestError('The cursor is not one this server issued.', [
      { path: 'cursor', message: fieldProblem('badCursor') },
    ]);
  }
}

/** One page of destinations in `state` (dead by default), newest verdict first. */
export async function listDestinationsPage(
  db: Db,
  shortBaseUrl: string,
  query: DestinationQuery,
): Promise<{ items: DestinationItem[]; nextCursor: string | null }> {
  const rows = await listDestinationStates(db, {
    state: query.state,
    limit: query.limit + 1,
    after: query.cursor ? decodeCursor(query.cursor) : undefined,
  });
  const page = rows.slice(0, query.limit);
  return {
    items: page.map((r) => toDestinationItem(r, shortBaseUrl)),
    nextCursor: rows.length > query.limit && page.length > 0 ? encodeCursor(page.at(-1)!) : null,
  };
}
