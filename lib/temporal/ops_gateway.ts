import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowNotFoundError,
} from '@temporalio/client';
import {
  type ChangeFrontInput,
  dnsChangedSignal,
  type EscrowRunInput,
  frontChangeStatusQuery,
  getManualEscrowWorkflowId,
  getManualReconcileWorkflowId,
  getManualRescanWorkflowId,
  KindKey,
  type ReconcileLinksInput,
  type RescanLinksInput,
  WORKFLOW_TYPES,
} from '../../workflows/contract.ts';
import { ConflictError, UnavailableError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { TemporalClient } from './temporal_client.ts';
import { START_DEADLINE_MS } from './workflow_gateway.ts';

/** Where a running front change stands (its query), or its closed status. */
export interface FrontChangeState {
  status: string;
  step?: string;
  waitingForDns?: boolean;
  verified?: number;
  /** Steps finished so far (name, ms). */
  steps?: { name: string; ms: number }[];
  /** While a planned switch waits out the old DNS TTL: when the wait ends (epoch ms). */
  ttlWaitUntilMs?: number | null;
}

/** The web tier's door to operations workflows: re-scans, reconciliation, failover. */
export interface OpsGateway {
  /**
   * Starts a re-scan: `manual` is one at a time (409 while one runs); a blocklist change gets a run of its
   * own (`rescan:blocklist:{ms}`) limited to the targets it can affect.
   */
  startRescan(input: {
    trigger: 'manual' | 'blocklist';
    reason: string;
    contains?: string;
  }): Promise<{ workflowId: string }>;
  /** Starts `reconcile:manual:{taskQueue}` (409 while one runs). */
  startReconcile(input: ReconcileLinksInput): Promise<{ workflowId: string }>;
  /** Starts a failover, failback or drill under the ID the caller reserved. */
  startFrontChange(workflowId: string, input: ChangeFrontInput): Promise<void>;
  /** Tells a running front change the operator changed DNS; false when no such run is open. */
  signalDnsChanged(workflowId: string, by: string): Promise<boolean>;
  /** A front change's state, or null when Temporal does not know the workflow. */
  describeFrontChange(workflowId: string): Promise<FrontChangeState | null>;
  /** Starts an escrow export or a static snapshot now (`escrow:manual:…`, `snapshot:manual:…`; 409 while one runs). */
  startEscrowRun(kind: 'export' | 'snapshot', reason: string): Promise<{ workflowId: string }>;
  close(): Promise<void>;
}

/** A gateway over the process's Temporal client (lazily connected: the web tier starts while Temporal is down). */
export function createOpsGateway(options: {
  temporal: TemporalClient;
  taskQueue: string;
  logger: Logger;
}): OpsGateway {
  const client = options.temporal.client.workflow;

  async function accepted<T>(what: string, start: () => Promise<T>): Promise<T> {
    try {
      return await options.temporal.withDeadline(START_DEADLINE_MS, start);
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) {
        throw new ConflictError(`${what} is already running; wait for it to finish.`);
      }
      if (error instanceof WorkflowNotFoundError) throw error;
      options.logger.error({ err: error, what }, 'Temporal did not accept the work');
      throw new UnavailableError(`The work could not be durably accepted (${what}); retry later.`, 10);
    }
  }

  return {
    async startRescan(input) {
      const workflowId = getManualRescanWorkflowId(
        input.trigger === 'manual' ? 'manual' : `blocklist:${Date.now()}`,
        options.taskQueue,
      );
      const args: RescanLinksInput = {
        reason: input.reason,
        ...(input.contains !== undefined ? { contains: input.contains } : {}),
      };
      await accepted(workflowId, () =>
        client.start(WORKFLOW_TYPES.rescanLinks, {
          taskQueue: options.taskQueue,
          workflowId,
          args: [args],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
          typedSearchAttributes: [{ key: KindKey, value: 'rescan' }],
        }),
      );
      return { workflowId };
    },
    async startReconcile(input) {
      const workflowId = getManualReconcileWorkflowId(options.taskQueue);
      await accepted(workflowId, () =>
        client.start(WORKFLOW_TYPES.reconcileLinks, {
          taskQueue: options.taskQueue,
          workflowId,
          args: [input],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
          typedSearchAttributes: [{ key: KindKey, value: 'reconcile' }],
        }),
      );
      return { workflowId };
    },
    async startFrontChange(workflowId, input) {
      const kind = input.drill ? 'drill' : input.to === 'inhouse' ? 'failover' : 'failback';
      await accepted(workflowId, () =>
        client.start(WORKFLOW_TYPES.changeFront, {
          taskQueue: options.taskQueue,
          workflowId,
          args: [input],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
          typedSearchAttributes: [{ key: KindKey, value: kind }],
        }),
      );
    },
    async signalDnsChanged(workflowId, by) {
      try {
        await accepted(workflowId, () => client.getHandle(workflowId).signal(dnsChangedSignal, { by }));
        return true;
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      }
    },
    async describeFrontChange(workflowId) {
      try {
        const handle = client.getHandle(workflowId);
        const description = await accepted(workflowId, () => handle.describe());
        const status = description.status.name;
        if (status !== 'RUNNING') return { status };
        const state = await accepted(workflowId, () => handle.query(frontChangeStatusQuery));
        return {
          status,
          step: state.step,
          waitingForDns: state.waitingForDns,
          verified: state.verified,
          ...(state.steps ? { steps: state.steps } : {}),
          ...(state.ttlWaitUntilMs ? { ttlWaitUntilMs: state.ttlWaitUntilMs } : {}),
        };
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return null;
        throw error;
      }
    },
    async startEscrowRun(kind, reason) {
      const workflowId = getManualEscrowWorkflowId(kind, options.taskQueue);
      const args: EscrowRunInput = { reason };
      await accepted(workflowId, () =>
        client.start(kind === 'export' ? WORKFLOW_TYPES.escrowExport : WORKFLOW_TYPES.staticSnapshot, {
          taskQueue: options.taskQueue,
          workflowId,
          args: [args],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
          typedSearchAttributes: [{ key: KindKey, value: kind === 'export' ? 'escrow' : 'snapshot' }],
        }),
      );
      return { workflowId };
    },
    // The connection belongs to the process (server/web_deps.ts closes it once).
    async close() {},
  };
}
