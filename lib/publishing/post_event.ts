import type { WordPressEventName } from './wordpress_event.ts';

/**
 * One WordPress lifecycle event as the per-post workflow receives it (a verified webhook delivery).
 * Plain data: the workflow imports this type, so nothing here may do I/O.
 */
export interface PostEvent {
  deliveryId: string;
  event: WordPressEventName;
  site: string;
  postId: number;
  /** Canonical permalink as WordPress emits it (absent on post.unpublished). */
  permalink?: string;
  title?: string;
  /** The code the post claims (its post meta): outranks the post ID (ADR 0057). */
  knownCode?: string;
  /** The post's WordPress GUID. */
  guid?: string;
  /** ISO time of the change in WordPress; orders events (links.source_version holds the newest applied). */
  occurredAt: string;
}
