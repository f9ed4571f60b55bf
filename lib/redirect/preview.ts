import type { LinkStatus, SafetyVerdict } from '../stores/link_rows.ts';
import type { RedirectDecision } from './redirect_policy.ts';
import type { ServingRecord } from './serving_record.ts';

/** What `GET /{code}+` shows: where the link leads and what following it would do, without going there. */
export interface LinkPreview {
  code: string;
  shortUrl: string;
  status: LinkStatus;
  safety: SafetyVerdict;
  /** Where following the link leads now (absent when it leads nowhere: gone, blocked, expired without fallback). */
  destination?: string;
  /** What following the link does, in words. */
  outcome: string;
}

const OUTCOME_TEXT: Record<RedirectDecision['outcome'], string> = {
  redirect: 'Redirects to the destination',
  warn: 'Shows a warning page naming the destination, with a link to continue',
  archived: 'The destination is no longer available: leads to its archived copy',
  expired: 'The link has expired',
  gone: 'Nothing: the link was retired (410 Gone)',
  blocked: 'Nothing: the link is blocked (451)',
  not_found: 'Nothing: no such link',
};

/** The preview of a known link, from the decision a redirect would make now. */
export function toLinkPreview(
  code: string,
  record: ServingRecord,
  decision: RedirectDecision,
  shortBaseUrl: string,
): LinkPreview {
  const destination = decision.location ?? decision.page?.destination;
  return {
    code,
    shortUrl: `${shortBaseUrl}/${code}`,
    status: decision.outcome === 'expired' ? 'expired' : record.status,
    safety: record.safety,
    ...(destination !== undefined ? { destination } : {}),
    outcome:
      decision.outcome === 'expired'
        ? decision.location !== undefined
          ? `The link has expired: redirects (${decision.status}) to its fallback page`
          : 'Nothing: the link has expired (410 Gone)'
        : decision.outcome === 'redirect'
          ? `${OUTCOME_TEXT.redirect} (HTTP ${decision.status})`
          : OUTCOME_TEXT[decision.outcome],
  };
}
