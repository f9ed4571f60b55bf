// The one workflowsPath module: every workflow the worker runs is exported here.

export { archiveDestinationWorkflow } from './archive_destination.ts';
export { archiveQueueWorkflow } from './archive_queue.ts';
export { backfillPostsWorkflow } from './backfill_posts.ts';
export { bulkChangeLinksWorkflow } from './bulk_change_links.ts';
export { changeFrontWorkflow } from './change_front.ts';
export { checkDestinationsWorkflow } from './check_destinations.ts';
export { dailyClicksWebhookWorkflow, deliverWebhooksWorkflow } from './deliver_webhooks.ts';
export { escrowExportWorkflow, staticSnapshotWorkflow } from './escrow.ts';
export { expireLinkWorkflow } from './expire_link.ts';
export { expirySweepWorkflow } from './expiry_sweep.ts';
export { probeWorkflow } from './probe.ts';
export { publishPostWorkflow } from './publish_post.ts';
export { pullBitlyClicksWorkflow } from './pull_bitly_clicks.ts';
export { reconcileLinksWorkflow } from './reconcile_links.ts';
export { reconcileWordPressWorkflow } from './reconcile_wordpress.ts';
export { reconcileWordPressPostWorkflow } from './reconcile_wordpress_post.ts';
export { rescanLinksWorkflow } from './rescan_links.ts';
export { retargetLinksWorkflow } from './retarget_links.ts';
export { scheduledDrillWorkflow } from './scheduled_drill.ts';
export { syncLinkWorkflow } from './sync_link.ts';
export { syncQueueWorkflow } from './sync_queue.ts';
export { watchDomainsWorkflow } from './watch_domains.ts';
