import { AppError, type FieldError } from '../shared/errors.ts';

// A link bound to a WordPress post (site + postId) is the article's one link: WordPress decides its target and
// status (DESIGN.md), and deleting it means the article never has a link again (a deleted code never comes
// back). So binding a link to a post, deleting a bound link, or changing its target or status is for
// administrators (API scope `admin`, UI role `admin`) and WordPress itself — never a `links:write` key, which
// could otherwise claim a future article's slot with any target, or delete it before the article is published.

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

/** Refuses deleting, retargeting or changing the status of a post-bound link unless the caller manages post links. */
export function assertMayChangePostLink(
  link: { code: string; site: string | null },
  change: 'delete' | { url?: unknown; status?: unknown },
  mayManagePostLinks: boolean,
): void {
  if (mayManagePostLinks || link.site === null) return;
  if (change === 'delete') {
    throw notAllowed(
      `${link.code} is a WordPress article's link: only administrators may delete it (it would never come back).`,
      [{ path: 'code', message: 'is bound to a WordPress post; deleting it needs the admin scope' }],
    );
  }
  const fields = (['url', 'status'] as const).filter((f) => change[f] !== undefined);
  if (fields.length === 0) return;
  throw notAllowed(
    `${link.code} is a WordPress article's link: WordPress decides its target and status.`,
    fields.map((path) => ({
      path,
      message: 'is decided by WordPress for a post-bound link (admin scope only)',
    })),
  );
}
