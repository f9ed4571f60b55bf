// Workflow IDs are business keys: a retry or a duplicate webhook finds the same workflow, never a second one.

/** The publish-time minting workflow of one article. */
export function getPublishWorkflowId(site: string, postId: number): string {
  return `publish:${site}:${postId}`;
}

/** The workflow that brings every replica of one link up to date with Postgres. */
export function getSyncWorkflowId(code: string): string {
  return `sync:${code}`;
}

/** The durable expiry timer of one link. */
export function getExpireWorkflowId(code: string): string {
  return `expire:${code}`;
}

/** The Temporal Schedule that re-scans every destination; one per task queue (so per deployment). */
export function getRescanScheduleId(taskQueue: string): string {
  return `rescan:${taskQueue}`;
}

/**
 * An on-demand re-scan: `rescan:manual:{taskQueue}` (one at a time per task queue, like the manual
 * reconciliation), or after a blocklist change (`rescan:blocklist:{ms}`, already unique).
 */
export function getManualRescanWorkflowId(trigger: string, taskQueue: string): string {
  return trigger === 'manual' ? `rescan:manual:${taskQueue}` : `rescan:${trigger}`;
}

/** The Temporal Schedule that reconciles Postgres, the serving store and Bitly; one per task queue. */
export function getReconcileScheduleId(taskQueue: string): string {
  return `reconcile:${taskQueue}`;
}

/**
 * An on-demand reconciliation: one at a time per task queue (`reconcile:manual:{taskQueue}`), so deployments or
 * test runs sharing a Temporal namespace on different task queues never refuse each other's.
 */
export function getManualReconcileWorkflowId(taskQueue: string): string {
  return `reconcile:manual:${taskQueue}`;
}
