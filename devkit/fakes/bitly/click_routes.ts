// Bitly's clicks: GET /v4/bitlinks/{bitlink}/clicks and /clicks/summary per UTC day; the counted redirect.
import type { ServerResponse } from 'node:http';
import { bitlyError, bitlyTime, HttpAnswer, KEYWORD } from './answers.ts';
import type { BitlyRouteContext } from './route_context.ts';
import type { FakeBitlink } from './types.ts';

/** GET /v4/bitlinks/{bitlink}/clicks and /clicks/summary, for unit=day. */
export function clicks(link: FakeBitlink, summary: boolean, query: URLSearchParams): HttpAnswer {
  const unit = query.get('unit') ?? 'day';
  if (unit !== 'day') {
    return bitlyError(
      400,
      'INVALID_ARG_UNIT',
      'The value provided is invalid (the fake models unit=day only).',
    );
  }
  const units = Number(query.get('units') ?? -1);
  if (!Number.isInteger(units) || units === 0 || units < -1) {
    return bitlyError(400, 'INVALID_ARG_UNITS', 'The value provided is invalid.');
  }
  const referenceText = query.get('unit_reference');
  const reference = referenceText
    ? new Date(referenceText.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'))
    : new Date();
  if (Number.isNaN(reference.getTime())) {
    return bitlyError(400, 'INVALID_ARG_UNIT_REFERENCE', 'The value provided is invalid.');
  }
  const lastDay = reference.toISOString().slice(0, 10);
  const firstDay =
    units > 0
      ? new Date(Date.parse(lastDay) - (units - 1) * 86_400_000).toISOString().slice(0, 10)
      : [link.createdAt.slice(0, 10), ...Object.keys(link.dailyClicks)].sort()[0]!;
  const days: string[] = [];
  for (let t = Date.parse(lastDay); t >= Date.parse(firstDay); t -= 86_400_000) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  const unitReference = bitlyTime(reference);
  if (summary) {
    const dated = days.reduce((sum, day) => sum + (link.dailyClicks[day] ?? 0), 0);
    return new HttpAnswer(200, {
      unit_reference: unitReference,
      total_clicks: dated + (units === -1 ? link.clicks : 0),
      units,
      unit,
    });
  }
  return new HttpAnswer(200, {
    unit_reference: unitReference,
    units,
    unit,
    link_clicks: days.map((day) => ({ date: `${day}T00:00:00+0000`, clicks: link.dailyClicks[day] ?? 0 })),
  });
}

/** GET/HEAD /<keyword or hash> on the first domain: the short link itself, counted on today's UTC day. */
export function redirect(fake: BitlyRouteContext, res: ServerResponse, method: string, path: string): void {
  const backHalf = decodeURIComponent(path.slice(1));
  const link = KEYWORD.test(backHalf) ? fake.store.lookup(`${fake.domains[0]}/${backHalf}`) : undefined;
  if (!link || (method !== 'GET' && method !== 'HEAD')) {
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('Not Found');
    return;
  }
  const today = new Date().toISOString().slice(0, 10);
  link.dailyClicks[today] = (link.dailyClicks[today] ?? 0) + 1;
  fake.stats.redirectsServed++;
  res.writeHead(301, { Location: link.longUrl, 'Content-Length': 0 });
  res.end();
}
