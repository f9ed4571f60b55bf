import type { ActivityDeps } from './deps.ts';
import { createLinkActivities } from './link_activities.ts';
import { createPostActivities } from './post_activities.ts';
import { createVendorActivities } from './vendor_activities.ts';

/** Every activity, bound to its dependencies; registered on the worker. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createLinkActivities(deps),
    ...createPostActivities(deps),
    ...createVendorActivities(deps),
  };
}
