// Bitly's read endpoints: expand, a bitlink, a custom bitlink, and a group's bitlinks paged newest first.
import { bitlinkBody, customBitlinkBody, forbidden, HttpAnswer, notFound } from './answers.ts';
import type { BitlyRouteContext } from './route_context.ts';

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
  const all = fake.store
    .all()
    .filter((l) => l.group === group)
    .filter((l) => !createdAfter || Date.parse(l.createdAt.replace('+0000', 'Z')) >= createdAfter)
    .filter((l) => archived === 'both' || (archived === 'on' ? l.archived : !l.archived))
    .sort((a, b) => b.seq - a.seq);
  let start = 0;
  const after = query.get('search_after');
  if (after) {
    const seq = Number(Buffer.from(after, 'base64url').toString('utf8'));
    start = all.findIndex((l) => l.seq < seq);
    if (start < 0) start = all.length;
  } else if (query.get('page')) {
    start = (Math.max(Number(query.get('page')) || 1, 1) - 1) * size;
  }
  const page = all.slice(start, start + size);
  const more = start + size < all.length;
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
      total: all.length,
      search_after: more && last ? Buffer.from(String(last.seq)).toString('base64url') : '',
    },
  });
}
