// Bitly's read endpoints: expand, a bitlink, a custom bitlink, and a group's bitlinks paged newest first.
import { bitlinkBody, customBitlinkBody, forbidden, HttpAnswer, notFound } from './answers.ts';
import type { BitlyRouteContext } from './route_context.ts';
import type { FakeBitlink } from './types.ts';

/** POST /v4/expand: the long URL behind a bitlink id. */
export function expand(fake: BitlyRouteContext, body: Record<string, unknown>): HttpAnswer {
  const link = typeof body.bitlink_id === 'string' ? fake.store.lookup(body.bitlink_id) : undefined;
  if (!link) return notFound();
  return new HttpAnswer(200, {
    long_url: link.longUrl,
    created_at: link.createdAt,
    link: `https://${link.id}`,
    id: link.id,
  });
}

/** GET /v4/custom_bitlinks/{domain/keyword}: the keyword's CustomBitlink. */
export function getCustom(fake: BitlyRouteContext, custom: string): HttpAnswer {
  const [domain = '', keyword = ''] = custom.split('/');
  const link = fake.store.lookup(`${domain.toLowerCase()}/${keyword}`);
  if (link?.keywords.includes(keyword)) {
    return new HttpAnswer(200, customBitlinkBody(fake.baseUrl, domain.toLowerCase(), keyword, link));
  }
  return notFound();
}

/** GET /v4/groups/{group_guid}/bitlinks: our group's links, newest first, by page or search_after. */
export function listGroup(fake: BitlyRouteContext, group: string, query: URLSearchParams): HttpAnswer {
  if (group !== fake.groupGuid) return forbidden();
  const size = Math.min(Math.max(Number(query.get('size') ?? 50) || 50, 1), 100);
  const archived = query.get('archived') ?? 'off';
  const createdAfter = Number(query.get('created_after') ?? 0) * 1000;
  const after = query.get('search_after');
  const afterSeq = after ? Number(Buffer.from(after, 'base64url').toString('utf8')) : null;
  const pageStart = (Math.max(Number(query.get('page')) || 1, 1) - 1) * size;
  let start: number;
  let page: FakeBitlink[];
  let total: number;
  if (archived === 'both' && !createdAfter && fake.store.groupSize(group) === fake.store.size) {
    // Every bitlink is ours and none is filtered out: the page is read off the creation order (the same answer
    // as below, without sorting millions of bitlinks per page: bench/reconcile_scale.ts pages 4.7 million).
    total = fake.store.size;
    start = afterSeq !== null ? fake.store.countFromSeq(afterSeq) : query.get('page') ? pageStart : 0;
    page = fake.store.newestAfter(start, size);
  } else {
    const all = fake.store
      .all()
      .filter((l) => l.group === group)
      .filter((l) => !createdAfter || Date.parse(l.createdAt.replace('+0000', 'Z')) >= createdAfter)
      .filter((l) => archived === 'both' || (archived === 'on' ? l.archived : !l.archived))
      .sort((a, b) => b.seq - a.seq);
    start = 0;
    if (afterSeq !== null) {
      start = all.findIndex((l) => l.seq < afterSeq);
      if (start < 0) start = all.length;
    } else if (query.get('page')) {
      start = pageStart;
    }
    total = all.length;
    page = all.slice(start, start + size);
  }
  const more = start + size < total;
  const pageNo = Math.floor(start / size) + 1;
  const last = page.at(-1);
  const nextUrl = new URL(`${fake.baseUrl}/v4/groups/${group}/bitlinks`);
  nextUrl.searchParams.set('page', String(pageNo + 1));
  nextUrl.searchParams.set('size', String(size));
  return new HttpAnswer(200, {
    links: page.map((l) => bitlinkBody(fake.baseUrl, l)),
    pagination: {
      prev: '',
      next: more ? nextUrl.toString() : '',
      size,
      page: pageNo,
      total,
      search_after: more && last ? Buffer.from(String(last.seq)).toString('base64url') : '',
    },
  });
}
