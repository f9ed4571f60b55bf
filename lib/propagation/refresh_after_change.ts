// Refresh, for one link, from the activity that changed it: the in-house copies follow at once.
import type { LinkResolver } from '../redirect/link_resolver.ts';
import type { Logger } from '../shared/logger.ts';

/**
 * Drops and rewrites a changed link's cached copies right after its change commits, so readers see it at once
 * rather than when the link's sync workflow runs. Best effort: a store or bus outage is logged, and the sync
 * workflow's own refresh (which retries) and reconciliation still bring every copy in line.
 */
export async function refreshAfterChange(
  deps: { resolver: LinkResolver; logger: Logger },
  code: string,
): Promise<void> {
  try {
    await deps.resolver.refresh(code);
  } catch (error) {
    deps.logger.warn(
      { err: error, code },
      'cache refresh after a change failed; the sync workflow retries it',
    );
  }
}
