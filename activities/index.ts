import { createAdoptionActivities, createRetargetActivities } from './adoption_activities.ts';
import { createAnalyticsActivities } from './analytics_activities.ts';
import { createBulkChangeActivities } from './bulk_change_activities.ts';
import { createCdnActivities } from './cdn_activities.ts';
import type { ActivityDeps } from './deps.ts';
import { createDestinationActivities } from './destination_activities.ts';
import { createDomainWatchActivities } from './domain_watch_activities.ts';
import { createEscrowActivities } from './escrow_activities.ts';
import { createExpiryActivities } from './expiry_activities.ts';
import { createFailoverActivities } from './failover_activities.ts';
import { createOpsRunActivities } from './ops_run_activities.ts';
import { createProbeActivities } from './probe_activities.ts';
import { createPublishingActivities } from './publishing_activities.ts';
import { createReconcileActivities } from './reconcile_activities.ts';
import { createSafetyActivities } from './safety_activities.ts';
import { createSyncQueueActivities } from './sync_queue_activities.ts';
import { createVendorActivities } from './vendor_activities.ts';
import { createWebhookActivities } from './webhook_activities.ts';

/**
 * Every activity, bound to its dependencies; registered on the worker. Each binds dependencies and calls the
 * function of lib/ that has its name (where the decisions and, through lib/stores, the SQL live); the names are
 * activity types workflow histories record, so a lib function follows its activity's name, never the reverse.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createPublishingActivities(deps),
    ...createVendorActivities(deps),
    ...createSafetyActivities(deps),
    ...createExpiryActivities(deps),
    ...createOpsRunActivities(deps),
    ...createReconcileActivities(deps),
    ...createFailoverActivities(deps),
    ...createAnalyticsActivities(deps),
    ...createAdoptionActivities(deps),
    ...createRetargetActivities(deps),
    ...createBulkChangeActivities(deps),
    ...createEscrowActivities(deps),
    ...createCdnActivities(deps),
    ...createSyncQueueActivities(deps),
    ...createDomainWatchActivities(deps),
    ...createProbeActivities(deps),
    ...createDestinationActivities(deps),
    ...createWebhookActivities(deps),
  };
}
