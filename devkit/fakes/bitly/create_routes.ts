// Bitly's create endpoints: POST /v4/shorten, /v4/bitlinks and /v4/custom_bitlinks; taken back-halves.
import {
  BITLY_DEFAULT_DOMAIN,
  bitlinkBody,
  bitlyError,
  customBitlinkBody,
  forbidden,
  HttpAnswer,
  KEYWORD,
  notFound,
} from './answers.ts';
import type { BitlyRouteContext } from './route_context.ts';

export function validLongUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

export function badLongUrl(): HttpAnswer {
  return bitlyError(400, 'INVALID_ARG_LONG_URL', 'The value provided is invalid.', {
    errors: [{ field: 'long_url', error_code: 'invalid' }],
  });
}

function resolveDomain(fake: BitlyRouteContext, requested: unknown): string | HttpAnswer {
  const domain = typeof requested === 'string' ? requested.toLowerCase() : BITLY_DEFAULT_DOMAIN;
  if (domain !== BITLY_DEFAULT_DOMAIN && !fake.domains.includes(domain)) {
    return bitlyError(400, 'INVALID_ARG_DOMAIN', 'The value provided is invalid.', {
      errors: [{ field: 'domain', error_code: 'invalid' }],
    });
  }
  // The monthly branded-link quota is used up: Bitly silently makes bit.ly links instead.
  return fake.switches.bsdQuotaFallback && domain !== BITLY_DEFAULT_DOMAIN ? BITLY_DEFAULT_DOMAIN : domain;
}

/** Makes the keyword taken by a link of another group, when the test asked for that. */
function maybeSteal(fake: BitlyRouteContext, domain: string, keyword: string): void {
  if (fake.store.hasKeyword(domain, keyword) || !fake.stealKeyword()) return;
  const theirs = fake.store.insert({
    domain,
    longUrl: `https://elsewhere.example/${keyword}`,
    group: 'Bsomeone0else',
    title: null,
    tags: [],
  });
  fake.store.addKeyword(theirs, keyword);
}

function conflict(fake: BitlyRouteContext): HttpAnswer {
  fake.stats.conflicts++;
  return bitlyError(
    409,
    fake.switches.conflictMessage,
    'The custom back-half is already being used by another link.',
  );
}

/** POST /v4/shorten and POST /v4/bitlinks: 201 new, 200 the group's existing link for the URL. */
export function shorten(fake: BitlyRouteContext, body: Record<string, unknown>, full: boolean): HttpAnswer {
  if (!validLongUrl(body.long_url)) return badLongUrl();
  const domain = resolveDomain(fake, body.domain);
  if (domain instanceof HttpAnswer) return domain;
  const group = typeof body.group_guid === 'string' ? body.group_guid : fake.groupGuid;
  if (group !== fake.groupGuid) return forbidden();
  const keyword = full && typeof body.keyword === 'string' ? body.keyword : undefined;
  if (keyword !== undefined) {
    if (fake.switches.keywordOnCreate === 'upgrade-required') {
      return bitlyError(402, 'UPGRADE_REQUIRED', 'Custom back-halves need an upgraded plan.');
    }
    if (!KEYWORD.test(keyword)) {
      return bitlyError(400, 'INVALID_ARG_KEYWORD', 'The value provided is invalid.', {
        errors: [{ field: 'keyword', error_code: 'invalid' }],
      });
    }
    maybeSteal(fake, domain, keyword);
  }
  const taken = keyword !== undefined && fake.store.hasKeyword(domain, keyword);
  if (taken && fake.switches.takenKeyword === 'conflict') return conflict(fake);
  const force = body.force_new_link === true;
  if (!force && keyword === undefined) {
    const existing = fake.store
      .all()
      .find((l) => l.group === group && l.domain === domain && l.longUrl === body.long_url && !l.archived);
    if (existing) return new HttpAnswer(200, bitlinkBody(fake.baseUrl, existing));
  }
  const link = fake.store.insert({
    domain,
    longUrl: body.long_url,
    group,
    title: typeof body.title === 'string' ? body.title : null,
    tags: Array.isArray(body.tags) ? body.tags.filter((t): t is string => typeof t === 'string') : [],
  });
  if (keyword !== undefined) {
    // Taken: the silent mode still shortens, with the random hash only ("OVERRIDE_ALREADY_EXISTS").
    if (taken) fake.stats.silentRandom++;
    else fake.store.addKeyword(link, keyword);
  }
  return new HttpAnswer(201, bitlinkBody(fake.baseUrl, link));
}

/** POST /v4/custom_bitlinks: a keyword on one of our domains for an existing bitlink. */
export function addCustom(fake: BitlyRouteContext, body: Record<string, unknown>): HttpAnswer {
  const custom =
    typeof body.custom_bitlink === 'string' ? body.custom_bitlink.replace(/^https?:\/\//, '') : '';
  const [domain = '', keyword = ''] = custom.split('/');
  const link = typeof body.bitlink_id === 'string' ? fake.store.lookup(body.bitlink_id) : undefined;
  if (!link) return notFound();
  if (!fake.domains.includes(domain.toLowerCase()) || !KEYWORD.test(keyword)) {
    return bitlyError(400, 'INVALID_ARG_BITLINK', 'The value provided is invalid.');
  }
  const d = domain.toLowerCase();
  maybeSteal(fake, d, keyword);
  if (fake.store.hasKeyword(d, keyword)) {
    if (fake.switches.takenKeyword === 'conflict') return conflict(fake);
    fake.stats.silentRandom++;
    const random = fake.store.newHash(d);
    fake.store.addKeyword(link, random);
    return new HttpAnswer(200, customBitlinkBody(fake.baseUrl, d, random, link));
  }
  fake.store.addKeyword(link, keyword);
  return new HttpAnswer(200, customBitlinkBody(fake.baseUrl, d, keyword, link));
}
