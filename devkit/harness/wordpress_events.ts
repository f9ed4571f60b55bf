import { randomUUID } from 'node:crypto';
import type { WordPressEventName } from '../../lib/publishing/wordpress_event.ts';
import { eventually, type Harness } from './harness.ts';

/** A WordPress webhook body (API.md) for a post; times increase with each call unless given. */
export interface WebhookBody {
  id: string;
  event: WordPressEventName;
  site: string;
  postId: number;
  permalink?: string;
  title?: string;
  occurredAt: string;
  restUrl?: string;
  installationId?: string;
  knownCode?: string;
  guid?: string;
}

let clock = Date.now();

/** The next event time: strictly increasing, microsecond precision like the plugin sends. */
export function nextOccurredAt(): string {
  clock = Math.max(clock + 1, Date.now());
  return `${new Date(clock).toISOString().slice(0, 23)}${String(Math.floor(Math.random() * 1000)).padStart(3, '0')}Z`;
}

/** A permalink as WordPress emits it for an Arabic title: lowercase percent-encoded slug. */
export function arabicPermalink(postId: number, suffix = ''): string {
  return `https://news.example/2026/11/%d8%b9%d8%a7%d8%ac%d9%84-${postId}${suffix}/`;
}

export function wordpressEvent(
  event: WordPressEventName,
  post: {
    site?: string;
    postId: number;
    permalink?: string;
    title?: string;
    occurredAt?: string;
    /** Sent by plugins that know them (ADR 0057): where the listing lives, the installation, the post's claim. */
    restUrl?: string;
    installationId?: string;
    knownCode?: string;
    guid?: string;
  },
): WebhookBody {
  return {
    id: `delivery-${randomUUID()}`,
    event,
    site: post.site ?? 'news',
    postId: post.postId,
    ...(event === 'post.unpublished' ? {} : { permalink: post.permalink ?? arabicPermalink(post.postId) }),
    ...(post.title !== undefined ? { title: post.title } : {}),
    occurredAt: post.occurredAt ?? nextOccurredAt(),
    ...(post.restUrl !== undefined ? { restUrl: post.restUrl } : {}),
    ...(post.installationId !== undefined ? { installationId: post.installationId } : {}),
    ...(post.knownCode !== undefined ? { knownCode: post.knownCode } : {}),
    ...(post.guid !== undefined ? { guid: post.guid } : {}),
  };
}

export interface ApiLink {
  code: string;
  shortUrl: string;
  url: string;
  status: string;
  title?: string;
  vendors: { name: string; state: string; syncedAt?: string; error?: string }[];
}

/** GET /api/v1/links/by-post/...: the post's link, or null (404) while it has none. */
export async function getPostLink(h: Harness, site: string, postId: number): Promise<ApiLink | null> {
  const res = await h.api(`/api/v1/links/by-post/${site}/${postId}`);
  if (res.status === 404) return null;
  if (res.status !== 200) throw new Error(`by-post answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as ApiLink;
}

/** Waits until the post's link satisfies `ok`. */
export function waitForPostLink(
  h: Harness,
  site: string,
  postId: number,
  ok: (link: ApiLink) => boolean,
  options: { timeoutMs?: number; what?: string } = {},
): Promise<ApiLink> {
  return eventually(
    async () => {
      const link = await getPostLink(h, site, postId);
      return link && ok(link) ? link : undefined;
    },
    {
      timeoutMs: options.timeoutMs ?? 30_000,
      intervalMs: 100,
      what: options.what ?? `post ${postId}'s link`,
    },
  );
}

/** Waits for the post's workflow (all runs) to finish its queue; returns the last result. */
export async function waitForPostWorkflow(h: Harness, site: string, postId: number) {
  return (await h.temporal.client.workflow.getHandle(`publish:${site}:${postId}`).result()) as {
    code: string | null;
    applied: string[];
  };
}

/**
 * Waits until a post event's change has reached the link's copies: the post's workflow has finished and the sync
 * queue holds no row for the code (a row leaves only once the drainer's batch has synced it).
 */
export async function waitForPostSynced(
  h: Harness,
  site: string,
  postId: number,
  code: string,
): Promise<void> {
  await waitForPostWorkflow(h, site, postId);
  await eventually(
    async () => {
      const [row] = await h.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM link_sync_queue WHERE code = ${code}`;
      return row!.n === 0 ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 50, what: `${code} synced through the sync queue` },
  );
}
