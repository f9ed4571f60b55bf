import type { ActivityDeps } from './deps.ts';
import { createLinkActivities } from './link_activities.ts';

/** Every activity, bound to its dependencies; registered on the worker. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createLinkActivities(deps),
  };
}
