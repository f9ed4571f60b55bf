// The canary: one link Lifeline keeps for itself, so a probe always has a code whose answer it knows, even on a
// deployment with no links yet. Code `lifeline-canary`, owner `lifeline:prober` (no user signs in as it), its tag
// and title saying what it is; the editors' list and search leave it out (lib/stores/link_list_store.ts). It is
// an ordinary link otherwise: in the serving store, on Bitly after the next reconciliation (so it answers
// through whichever front readers reach), in escrow exports.
import type { LinkResolver } from '../redirect/link_resolver.ts';
import { DEFAULT_DOMAIN, linkKey } from '../shared/link_key.ts';
import type { Logger } from '../shared/logger.ts';
import { insertCanaryLink, PROBE_CANARY_OWNER, retargetCanaryLink } from '../stores/probe_store.ts';
import type { Sql } from '../stores/sql.ts';
import { type CanonicalTargetPolicy, checkTarget } from '../targets/target_rule.ts';

export const CANARY_CODE = 'lifeline-canary';
const CANARY_TITLE = 'Lifeline availability canary: the prober asks for it every minute (do not edit)';
const CANARY_TAG = 'lifeline-canary';

/**
 * Makes sure the canary exists and points at `url` (created idempotently; our own row retargeted when the setting
 * changed, then written through the serving store). Returns its code, or null when there is no canary: no URL,
 * a URL the target rule refuses, or the code held by someone else (all logged).
 */
export async function ensureCanary(
  deps: { sql: Sql; logger: Logger; resolver: LinkResolver; targetPolicy: CanonicalTargetPolicy },
  url: string | undefined,
  /** The short domain whose canary this is (stored name; default: the default's): each domain has its own. */
  domain: string = DEFAULT_DOMAIN,
): Promise<string | null> {
  if (!url) return null;
  const key = linkKey(domain, CANARY_CODE);
  const target = checkTarget(url, deps.targetPolicy);
  if (!target.ok) {
    deps.logger.warn({ problem: target.problem }, 'no probe canary: PROBE_CANARY_URL breaks the target rule');
    return null;
  }
  const { row, created } = await insertCanaryLink(deps.sql, {
    code: key,
    domain,
    url: target.url,
    title: CANARY_TITLE,
    tag: CANARY_TAG,
  });
  if (!row || row.owner !== PROBE_CANARY_OWNER) {
    deps.logger.warn({ code: key }, 'no probe canary: its code belongs to another link');
    return null;
  }
  const changed = created || (await retargetCanaryLink(deps.sql, key, target.url));
  if (changed) {
    // A serving store that is down must not stop the probe: the web tier reads Postgres on a miss, and the next
    // reconciliation writes the record.
    await deps.resolver.refresh(key).catch((error: unknown) => {
      deps.logger.warn({ err: error, code: key }, 'probe canary not written to the serving store yet');
    });
    deps.logger.info({ code: key, created }, 'probe canary written');
  }
  return key;
}
