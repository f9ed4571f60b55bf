import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { NativeConnection, type WorkflowBundleOption } from '@temporalio/worker';
import { getFreePort, startDevServer } from '../../scripts/dev_server.ts';
import { ensureTemporalCli } from '../../scripts/temporal_cli.ts';

export interface TestTemporal {
  address: string;
  client: Client;
  nativeConnection: NativeConnection;
  /** The run's prebuilt workflow bundle (undefined when a file runs alone: workers bundle themselves). */
  workflowBundle: WorkflowBundleOption | undefined;
  close(): Promise<void>;
}

/** A name no other test in the run uses (task queues, workflow IDs). */
export function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 12)}`;
}

/**
 * Connects to the run's shared dev server (scripts/test.ts starts it); a file run on its own starts a
 * dev server of its own, stopped by close().
 */
export async function connectTestTemporal(): Promise<TestTemporal> {
  let address = process.env.LIFELINE_TEST_TEMPORAL_ADDRESS;
  let stopServer: (() => Promise<void>) | undefined;
  if (!address) {
    const cli = await ensureTemporalCli(() => {});
    const server = await startDevServer({ cli, port: await getFreePort(), log: () => {} });
    address = server.address;
    stopServer = () => server.stop();
  }
  const connection = await Connection.connect({ address });
  const nativeConnection = await NativeConnection.connect({ address });
  const bundlePath = process.env.LIFELINE_TEST_WORKFLOW_BUNDLE;
  return {
    address,
    client: new Client({ connection }),
    nativeConnection,
    workflowBundle: bundlePath ? { codePath: bundlePath } : undefined,
    async close() {
      await nativeConnection.close();
      await connection.close();
      await stopServer?.();
    },
  };
}

/** Whether Temporal knows a workflow with this ID (running or closed, within its retention). */
export async function workflowExists(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

type HistoryEvent = NonNullable<
  Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>['events']
>[number];

/** What a first publish with Bitly on runs, in order (the history of `publish:{site}:{postId}`). */
export const PUBLISH_STEPS_WITH_BITLY = [
  'mintCode',
  'writeServingStore',
  'scanLinkSafety',
  'syncToBitly',
  'markActive',
] as const;

/**
 * The activities a history ran, in order: activity tasks by their scheduled event, local activities by the marker
 * the SDK records when one completes (its `data` detail names the type).
 */
export function activitySteps(events: HistoryEvent[] | null | undefined): string[] {
  const steps: string[] = [];
  for (const event of events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (scheduled) steps.push(scheduled);
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') continue;
    const data = marker.details?.data?.payloads?.[0]?.data;
    if (!data) continue;
    const { activity_type } = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string };
    if (activity_type) steps.push(activity_type);
  }
  return steps;
}

/**
 * The codes of every batch a sync-queue drainer (`sync-queue:{taskQueue}`) scheduled, from its history (every run
 * of its continue-as-new chain), oldest first.
 */
export async function syncQueueBatches(client: Client, workflowId: string): Promise<string[][]> {
  const batches: string[][] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
    const history = await client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
    for (const event of history.events ?? []) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType?.name !== 'syncLinkBatch') continue;
      const data = scheduled.input?.payloads?.[0]?.data;
      batches.push((JSON.parse(Buffer.from(data!).toString('utf8')) as { codes: string[] }).codes);
    }
  }
  return batches;
}
