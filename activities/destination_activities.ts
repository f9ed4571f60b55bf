import { Context } from '@temporalio/activity';
import {
  beginDestinationArchive,
  checkArchiveSave,
  findArchiveSnapshot,
  recordArchiveFailed,
  requestArchiveSave,
} from '../lib/archive/archive_destination.ts';
import { actOnDestination } from '../lib/destinations/act_on_destination.ts';
import { signalWordPressReconcile } from '../lib/temporal/adoption_signals.ts';
import type { ActivityDeps } from './deps.ts';
import { currentSignals, currentWorkflowId, runStep } from './task_context.ts';

type CodeUrl = { code: string; url: string };

/** Dead destinations (lib/archive, lib/destinations): the archived copy of each destination, and acting on a death. */
export function createDestinationActivities(deps: ActivityDeps) {
  const archive = { sql: deps.sql, logger: deps.logger, archive: deps.destinations.archive };
  return {
    beginDestinationArchive: (input: { code: string }) =>
      runStep(() => beginDestinationArchive(archive, input)),
    requestArchiveSave: (input: CodeUrl) => runStep(() => requestArchiveSave(archive, input)),
    checkArchiveSave: (input: CodeUrl & { jobId: string }) => runStep(() => checkArchiveSave(archive, input)),
    findArchiveSnapshot: (input: CodeUrl) => runStep(() => findArchiveSnapshot(archive, input)),
    recordArchiveFailed: (input: CodeUrl) => runStep(() => recordArchiveFailed(archive, input)),
    actOnDestination: (input: { code: string }) =>
      runStep(() => {
        const { client, info } = Context.current();
        return actOnDestination(
          {
            sql: deps.sql,
            logger: deps.logger,
            sync: currentSignals().sync,
            wordpress: {
              requestWordPressReconcile: (request) =>
                signalWordPressReconcile(client.workflow, info.taskQueue, request),
            },
            destinations: deps.destinations.acting,
            edit: { targetPolicy: deps.targetPolicy, safety: deps.safety },
          },
          { code: input.code, actor: `system:${currentWorkflowId()}` },
        );
      }),
  };
}
