import { purgeLinkFromCdn } from '../lib/propagation/purge_link.ts';
import type { ActivityDeps } from './deps.ts';
import { runStep } from './task_context.ts';

/** Edge caches (lib/cdn): a changed link's paths purged from the configured CDN. */
export function createCdnActivities(deps: ActivityDeps) {
  return {
    purgeLinkFromCdn: (input: { code: string }) => runStep(() => purgeLinkFromCdn(deps, input.code)),
  };
}
