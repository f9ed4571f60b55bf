// Which link is a post's (ADR 0057). A post's claim to its code (`knownCode`, its post meta, carried by an
// export and import) outranks its GUID, which outranks its permalink path, which outranks its post ID: after a
// move to a fresh WordPress the post IDs are reassigned, and the ID alone would retarget another article's code.
// A claim for a code bound to another post of the same site moves the code to this post (audited, never a second
// code); the link that held this post ID is detached until its own post claims it. Outside migration mode the
// GUID and the path are not consulted; in it (a new installation of a known site), a post the claim does not
// settle is matched by GUID, then path, and a post ID alone never retargets a code. What cannot be decided is
// filed for review (wordpress_reviews) and changes nothing.

import { linkKey } from '../shared/link_key.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import { lockKeys } from '../stores/link_batch_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { getLinkByCode, getLinkByPost } from '../stores/link_store.ts';
import {
  detachLinkFromPost,
  getSiteInstallation,
  listLinksByGuids,
  listLinksByPaths,
  updateLinkPost,
  upsertPostGuid,
} from '../stores/post_identity_store.ts';
import type { Db, Tx } from '../stores/sql.ts';
import { insertReview, type NewReview } from '../stores/wordpress_review_store.ts';
import { getSiteDomain } from '../stores/wordpress_site_domain_store.ts';

/** What a post says about itself (an event, a backfill row, a listing row). */
export interface PostIdentity {
  site: string;
  postId: number;
  knownCode?: string | undefined;
  guid?: string | undefined;
  permalink?: string | undefined;
}

export type IdentityOutcome =
  /** The post's binding stands (or it has none and may get one: `link` null). */
  | { kind: 'bound'; link: LinkRow | null }
  /** The post's code was moved to this post ID; `detached`: the code that held the ID before. */
  | { kind: 'rebound'; link: LinkRow; matchedBy: 'claim' | 'guid' | 'path'; detached: string | null }
  /** Nothing may change for this post until an admin decides (filed for review). */
  | { kind: 'conflict'; review: NewReview };

/** The path (and query) of a URL after its host: what a permalink keeps across a move of host. */
export function toPermalinkPath(url: string): string {
  return url.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/, '');
}

/** True while the site is in migration mode (a new installation, not yet settled). */
export async function isMigrating(db: Db, site: string): Promise<boolean> {
  return (await getSiteInstallation(db, site))?.migratingSince != null;
}

/**
 * Moves `link` to (site, postId): the link that holds the post ID now is detached first. Audited on both.
 * The caller holds the post's lock; the code's former post is locked here too.
 */
export async function rebindPostLink(
  tx: Tx,
  input: { link: LinkRow; site: string; postId: number; actor: string; reason: string; matchedBy: string },
): Promise<{ link: LinkRow; detached: string | null }> {
  const { link, site, postId } = input;
  if (link.postId !== null && link.postId > 0) await lockKeys(tx, [`post|${site}|${link.postId}`]);
  const occupant = await getLinkByPost(tx, site, postId);
  let detached: string | null = null;
  if (occupant && occupant.code !== link.code) {
    const placeholder = await detachLinkFromPost(tx, occupant.code);
    detached = occupant.code;
    await insertAuditEntry(tx, {
      code: occupant.code,
      actor: input.actor,
      action: 'link.unbound',
      before: { postId },
      after: { postId: null, placeholder },
      reason: `${input.reason}: post ${postId} claims ${link.code}`,
    });
  }
  const rebound = await updateLinkPost(tx, link.code, postId);
  await insertAuditEntry(tx, {
    code: link.code,
    actor: input.actor,
    action: 'link.rebound',
    before: { postId: link.postId !== null && link.postId > 0 ? link.postId : null },
    after: { postId },
    reason: `${input.reason} (matched by ${input.matchedBy})`,
  });
  return { link: rebound, detached };
}

/**
 * The link a post's claim names. A plugin knows its links by their codes (the API's `code`), so a claim is read on
 * the short domain the site mints in (ADR 0078), then, for a site mapped there after it had links, on the
 * default one; the caller still requires the link to be this site's.
 */
export async function findClaimedLink(
  tx: Tx,
  site: string,
  knownCode: string,
  current: LinkRow | null,
): Promise<LinkRow | null> {
  const domain = await getSiteDomain(tx, site);
  for (const key of domain === '' ? [knownCode] : [linkKey(domain, knownCode), knownCode]) {
    if (current?.code === key) return current;
    const link = await getLinkByCode(tx, key);
    if (link && (link.site === site || key === knownCode)) return link;
  }
  return null;
}

/**
 * Decides (and, when it is unambiguous, applies) which link is this post's, under the caller's post lock.
 * `migrating`: the site's mode, read by the caller once per batch.
 */
export async function settlePostIdentity(
  tx: Tx,
  post: PostIdentity,
  options: { migrating: boolean; actor: string; reason: string },
): Promise<IdentityOutcome> {
  const { site, postId } = post;
  const current = await getLinkByPost(tx, site, postId);
  const rebind = async (link: LinkRow, matchedBy: 'claim' | 'guid' | 'path'): Promise<IdentityOutcome> => {
    const done = await rebindPostLink(tx, {
      link,
      site,
      postId,
      actor: options.actor,
      reason: options.reason,
      matchedBy,
    });
    if (post.guid) await upsertPostGuid(tx, done.link.code, site, post.guid);
    return { kind: 'rebound', link: done.link, matchedBy, detached: done.detached };
  };
  const bound = async (link: LinkRow | null): Promise<IdentityOutcome> => {
    if (link && post.guid) await upsertPostGuid(tx, link.code, site, post.guid);
    return { kind: 'bound', link };
  };
  const conflict = (review: Omit<NewReview, 'site' | 'postId' | 'permalink'>): IdentityOutcome => ({
    kind: 'conflict',
    review: { site, postId, permalink: post.permalink ?? null, ...review },
  });

  if (post.knownCode) {
    const claimed = await findClaimedLink(tx, site, post.knownCode, current);
    // A link imported from Bitly and bound to no post is adopted by the backfill's own rules, not claimed here.
    const unboundImport = claimed?.site === null && claimed.origin === 'import';
    if (claimed && !unboundImport && claimed.site === site && !claimed.deletedAt) {
      return claimed.postId === postId ? bound(claimed) : rebind(claimed, 'claim');
    }
    if (claimed && !unboundImport) {
      // Another site's code, a link not bound to WordPress, or a deleted one: never moved to this post.
      const foreign = claimed.site !== site;
      return conflict({
        kind: foreign ? 'foreign-claim' : 'claim-conflict',
        code: post.knownCode,
        candidates: current ? [current.code] : [],
        detail: foreign
          ? `post ${postId} claims ${post.knownCode}, which belongs to ${claimed.site ? `site ${claimed.site}` : 'no WordPress site'}`
          : `post ${postId} claims ${post.knownCode}, which was deleted`,
      });
    }
    // A code this Lifeline never had (another instance, a hand-edited meta): the claim is ignored.
  }
  if (!options.migrating) return bound(current);
  const path = post.permalink ? toPermalinkPath(post.permalink) : null;
  if (current && path !== null && toPermalinkPath(current.targetUrl) === path) return bound(current);
  if (post.guid) {
    const byGuid = (await listLinksByGuids(tx, site, [post.guid])).get(post.guid) ?? [];
    if (byGuid.length === 1)
      return byGuid[0]!.code === current?.code ? bound(current) : rebind(byGuid[0]!, 'guid');
    if (byGuid.length > 1) {
      return conflict({
        kind: 'ambiguous',
        candidates: byGuid.map((l) => l.code).sort(),
        detail: `post ${postId}'s GUID names ${byGuid.length} links`,
      });
    }
  }
  if (path !== null) {
    const byPath = (await listLinksByPaths(tx, site, [path])).get(path) ?? [];
    if (byPath.length === 1)
      return byPath[0]!.code === current?.code ? bound(current) : rebind(byPath[0]!, 'path');
    if (byPath.length > 1) {
      return conflict({
        kind: 'ambiguous',
        candidates: byPath.map((l) => l.code).sort(),
        detail: `post ${postId}'s permalink path ${path} names ${byPath.length} links`,
      });
    }
  }
  if (current) {
    // Only the post ID matches, and the post is not the article the code was made for.
    return conflict({
      kind: 'reused-post-id',
      code: current.code,
      detail: `post ${postId} (migration mode) matches ${current.code} by its ID only; ${current.code} points at ${current.targetUrl}`,
    });
  }
  return bound(null);
}

/** Files a conflict's review item. */
export function fileReview(db: Db, review: NewReview): Promise<void> {
  return insertReview(db, review);
}
