import { log, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { EscrowExportReport, EscrowRunInput, StaticSnapshotReport } from './contract.ts';

// One long activity each: it heartbeats every 5 s while it streams, so a lost worker is noticed within 20 s, and
// stops once it has written nothing for a minute, so a stalled export is noticed too. A failed attempt removes
// what it wrote, so a retry starts clean with a new snapshot.
const { writeEscrowExport, writeStaticSnapshot } = proxyActivities<Activities>({
  startToCloseTimeout: '2h',
  heartbeatTimeout: '20s',
  retry: {
    initialInterval: '30s',
    backoffCoefficient: 2,
    maximumInterval: '10m',
    maximumAttempts: 3,
    nonRetryableErrorTypes: ['NotConfigured'],
  },
});

/**
 * An escrow export into ESCROW_DIR (lib/escrow): every link and what a restore needs, from one snapshot, with a
 * manifest; the oldest exports beyond ESCROW_KEEP are removed. Started by the `escrow:{taskQueue}` Schedule every
 * ESCROW_INTERVAL, or from the operations page (`escrow:manual:{taskQueue}`).
 */
export async function escrowExportWorkflow(input: EscrowRunInput = {}): Promise<EscrowExportReport> {
  const report = await writeEscrowExport({ workflowId: workflowInfo().workflowId });
  log.info('escrow export written', {
    reason: input.reason,
    directory: report.directory,
    links: report.links,
  });
  return report;
}

/**
 * The static last-resort snapshot into SNAPSHOT_DIR (lib/snapshot), `current` pointed at it. Started by the
 * `snapshot:{taskQueue}` Schedule every SNAPSHOT_INTERVAL, or from the operations page.
 */
export async function staticSnapshotWorkflow(input: EscrowRunInput = {}): Promise<StaticSnapshotReport> {
  const report = await writeStaticSnapshot({ workflowId: workflowInfo().workflowId });
  log.info('static snapshot written', {
    reason: input.reason,
    directory: report.directory,
    answers: report.answers,
  });
  return report;
}
