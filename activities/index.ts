import type { ActivityDeps } from './deps.ts';
import { createExpiryActivities } from './expiry_activities.ts';
import { createFrontActivities } from './front_activities.ts';
import { createLinkActivities } from './link_activities.ts';
import { createOpsRunActivities } from './ops_run_activities.ts';
import { createPostActivities } from './post_activities.ts';
import { createReconcileActivities } from './reconcile_activities.ts';
import { createSafetyActivities } from './safety_activities.ts';
import { createVendorActivities } from './vendor_activities.ts';

/** Every activity, bound to its dependencies; registered on the worker. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createLinkActivities(deps),
    ...createSafetyActivities(deps),
    ...createExpiryActivities(deps),
    ...createOpsRunActivities(deps),
    ...createReconcileActivities(deps),
    ...createFrontActivities(deps),
    ...createPostActivities(deps),
    ...createVendorActivities(deps),
  };
}
