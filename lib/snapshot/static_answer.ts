import { decideRedirect, type RedirectSettings } from '../redirect/redirect_policy.ts';
import { toServingRecord } from '../redirect/serving_record.ts';
import { keyCode } from '../shared/link_key.ts';
import type { LinkRow } from '../stores/link_rows.ts';

/** A page a static snapshot serves instead of a redirect. */
export type StaticPage = 'not_found' | 'gone' | 'expired' | 'blocked' | 'warn';

/** What one code answers in a static snapshot: Lifeline's own decision at the moment of the snapshot. */
export interface StaticAnswer {
  /** The code on its short domain (never the key: a snapshot is written per domain). */
  code: string;
  status: number;
  cacheControl: string;
  /** Redirects (the target with UTM parameters, or an expired link's fallback), byte for byte as Lifeline sends it. */
  location?: string;
  /** Gone, expired (no fallback), blocked, or the warn interstitial. */
  page?: Exclude<StaticPage, 'not_found'>;
  /** The warn page's destination. */
  destination?: string;
  /**
   * The link has routing rules (ADR 0080): a static file cannot choose by language, device or country, so this is
   * the answer of readers no rule matches (the link's own target), and the writers say so beside it.
   */
  routed?: true;
}

/**
 * The answer Lifeline gives for `row` at `nowMs` (lib/redirect/redirect_policy.ts decides, exactly as for a live
 * request without query parameters), or null when it is "not found" (pending links: the snapshot's default).
 * A link switched to its archived copy answers a 302 to the copy whatever DEAD_FALLBACK_ANSWER says: the copy
 * is what the page would offer, and a snapshot keeps one page per kind, not one per code. A link with routing
 * rules answers its own target (the answer of readers no rule matches), marked `routed`.
 */
export function toStaticAnswer(row: LinkRow, nowMs: number, settings: RedirectSettings): StaticAnswer | null {
  // The code on its own short domain: each domain's snapshot is written apart (write_snapshot.ts, ADR 0078).
  const code = keyCode(row.code);
  const decision = decideRedirect(code, toServingRecord(row), nowMs, {
    ...settings,
    fallbackAnswer: 'redirect',
  });
  if (decision.outcome === 'not_found') return null;
  const answer: StaticAnswer = {
    code,
    status: decision.status,
    cacheControl: decision.cacheControl,
  };
  if (row.routingRules && row.routingRules.length > 0) answer.routed = true;
  if (decision.location !== undefined) answer.location = decision.location;
  else if (decision.page && decision.page.kind !== 'not_found' && decision.page.kind !== 'archived') {
    answer.page = decision.page.kind;
    if (decision.page.destination !== undefined) answer.destination = decision.page.destination;
  }
  return answer;
}

/** What an unknown code answers (status and Cache-Control), from the same policy. */
export function notFoundAnswer(
  nowMs: number,
  settings: RedirectSettings,
): { status: number; cacheControl: string } {
  const decision = decideRedirect('-', null, nowMs, settings);
  return { status: decision.status, cacheControl: decision.cacheControl };
}
