// The public face of Lifeline's workflows: their type names, business-key IDs, search attributes, signals,
// queries, inputs and reports. Workflows (inside the sandbox) and their callers (the web tier's gateways in
// lib/temporal, activities, tests, scripts) both import this file, and nothing else of workflows/: callers never
// depend on workflow code, and no string signal or query name appears anywhere else.
// Plain data and Temporal definitions only: no I/O, no Node built-ins (it runs in the workflow sandbox too).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { PullCounts } from '../lib/analytics/pull_bitly_clicks.ts';
import type { ArchiveStepOutcome } from '../lib/archive/archive_queue.ts';
import type { DestinationCheckCounts } from '../lib/destinations/check_due_destinations.ts';
import type { ScheduledExportReport } from '../lib/escrow/run_scheduled_export.ts';
import type { Front } from '../lib/failover/active_front.ts';
import type { ProbeReport } from '../lib/prober/run_probe.ts';
import type { PostEvent } from '../lib/publishing/post_event.ts';
import type {
  ReconcilePosition,
  ReconcileSideSummary,
  ReconcileSummary,
} from '../lib/reconcile/reconcile_run.ts';
import type { WordPressPostResult } from '../lib/reconcile/reconcile_wordpress_post.ts';
import type { RescanCounts } from '../lib/safety/rescan_links.ts';
import type { ScheduledSnapshotReport } from '../lib/snapshot/run_scheduled_snapshot.ts';

export type { Front, PostEvent };

// ------------------------------------------------------------------------------------------ workflow types

export const WORKFLOW_TYPES = {
  publishPost: 'publishPostWorkflow',
  syncLink: 'syncLinkWorkflow',
  syncQueue: 'syncQueueWorkflow',
  expireLink: 'expireLinkWorkflow',
  expirySweep: 'expirySweepWorkflow',
  rescanLinks: 'rescanLinksWorkflow',
  reconcileLinks: 'reconcileLinksWorkflow',
  changeFront: 'changeFrontWorkflow',
  pullBitlyClicks: 'pullBitlyClicksWorkflow',
  backfillPosts: 'backfillPostsWorkflow',
  reconcileWordPress: 'reconcileWordPressWorkflow',
  retargetLinks: 'retargetLinksWorkflow',
  bulkChangeLinks: 'bulkChangeLinksWorkflow',
  escrowExport: 'escrowExportWorkflow',
  staticSnapshot: 'staticSnapshotWorkflow',
  watchDomains: 'watchDomainsWorkflow',
  probe: 'probeWorkflow',
  scheduledDrill: 'scheduledDrillWorkflow',
  archiveDestination: 'archiveDestinationWorkflow',
  checkDestinations: 'checkDestinationsWorkflow',
  archiveQueue: 'archiveQueueWorkflow',
  reconcileWordPressPost: 'reconcileWordPressPostWorkflow',
  deliverWebhooks: 'deliverWebhooksWorkflow',
  dailyClicksWebhook: 'dailyClicksWebhookWorkflow',
} as const;

// ------------------------------------------------------------------------------- IDs (business keys)
// A retry or a duplicate webhook finds the same workflow, never a second one.

/** The publish-time minting workflow of one article. */
export function getPublishWorkflowId(site: string, postId: number): string {
  return `publish:${site}:${postId}`;
}

/** The workflow that brings every replica of one link up to date with Postgres. */
export function getSyncWorkflowId(code: string): string {
  return `sync:${code}`;
}

/**
 * The durable expiry timer of one link, as links had before the sweeper (ADR 0091): no new one is started, and
 * those still running find Postgres already decided when they fire.
 */
export function getExpireWorkflowId(code: string): string {
  return `expire:${code}`;
}

/** The one expiry sweeper of a task queue (so per deployment; ADR 0091). */
export function getExpirySweepWorkflowId(taskQueue: string): string {
  return `expiry-sweep:${taskQueue}`;
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

/**
 * The Temporal Schedule that runs the due destination checks (link rot); one per task queue. Its runs are
 * `destination-checks:{taskQueue}-{time}`; the Schedule never overlaps two.
 */
export function getDestinationCheckScheduleId(taskQueue: string): string {
  return `destination-checks:${taskQueue}`;
}

/**
 * The Temporal Schedule that drains archive_queue (ADR 0076): the archived copies of links made in bulk, at
 * ARCHIVE_RATE. One per task queue; its runs are `archive-queue:{taskQueue}-{time}`, never two at once.
 */
export function getArchiveQueueScheduleId(taskQueue: string): string {
  return `archive-queue:${taskQueue}`;
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

/** The Temporal Schedule that pulls Bitly's per-day click counts (BITLY_CLICKS_INTERVAL); one per task queue. */
export function getBitlyClicksScheduleId(taskQueue: string): string {
  return `bitly-clicks:${taskQueue}`;
}

// ------------------------------------------------------------------------------- search attributes
// Operators find a link's workflows in Temporal UI with e.g. `LifelineCode = "9Kx2a"`.

export const LinkCodeKey = defineSearchAttributeKey('LifelineCode', SearchAttributeType.KEYWORD);
export const SiteKey = defineSearchAttributeKey('LifelineSite', SearchAttributeType.KEYWORD);
export const PostIdKey = defineSearchAttributeKey('LifelinePostId', SearchAttributeType.KEYWORD);
export const KindKey = defineSearchAttributeKey('LifelineKind', SearchAttributeType.KEYWORD);

/** Registered on the dev server at start (scripts/dev_server.ts) and once on a production cluster. */
export const SEARCH_ATTRIBUTE_KEYS = [LinkCodeKey, SiteKey, PostIdKey, KindKey];

// ------------------------------------------------------------------------------- publish (one per post)

/** A WordPress publish, as the gateway's startPublish receives it. */
export interface PublishPostInput {
  deliveryId: string;
  site: string;
  postId: number;
  permalink: string;
  title?: string;
  occurredAt: string;
}

/** The post's workflow: its key, and the events it starts with (more arrive as `postEvent` signals). */
export interface PublishPostWorkflowInput {
  site: string;
  postId: number;
  events: PostEvent[];
}

/** Signal name on the wire: one more lifecycle event of this post (published, updated, unpublished). */
export const postEventSignal = defineSignal<[PostEvent]>('postEvent');

// ------------------------------------------------------------------------------- sync (one per link)

export interface SyncLinkInput {
  code: string;
  reason: string;
}

/** Signal name on the wire: "the link changed in Postgres; bring every replica up to date". */
export const linkChangedSignal = defineSignal<[{ reason: string }]>('linkChanged');

// ------------------------------------------------------------------------------- the drainers' task queue

/**
 * The task queue of the workflows that each run once per deployment and serve everyone's changes: the sync-queue
 * drainer, the expiry sweeper and the webhook drainer (ADR 0099). Every worker process polls it beside the main
 * queue with a worker of its own, so their tasks never wait behind a backlog of per-post and per-link workflows.
 * Their workflow IDs stay named after the main queue.
 */
export function getDrainerTaskQueue(taskQueue: string): string {
  return `${taskQueue}${DRAINER_QUEUE_SUFFIX}`;
}

/** The suffix of the drainers' task queue; a deployment's own task queue may not end in it (config refuses). */
export const DRAINER_QUEUE_SUFFIX = '-drainers';

/**
 * The deployment's main task queue, from either queue its workers poll: what an activity names its signals'
 * workflows after (`sync:{code}` starts there, the drainers' IDs carry it), wherever the activity runs.
 */
export function getMainTaskQueue(taskQueue: string): string {
  return taskQueue.endsWith(DRAINER_QUEUE_SUFFIX)
    ? taskQueue.slice(0, -DRAINER_QUEUE_SUFFIX.length)
    : taskQueue;
}

// ------------------------------------------------------------------------------- sync queue (one per task queue)

/**
 * The drainer of link_sync_queue (ADR 0024): bulk changes (API batches, archive backfill) queue their codes in
 * Postgres and signalWithStart this one workflow, which syncs them in batches. One per task queue, so
 * deployments or test runs sharing a namespace never drain each other's database.
 */
export function getSyncQueueWorkflowId(taskQueue: string): string {
  return `sync-queue:${taskQueue}`;
}

export interface SyncQueueInput {
  /** Why it was started (the first kick's reason). */
  reason: string;
  // Carried across continue-as-new:
  totals?: SyncQueueTotals;
}

/** What the drainer did so far (its result, and carried across continue-as-new). */
export interface SyncQueueTotals {
  batches: number;
  /** Codes whose replicas were brought in step and that left the queue. */
  synced: number;
  /** Codes handed to their own `sync:{code}` workflow after failing SYNC_MAX_ATTEMPTS batches. */
  handedOff: number;
  /** Bitly refused our back-half for these codes (recorded collisions). */
  collisions: number;
  /** Times the whole queue waited for Bitly (rate limit or outage). */
  pauses: number;
}

/** Signal name on the wire: "codes were queued; drain them". */
export const syncQueuedSignal = defineSignal<[{ reason: string }]>('syncQueued');

// ------------------------------------------------------------------------------- expiry

// The per-link timers of before ADR 0091: still registered, so the ones running in a deployment finish.
export interface ExpireLinkInput {
  code: string;
  /** When the link expires (epoch ms); null: it no longer expires and the timer ends. */
  expiresAtMs: number | null;
}

export interface ExpireLinkResult {
  /** `swept`: the link is the sweeper's (not due, or already expired by it); this timer ends. */
  outcome: 'expired' | 'cancelled' | 'not_active' | 'swept';
  expiresAtMs: number | null;
}

/** Signal name on the wire: the link's expires_at changed in Postgres (null: removed). Old timers only. */
export const expiryChangedSignal = defineSignal<[{ expiresAtMs: number | null }]>('expiryChanged');
/** Query name on the wire: when this timer will fire. Old timers only. */
export const expiryQuery = defineQuery<{ expiresAtMs: number | null }>('expiry');

/** The expiry sweeper (`expiry-sweep:{taskQueue}`, ADR 0091). */
export interface ExpirySweepInput {
  /** Why it was started (the first signal's reason). */
  reason: string;
  /** Carried across continue-as-new (a run always begins with a sweep: nothing else to carry). */
  totals?: ExpirySweepTotals;
}

/** What the sweeper did so far (carried across continue-as-new). */
export interface ExpirySweepTotals {
  /** Sweeps that expired at least one link. */
  batches: number;
  expired: number;
}

/** What one sweep did (the activity's result: each batch's count is in the sweeper's history). */
export interface ExpirySweepStep {
  /** Links expired in this sweep's transaction. */
  expired: number;
  /** EXPIRY_BATCH_SIZE: a sweep that expired this many looks again at once. */
  batchSize: number;
  /** The next expiry of a live active link (epoch ms), and how far from Postgres's clock; null: none. */
  nextDueAtMs: number | null;
  nextDueInMs: number | null;
}

/** Signal name on the wire: a live link expires at this date; wake by then if that is earlier. */
export const expiryMovedSignal = defineSignal<[{ expiresAtMs: number }]>('expiryMoved');
/** Query name on the wire: when the sweeper looks next (epoch ms), and its totals. */
export const expirySweepQuery = defineQuery<{ wakeAtMs: number | null; totals: ExpirySweepTotals }>(
  'expirySweep',
);

// ------------------------------------------------------------------------------- safety re-scan

/** Where a run stands (the shape the rescanLinks activity pages with). */
export interface RescanPosition {
  phase: 'recent' | 'sweep';
  lastClickedAt: string | null;
  code: string;
}

export type RescanTotals = RescanCounts & {
  /** Activity calls made so far (across continue-as-new). */
  calls: number;
};

export interface RescanLinksInput {
  /** Why: `schedule`, `manual`, `blocklist added example.com`… (goes to ops_runs). */
  reason?: string;
  /** Only targets containing this lower-cased text (a blocklist change); all links when absent. */
  contains?: string;
  /** Links per activity call; each call heartbeats its cursor every 500 links. */
  linksPerCall?: number;
  /** Activity calls before continuing as new (a fresh, short history). */
  callsPerRun?: number;
  // Carried across continue-as-new:
  startedAtMs?: number;
  position?: RescanPosition;
  totals?: RescanTotals;
}

/** What a run reports (also stored in ops_runs.report). */
export type RescanReport = {
  verified: number;
  unverified: number;
  changedTo: Record<string, number>;
  work: RescanTotals;
  durationMs: number;
  linksPerSecond: number;
};

// ------------------------------------------------------------------------------- destination checks

export interface CheckDestinationsInput {
  reason?: string;
  /** Checks per activity call (each call heartbeats after every batch of 200). */
  checksPerCall?: number;
  /** Activity calls before continuing as new. */
  callsPerRun?: number;
  // Carried across continue-as-new:
  startedAtMs?: number;
  totals?: DestinationCheckTotals;
  /** The host round robin's cursor (see takeDueDestinations). */
  afterHost?: string | null;
}

export type DestinationCheckTotals = DestinationCheckCounts & { seeded: number; calls: number };

/** What a run reports. */
export type CheckDestinationsReport = DestinationCheckTotals & { durationMs: number };

// ------------------------------------------------------------------------------- reconciliation

/** Where a run stands (the shape the reconcile activities page with). */
export type ReconcileCursor = ReconcilePosition;

export interface ReconcileLinksInput {
  /** Why: `schedule`, `manual`, `preflight of failover:…` (goes to ops_runs). */
  reason?: string;
  /** false: a check that reports drift and changes nothing. Default true: repair, Postgres winning. */
  repair?: boolean;
  /** Import links that exist only on Bitly under their own back-halves. Default true. */
  importExtra?: boolean;
  /**
   * Bitly pages (100 links) per activity call, 100 by default. The passes over Postgres's links handle 500 times
   * this many per call (the serving leg's links read, the missing pass's links Bitly lacks); the expiry leg names
   * at most 10 times this many overdue links.
   */
  pagesPerCall?: number;
  /** Activity calls before continuing as new. */
  callsPerRun?: number;
  // Carried across continue-as-new:
  startedAtMs?: number;
  position?: ReconcileCursor;
  read?: number;
}

/** What a run reports (also stored in ops_runs.report). */
export type ReconcileReport = ReconcileSummary & {
  repair: boolean;
  read: number;
  durationMs: number;
  linksPerSecond: number;
};

// ------------------------------------------------------------------------------- failover, failback, drills

export interface ChangeFrontInput {
  to: Front;
  /**
   * The short domain whose front changes (its stored name: absent or '' the default, else its host name; ADR
   * 0073). The preflight and the verification cover that domain's links; the switch, DNS and public check are
   * that domain's. Absent in runs started before fronts were per domain: the default.
   */
  domain?: string;
  /** A drill does everything but the switch (and so the DNS change), and reports how long a real one takes. */
  drill: boolean;
  requestedBy: string;
  /** The short domain's DNS TTL (seconds): the wait a real failover adds for resolvers to follow. */
  dnsTtlSeconds: number;
  /** Active links verified per activity call. */
  verifyPerCall?: number;
  /** Codes checked through the public short base URL once DNS changed. */
  publicSample?: number;
  /**
   * A planned switch first lowers the short domain's TTL to this (FAILOVER_DNS_LOWERED_TTL_SECONDS) through the
   * DNS adapter, waits out the old TTL, switches, then sets the old TTL back. Absent (runs started before the
   * TTL steps existed): no TTL steps.
   */
  loweredTtlSeconds?: number;
  /** Switch at once, without lowering the TTL and waiting it out first (the vendor is down now). */
  emergency?: boolean;
}

/** One step of the run and how long it took. */
export interface FrontStep {
  name: string;
  ms: number;
}

export type ChangeFrontReport = {
  to: Front;
  /** The short domain (stored name) whose front this run changed or drilled; absent: the default. */
  domain?: string;
  drill: boolean;
  steps: FrontStep[];
  preflight: { repair: ReconcileReport; check: ReconcileReport } | null;
  verify: {
    checked: number;
    mismatched: number;
    examples: { code: string; expected: string; actual: string }[];
  };
  switched: boolean;
  dns: 'adapter' | 'operator' | 'skipped';
  /** Automated work (preflight and verification; switch and public check on a real run). */
  automatedMs: number;
  /** A drill's estimate of a real failover: the automated work plus the DNS TTL. */
  estimatedFailoverMs: number;
  durationMs: number;
  /** What the run did with the short domain's DNS TTL (planned switches through a DNS adapter). */
  dnsTtl?: { lowered: number; previous: number; waitedMs: number; raised: boolean } | { skipped: string };
};

/** Where a running front change stands. */
export interface FrontChangeStatus {
  step: string;
  to: Front;
  drill: boolean;
  waitingForDns: boolean;
  verified: number;
  /** Steps finished so far, with how long each took. */
  steps?: FrontStep[];
  /** While waiting out the old DNS TTL: when the wait ends (epoch ms). */
  ttlWaitUntilMs?: number | null;
}

/** Signal name on the wire: the operator changed the short domain's DNS (no adapter configured). */
export const dnsChangedSignal = defineSignal<[{ by: string }]>('dnsChanged');
/** Query name on the wire: where the run stands, for the API and the UI's button. */
export const frontChangeStatusQuery = defineQuery<FrontChangeStatus>('frontChangeStatus');

// ------------------------------------------------------------------------------- Bitly's click counts

export type PullBitlyClicksTotals = PullCounts & {
  /** Activity calls made (across continue-as-new). */
  calls: number;
  /** Times Bitly rate-limited the run, and the time spent waiting for it. */
  waits: number;
  waitedMs: number;
};

export interface PullBitlyClicksInput {
  /** Why: `schedule`, `manual` (logs and the report). */
  reason?: string;
  /** Days per link, ending today (UTC): BITLY_CLICKS_DAYS. */
  days?: number;
  /** Links per activity call. */
  linksPerCall?: number;
  /** Activity calls before continuing as new. */
  callsPerRun?: number;
  // Carried across continue-as-new:
  startedAtMs?: number;
  cursor?: string;
  totals?: PullBitlyClicksTotals;
}

/** What a run reports (its result in Temporal UI, and a log line). */
export type PullBitlyClicksReport = PullBitlyClicksTotals & {
  /** Set when the run stopped before the last link: `quota`, `refused` or `disabled`. */
  stopped?: string;
  durationMs: number;
};

// ------------------------------------------------------------------------------- archive backfill (one per run)

/** One WordPress backfill run (`wp lifeline backfill`, or the settings button): `backfill:{site}:{run}`. */
export function getBackfillWorkflowId(site: string, runId: string): string {
  return `backfill:${site}:${runId}`;
}

export interface BackfillPostsInput {
  site: string;
  runId: string;
  /** Carried across continue-as-new: the final batch was already announced. */
  finalSeen?: boolean;
}

/** Signal name on the wire: a batch of the run was written to Postgres (its new links wait to propagate). */
export const backfillBatchSignal = defineSignal<[{ batch: number; final: boolean }]>('backfillBatch');

export type BackfillReport = {
  site: string;
  runId: string;
  outcomes: Record<string, number>;
  received: number;
  propagated: number;
  durationMs: number;
};

// ------------------------------------------------------------------------------- WordPress reconciliation

/**
 * One site's WordPress reconciliation, one at a time per site and task queue: a change of WordPress's
 * permalink structure or home URL (`site.permalinks_changed`) or the end of a backfill starts it; a request
 * while it runs makes it run once more when it ends.
 */
export function getWordPressReconcileWorkflowId(taskQueue: string, site: string): string {
  return `reconcile:wordpress:${taskQueue}:${site}`;
}

/**
 * The WordPress reconciliation of one post (a check found the article behind its link dead): one at a time per
 * post; a request while one runs is covered by it.
 */
export function getWordPressPostReconcileWorkflowId(taskQueue: string, site: string, postId: number): string {
  return `reconcile:wordpress:${taskQueue}:${site}:post:${postId}`;
}

export interface ReconcileWordPressPostInput {
  site: string;
  postId: number;
  /** Why: `destination of {code} (post {postId}) is dead`. */
  reason: string;
}

export type WordPressPostReconcileReport = WordPressPostResult;

export interface ReconcileWordPressInput {
  site: string;
  /** Why: `site.permalinks_changed (permalink_structure)`, `backfill …` (goes to ops_runs). */
  reason: string;
  /** false: report drift only. Default true: repair, WordPress winning for a post link's target and status. */
  repair?: boolean;
  /** Carried across continue-as-new: passes so far. */
  passes?: number;
  /** Carried across continue-as-new: breaker decisions received and not yet applied. */
  decisions?: BreakerDecision[];
  /** How long a pass whose breaker tripped waits for a decision before discarding its hold. Default 7 days. */
  decisionTimeoutMs?: number;
}

/** An admin's decision on a breaker hold of the site (ADR 0057). */
export interface BreakerDecision {
  holdId: number;
  approve: boolean;
  by: string;
}

/** What one pass of a site's WordPress reconciliation found and repaired (also in ops_runs.report). */
export type WordPressReconcileReport = {
  site: string;
  reason: string;
  repair: boolean;
  passes: number;
  read: number;
  complete: boolean;
  wordpress: ReconcileSideSummary | null;
  durationMs: number;
  error?: string;
  /** Codes moved to another post ID by a post's claim, GUID or path (ADR 0057). */
  rebound?: number;
  /** Items filed for an admin's review in this pass. */
  reviewed?: number;
  /** The site was in migration mode; `ended`: this pass ended it. */
  migration?: 'ongoing' | 'ended';
  /** The breaker tripped in this pass: its hold, and what the decision did. */
  breaker?: { holdId: number; status: string; applied: number; skipped: number; decidedBy: string };
};

/** Signal name on the wire: WordPress changed again (run once more after this pass). */
export const wordpressChangedSignal = defineSignal<[{ reason: string }]>('wordpressChanged');
/** Signal name on the wire: an admin approved or discarded a breaker hold of the site. */
export const wordpressBreakerDecisionSignal = defineSignal<[BreakerDecision]>('wordpressBreakerDecision');

// ------------------------------------------------------------------------------- mass retarget (one per run)

/** A mass retarget (or its undo): `retarget:{runId}`. */
export function getRetargetWorkflowId(runId: string): string {
  return `retarget:${runId}`;
}

export interface RetargetLinksInput {
  runId: string;
  /** Links changed per activity call (one Postgres transaction, one serving-store round). Default 5,000. */
  batchSize?: number;
  /** How long a planned run waits for approval before it is cancelled. Default 7 days. */
  approvalTimeoutMs?: number;
  // Carried across continue-as-new:
  phase?: RetargetPhase;
  approvedBy?: string;
  /** The last code the apply phase reached. */
  applyCursor?: string;
}

export type RetargetPhase = 'plan' | 'approval' | 'apply' | 'bitly' | 'done';

/** Where a run stands, for the API and the UI. */
export interface RetargetStatus {
  phase: RetargetPhase;
  paused: boolean;
  cancelled: boolean;
}

/** Signal names on the wire: an admin approves the planned run, pauses, resumes or cancels it. */
export const retargetApproveSignal = defineSignal<[{ by: string }]>('retargetApprove');
export const retargetPauseSignal = defineSignal<[{ by: string }]>('retargetPause');
export const retargetResumeSignal = defineSignal<[{ by: string }]>('retargetResume');
export const retargetCancelSignal = defineSignal<[{ by: string }]>('retargetCancel');
/** Query name on the wire: the run's phase and switches. */
export const retargetStatusQuery = defineQuery<RetargetStatus>('retargetStatus');
// ------------------------------------------------------------------------------- bulk changes (one per run)

/** An editor's bulk change of links (tag, expiry, block, delete; ADR 0086): `bulk:{runId}`. */
export function getBulkChangeWorkflowId(runId: string): string {
  return `bulk:${runId}`;
}

export interface BulkChangeLinksInput {
  runId: string;
  /** Links changed per activity call (one Postgres transaction). Default 1,000. */
  batchSize?: number;
  // Carried across continue-as-new: the selection is fixed, and the last code applied.
  selected?: boolean;
  cursor?: string;
}

// ------------------------------------------------------------------------------- escrow and static snapshots

/** The Temporal Schedule that writes an escrow export every ESCROW_INTERVAL; one per task queue. */
export function getEscrowScheduleId(taskQueue: string): string {
  return `escrow:${taskQueue}`;
}

/** The Temporal Schedule that regenerates the static snapshot every SNAPSHOT_INTERVAL; one per task queue. */
export function getSnapshotScheduleId(taskQueue: string): string {
  return `snapshot:${taskQueue}`;
}

/** An export or snapshot asked for from the operations page: one at a time per task queue. */
export function getManualEscrowWorkflowId(kind: 'export' | 'snapshot', taskQueue: string): string {
  return `${kind === 'export' ? 'escrow' : 'snapshot'}:manual:${taskQueue}`;
}

export interface EscrowRunInput {
  /** Why: `schedule`, `manual, by user:…` (logged with the run). */
  reason?: string;
}

export type EscrowExportReport = ScheduledExportReport;
export type StaticSnapshotReport = ScheduledSnapshotReport;

// ------------------------------------------------------------------------------- domain watch

/**
 * The Temporal Schedule that reads the short domain's and the app host's registration, certificate and
 * reputation every DOMAIN_WATCH_INTERVAL (lib/domains); one per task queue.
 */
export function getDomainWatchScheduleId(taskQueue: string): string {
  return `domain-watch:${taskQueue}`;
}

export interface WatchDomainsInput {
  /** Why: `schedule`, or `manual` (`temporal schedule trigger`). */
  reason?: string;
  /** Host names whose certificate and reputation are read (the short host, the app host). */
  hosts: string[];
  /** Registered domains whose RDAP record is read. */
  domains: string[];
}

export interface WatchDomainsReport {
  /** Facts read, and reads that failed after their retries (their facts keep the last reading). */
  read: number;
  failed: { subject: string; facts: string[]; error: string }[];
  /** Hosts Safe Browsing lists. */
  flagged: string[];
}

// ------------------------------------------------------------------------------- watching Lifeline from outside

export type { ProbeReport };

/** The Temporal Schedule of the black-box prober (PROBE_INTERVAL); one per task queue. */
export function getProbeScheduleId(taskQueue: string): string {
  return `probe:${taskQueue}`;
}

export interface ProbeInput {
  reason: string;
  /** Codes of the rotating sample for this probe; absent: PROBE_SAMPLE. */
  sample?: number;
}

/** The Temporal Schedule of the failover drill (DRILL_INTERVAL); one per task queue. */
export function getDrillScheduleId(taskQueue: string): string {
  return `drill-schedule:${taskQueue}`;
}

/** The drill a schedule starts: towards in-house, the front Lifeline must always be able to take over. */
export interface ScheduledDrillInput {
  reason: string;
  /**
   * The short domains to drill, one after another (stored names, the default's ''): SHORT_DOMAINS. Absent
   * (Schedules made before fronts were per domain): the default's only.
   */
  domains?: string[];
  /** The short domain's DNS TTL (FAILOVER_DNS_TTL_SECONDS), for the drill's estimate of a real failover. */
  dnsTtlSeconds: number;
  /** Active links verified per activity call (tests: small). */
  verifyPerCall?: number;
}

export interface ScheduledDrillReport {
  /** The drill's workflow (`drill:inhouse:scheduled:{time}`, its ops_runs row); null when skipped. */
  workflowId: string | null;
  outcome: 'passed' | 'failed' | 'skipped';
  /** Skipped: the front change that was running instead. */
  running?: string | null;
  report?: ChangeFrontReport;
  error?: string;
  /**
   * With several short domains: each domain's drill in the order run (the fields above are the first's). A
   * non-default domain's drill is `drill:inhouse:{domain}:scheduled:{time}`.
   */
  domains?: (Omit<ScheduledDrillReport, 'domains'> & { domain: string })[];
}

// ------------------------------------------------------------------------- archived copies of destinations

/**
 * The archived copy of one link's destination (Save Page Now, else the closest Wayback snapshot). A retarget
 * starts it again and ends the run for the old target (its results would be ignored anyway: they are written
 * only while the link still points where they were asked for).
 */
export function getArchiveWorkflowId(code: string): string {
  return `archive:${code}`;
}

export interface ArchiveDestinationInput {
  code: string;
}

export type ArchiveDestinationReport =
  | { outcome: 'skipped'; reason: string }
  | { outcome: 'saved' | 'found' | 'missing' | 'failed'; url: string };

/** The drainer of archive_queue (`archive-queue:{taskQueue}` Schedule); the totals carried across continue-as-new. */
export interface ArchiveQueueInput {
  reason?: string;
  totals?: ArchiveQueueTotals;
}

/** What the drainer did: steps by outcome, and the times the whole queue waited for the Archive. */
export interface ArchiveQueueTotals {
  steps: number;
  byOutcome: Partial<Record<ArchiveStepOutcome, number>>;
  pauses: number;
}

// ---------------------------------------------------------------------------------- outgoing webhooks

/**
 * The one drainer of the outgoing-webhook outbox (webhook_messages, ADR 0082), per task queue: it sends due
 * messages in batches and sleeps until the next is due, waking every WEBHOOK_POLL_INTERVAL_MS for new ones while
 * an endpoint is enabled; it ends when none is. Started and woken by signalWithStart (the worker's start, an
 * endpoint created or switched on, a "send again").
 */
export function getWebhookDrainerWorkflowId(taskQueue: string): string {
  return `webhooks:${taskQueue}`;
}

export interface DeliverWebhooksInput {
  reason: string;
  /** WEBHOOK_POLL_INTERVAL_MS, fixed at start (a new value takes effect at the next continue-as-new). */
  pollIntervalMs: number;
  // Carried across continue-as-new:
  totals?: DeliverWebhooksTotals;
}

export interface DeliverWebhooksTotals {
  batches: number;
  delivered: number;
  retried: number;
  failed: number;
  dead: number;
}

/** Signal name on the wire: "messages may be due; look now". */
export const webhooksDueSignal = defineSignal<[{ reason: string }]>('webhooksDue');

/** The Temporal Schedule that writes yesterday's `clicks.daily` event; one per task queue. */
export function getDailyClicksWebhookScheduleId(taskQueue: string): string {
  return `webhook-clicks-daily:${taskQueue}`;
}
