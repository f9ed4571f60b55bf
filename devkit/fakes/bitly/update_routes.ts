// Bitly's update endpoints: PATCH /v4/bitlinks/{bitlink} (plan-gated long_url) and PATCH /v4/custom_bitlinks.
import { bitlinkBody, bitlyError, customBitlinkBody, forbidden, HttpAnswer, notFound } from './answers.ts';
import { badLongUrl, validLongUrl } from './create_routes.ts';
import type { BitlyRouteContext } from './route_context.ts';
import type { FakeBitlink } from './types.ts';

/** PATCH /v4/custom_bitlinks/{custom_bitlink}: points the keyword at another bitlink. */
export function moveCustom(
  fake: BitlyRouteContext,
  custom: string,
  body: Record<string, unknown>,
): HttpAnswer {
  const [domain = '', keyword = ''] = custom.split('/');
  const key = `${domain.toLowerCase()}/${keyword}`;
  const fromId = fake.store.keywordOwner(key);
  const to = typeof body.bitlink_id === 'string' ? fake.store.lookup(body.bitlink_id) : undefined;
  if (!fromId || !to) return notFound();
  fake.store.moveKeyword(key, keyword, to);
  return new HttpAnswer(200, customBitlinkBody(fake.baseUrl, domain.toLowerCase(), keyword, to));
}

/** PATCH /v4/bitlinks/{bitlink}: long_url (if the plan allows), archived, title, tags. */
export function patchBitlink(
  fake: BitlyRouteContext,
  link: FakeBitlink,
  body: Record<string, unknown>,
): HttpAnswer {
  if (body.long_url !== undefined && body.long_url !== link.longUrl) {
    if (fake.switches.patchLongUrl === 'upgrade-required') {
      return bitlyError(402, 'UPGRADE_REQUIRED', 'Editing the destination needs an upgraded plan.');
    }
    if (fake.switches.patchLongUrl === 'forbidden') return forbidden();
    if (!validLongUrl(body.long_url)) return badLongUrl();
    link.longUrl = body.long_url;
    fake.stats.redirectsCharged++;
  }
  if (typeof body.archived === 'boolean') link.archived = body.archived;
  if (typeof body.title === 'string') link.title = body.title;
  if (Array.isArray(body.tags)) link.tags = body.tags.filter((t): t is string => typeof t === 'string');
  return new HttpAnswer(200, bitlinkBody(fake.baseUrl, link));
}
