import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowNotFoundError,
} from '@temporalio/client';
import {
  type BulkChangeLinksInput,
  getBulkChangeWorkflowId,
  getRetargetWorkflowId,
  KindKey,
  type RetargetLinksInput,
  type RetargetStatus,
  retargetApproveSignal,
  retargetCancelSignal,
  retargetPauseSignal,
  retargetResumeSignal,
  retargetStatusQuery,
  WORKFLOW_TYPES,
} from '../../workflows/contract.ts';
import { ConflictError, NotFoundError, UnavailableError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import {
  signalBackfillBatch,
  signalWordPressBreakerDecision,
  signalWordPressReconcile,
  startWordPressPostReconcile,
} from './adoption_signals.ts';
import type { TemporalClient } from './temporal_client.ts';
import { START_DEADLINE_MS } from './workflow_gateway.ts';

export type RetargetAction = 'approve' | 'pause' | 'resume' | 'cancel';

/**
 * The web tier's door to the adoption workflows and other mass changes: backfill runs, WordPress reconciliation,
 * mass retargets, bulk changes of links.
 */
export interface AdoptionGateway {
  /** Tells a backfill run's workflow a batch was written (starting it with the run's first batch). */
  signalBackfill(input: { site: string; runId: string; batch: number; final: boolean }): Promise<{
    workflowId: string;
  }>;
  /** Starts the site's WordPress reconciliation, or makes the running one go again. */
  requestWordPressReconcile(input: { site: string; reason: string }): Promise<{ workflowId: string }>;
  /** Starts one post's WordPress reconciliation (its article's check failed), unless one runs for it. */
  requestWordPressPostReconcile(input: {
    site: string;
    postId: number;
    code: string;
    reason: string;
  }): Promise<{ workflowId: string }>;
  /** Hands an admin's decision on a breaker hold to the site's WordPress reconciliation (ADR 0057). */
  decideWordPressBreaker(input: { site: string; holdId: number; approve: boolean; by: string }): Promise<{
    workflowId: string;
  }>;
  /** Starts the workflow of a retarget run already recorded in Postgres (it plans, then waits for approval). */
  startRetarget(input: RetargetLinksInput): Promise<{ workflowId: string }>;
  /** Approves, pauses, resumes or cancels a retarget run; 404 when its workflow is not running. */
  signalRetarget(runId: string, action: RetargetAction, by: string): Promise<void>;
  /** A running retarget's phase and switches, or null when its workflow is not running. */
  describeRetarget(runId: string): Promise<RetargetStatus | null>;
  /** Starts the workflow of a bulk change already recorded in Postgres (ADR 0086). */
  startBulkChange(input: BulkChangeLinksInput): Promise<{ workflowId: string }>;
}

const SIGNALS = {
  approve: retargetApproveSignal,
  pause: retargetPauseSignal,
  resume: retargetResumeSignal,
  cancel: retargetCancelSignal,
} as const;

/** A gateway over the process's Temporal client. Anything Temporal does not take in time is a 503. */
export function createAdoptionGateway(options: {
  temporal: TemporalClient;
  taskQueue: string;
  logger: Logger;
}): AdoptionGateway {
  const { temporal, taskQueue, logger } = options;
  const client = temporal.client.workflow;

  async function accepted<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await temporal.withDeadline(START_DEADLINE_MS, work);
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError)
        throw new ConflictError(`${what} is already running.`);
      if (error instanceof WorkflowNotFoundError) throw new NotFoundError(`${what} is not running.`);
      logger.error({ err: error, what }, 'Temporal did not accept the work');
      throw new UnavailableError(`The work could not be durably accepted (${what}); retry later.`, 10);
    }
  }

  return {
    signalBackfill: (input) =>
      accepted(`backfill ${input.site}:${input.runId}`, () => signalBackfillBatch(client, taskQueue, input)),
    requestWordPressReconcile: (input) =>
      accepted(`WordPress reconciliation of ${input.site}`, () =>
        signalWordPressReconcile(client, taskQueue, input),
      ),
    requestWordPressPostReconcile: (input) =>
      accepted(`WordPress reconciliation of post ${input.postId} of ${input.site}`, () =>
        startWordPressPostReconcile(client, taskQueue, input),
      ),
    decideWordPressBreaker: (input) =>
      accepted(`WordPress reconciliation of ${input.site}`, () =>
        signalWordPressBreakerDecision(client, taskQueue, input),
      ),
    async startRetarget(input) {
      const workflowId = getRetargetWorkflowId(input.runId);
      await accepted(workflowId, () =>
        client.start(WORKFLOW_TYPES.retargetLinks, {
          taskQueue,
          workflowId,
          args: [input],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
          typedSearchAttributes: [{ key: KindKey, value: 'retarget' }],
        }),
      );
      return { workflowId };
    },
    async startBulkChange(input) {
      const workflowId = getBulkChangeWorkflowId(input.runId);
      await accepted(workflowId, () =>
        client.start(WORKFLOW_TYPES.bulkChangeLinks, {
          taskQueue,
          workflowId,
          args: [input],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
          typedSearchAttributes: [{ key: KindKey, value: 'bulk' }],
        }),
      );
      return { workflowId };
    },
    async signalRetarget(runId, action, by) {
      const workflowId = getRetargetWorkflowId(runId);
      await accepted(workflowId, () => client.getHandle(workflowId).signal(SIGNALS[action], { by }));
    },
    async describeRetarget(runId) {
      const handle = client.getHandle(getRetargetWorkflowId(runId));
      try {
        const description = await temporal.withDeadline(START_DEADLINE_MS, () => handle.describe());
        if (description.status.name !== 'RUNNING') return null;
        return await temporal.withDeadline(START_DEADLINE_MS, () => handle.query(retargetStatusQuery));
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return null;
        throw error;
      }
    },
  };
}
