import { AppError, type FieldError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';

// A link bound to a WordPress post (site + postId) is the article's one link: WordPress decides where it sends
// readers (DESIGN.md), and deleting it means the article never has a link again (a deleted code never comes
// back). So binding a link to a post, deleting a bound link, or changing anything that decides where a reader
// lands — target, status, expiry, the fallback after expiry, the redirect status, routing rules — is for administrators (API
// scope `admin`, UI role `admin`) and WordPress itself, never a `links:write` key or an editor: an expiry a
// minute ahead with a fallback on another host would hand the article's printed, shared code to someone else,
// and a 301 pins browsers to today's target. Titles, tags and UTM values stay open to them.

/** The 403 for a caller who may not manage post-bound links. */
function notAllowed(detail: string, errors: FieldError[]): AppError {
  return new AppError(403, 'forbidden', 'Forbidden', detail, { errors });
}

/** Refuses binding a new link to a post (site/postId) unless the caller manages post links. */
export function assertMayBindPost(
  input: { site?: string | undefined; postId?: number | undefined },
  mayManagePostLinks: boolean,
): void {
  if (mayManagePostLinks || (input.site === undefined && input.postId === undefined)) return;
  throw notAllowed('Only administrators (and WordPress) may bind a link to a post.', [
    { path: 'postId', message: 'binding a link to a WordPress post needs the admin scope' },
  ]);
}

/** The fields that decide where a post-bound link sends readers: WordPress's or an administrator's. */
export const POST_DECIDED_FIELDS = [
  'url',
  'status',
  'expiresAt',
  'expiredUrl',
  'redirectStatus',
  'rules',
] as const;
export type PostDecidedField = (typeof POST_DECIDED_FIELDS)[number];

/** True when `link` is bound to a post and the caller may not change its POST_DECIDED_FIELDS. */
export function isPostLinkLocked(link: { site: string | null }, mayManagePostLinks: boolean): boolean {
  return link.site !== null && !mayManagePostLinks;
}

/**
 * Refuses deleting a post-bound link, or changing any of its POST_DECIDED_FIELDS (`change` holds only the
 * fields that differ from the stored link), unless the caller manages post links. The 403 names every field.
 */
export function assertMayChangePostLink(
  link: { code: string; site: string | null },
  change: 'delete' | Partial<Record<PostDecidedField, unknown>>,
  mayManagePostLinks: boolean,
): void {
  if (!isPostLinkLocked(link, mayManagePostLinks)) return;
  if (change === 'delete') {
    throw notAllowed(
      `${link.code} is a WordPress article's link: only administrators may delete it (it would never come back).`,
      [{ path: 'code', message: 'is bound to a WordPress post; deleting it needs the admin scope' }],
    );
  }
  const fields = POST_DECIDED_FIELDS.filter((f) => change[f] !== undefined);
  if (fields.length === 0) return;
  throw notAllowed(
    `${link.code} is a WordPress article's link: where it sends readers (${fields.join(', ')}) is for WordPress and administrators.`,
    fields.map((path) => ({
      path,
      message: fieldProblem('postDecided'),
    })),
  );
}
