import type { ActivityDeps } from './deps.ts';

/** Link activities: thin, idempotent wrappers over lib/ (the workflow ID is the idempotency key). */
export function createLinkActivities(deps: ActivityDeps) {
  return {
    /** Brings every cached copy of a link (in-process caches, serving store) up to date with Postgres. */
    async purgeLinkCaches(input: { code: string }): Promise<void> {
      await deps.resolver.refresh(input.code);
    },
  };
}
