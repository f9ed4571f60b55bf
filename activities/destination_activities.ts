import { Context } from '@temporalio/activity';
import {
  beginDestinationArchive,
  checkArchiveSave,
  findArchiveSnapshot,
  recordArchiveFailed,
  requestArchiveSave,
} from '../lib/archive/archive_destination.ts';
import { archiveQueuedStep, takeArchiveBatch } from '../lib/archive/archive_queue.ts';
import { actOnDestination } from '../lib/destinations/act_on_destination.ts';
import { type CheckDueInput, checkDueDestinations } from '../lib/destinations/check_due_destinations.ts';
import { seedDestinationStates } from '../lib/destinations/seed_destination_states.ts';
import { startWordPressPostReconcile } from '../lib/temporal/adoption_signals.ts';
import type { ActivityDeps } from './deps.ts';
import {
  currentSignals,
  currentTaskQueue,
  currentWorkflowId,
  runStep,
  withKeepAlive,
} from './task_context.ts';

/**
 * How often a call of the checks heartbeats while it runs (the workflow's heartbeat timeout is 20 s), and how long
 * it may check nothing before the beats stop and it is timed out and retried (a check waits at most its request
 * timeout per hop).
 */
const KEEP_ALIVE_MS = 5_000;
const STALL_MS = 120_000;

type CodeUrl = { code: string; url: string };

/**
 * Destinations (lib/destinations, lib/archive): seeding the rows and checking what is due, the archived copy of
 * each destination, and acting on a verdict — after every check that wrote one, and on request.
 */
export function createDestinationActivities(deps: ActivityDeps) {
  const archive = { sql: deps.sql, logger: deps.logger, archive: deps.destinations.archive };
  const checks = () => {
    if (!deps.destinationChecks) throw new Error('destination checks are not configured in this worker');
    return deps.destinationChecks;
  };
  /** actOnDestination as the current activity runs it: its workflow is the audit actor. */
  const acting = () => {
    const { client } = Context.current();
    const actor = `system:${currentWorkflowId()}`;
    const actingDeps = {
      sql: deps.sql,
      logger: deps.logger,
      sync: currentSignals().sync,
      wordpress: {
        requestWordPressPostReconcile: (request: {
          site: string;
          postId: number;
          code: string;
          reason: string;
        }) => startWordPressPostReconcile(client.workflow, currentTaskQueue(), request),
      },
      destinations: deps.destinations.acting,
      edit: { targetPolicy: deps.targetPolicy, safety: deps.safety },
    };
    return (code: string) => actOnDestination(actingDeps, { code, actor });
  };
  return {
    seedDestinationStates: (input: { maxLinks?: number }) =>
      runStep(() => seedDestinationStates(checks(), input)),
    checkDueDestinations: (input: CheckDueInput) =>
      runStep(() =>
        withKeepAlive(KEEP_ALIVE_MS, (context) => checkDueDestinations(checks(), input, context, acting()), {
          stallMs: STALL_MS,
        }),
      ),
    beginDestinationArchive: (input: { code: string }) =>
      runStep(() => beginDestinationArchive(archive, input)),
    requestArchiveSave: (input: CodeUrl) => runStep(() => requestArchiveSave(archive, input)),
    checkArchiveSave: (input: CodeUrl & { jobId: string }) => runStep(() => checkArchiveSave(archive, input)),
    findArchiveSnapshot: (input: CodeUrl) => runStep(() => findArchiveSnapshot(archive, input)),
    recordArchiveFailed: (input: CodeUrl) => runStep(() => recordArchiveFailed(archive, input)),
    takeArchiveBatch: (input: { limit: number }) => runStep(() => takeArchiveBatch(archive, input)),
    archiveQueuedStep: (input: { code: string }) => runStep(() => archiveQueuedStep(archive, input)),
    actOnDestination: (input: { code: string }) => runStep(() => acting()(input.code)),
  };
}
