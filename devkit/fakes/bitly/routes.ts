// The Bitly fake's API: which handler answers a method and path after /v4 (anything else gets Bitly's 404).
import { bitlinkBody, HttpAnswer, notFound } from './answers.ts';
import { clicks } from './click_routes.ts';
import { addCustom, shorten } from './create_routes.ts';
import { getGroup, getPlanLimits } from './group_routes.ts';
import { expand, getCustom, listGroup } from './lookup_routes.ts';
import type { BitlyRouteContext } from './route_context.ts';
import { moveCustom, patchBitlink } from './update_routes.ts';

export function route(
  fake: BitlyRouteContext,
  method: string,
  path: string,
  query: URLSearchParams,
  body: Record<string, unknown>,
): HttpAnswer {
  if (method === 'POST' && path === '/shorten') return shorten(fake, body, false);
  if (method === 'POST' && path === '/bitlinks') return shorten(fake, body, true);
  if (method === 'POST' && path === '/custom_bitlinks') return addCustom(fake, body);
  if (method === 'POST' && path === '/expand') return expand(fake, body);
  let m = /^\/custom_bitlinks\/([^/]+\/[^/]+)$/.exec(path);
  if (m) {
    const custom = decodeURIComponent(m[1]!);
    if (method === 'PATCH') return moveCustom(fake, custom, body);
    return method === 'GET' ? getCustom(fake, custom) : notFound();
  }
  m = /^\/groups\/([^/]+)\/bitlinks$/.exec(path);
  if (m && method === 'GET') return listGroup(fake, decodeURIComponent(m[1]!), query);
  m = /^\/groups\/([^/]+)$/.exec(path);
  if (m && method === 'GET') return getGroup(fake, decodeURIComponent(m[1]!));
  m = /^\/organizations\/([^/]+)\/plan_limits$/.exec(path);
  if (m && method === 'GET') return getPlanLimits(fake, decodeURIComponent(m[1]!));
  m = /^\/bitlinks\/([^/]+\/[^/]+?)(\/clicks\/summary|\/clicks)?$/.exec(path);
  if (m) {
    const link = fake.store.lookup(decodeURIComponent(m[1]!));
    if (!link || (link.group !== fake.groupGuid && method !== 'GET')) return notFound();
    if (m[2] && method === 'GET') return clicks(link, m[2] === '/clicks/summary', query);
    if (!m[2] && method === 'GET') return new HttpAnswer(200, bitlinkBody(fake.baseUrl, link));
    if (!m[2] && method === 'PATCH') return patchBitlink(fake, link, body);
  }
  return notFound();
}
