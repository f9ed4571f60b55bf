// A throwaway workflow for the connection tests: one activity, so that a completed run proves the worker polled
// both workflow and activity tasks through the connection under test.
import { proxyActivities } from '@temporalio/workflow';

export interface TlsProbeActivities {
  greet(name: string): Promise<string>;
}

const { greet } = proxyActivities<TlsProbeActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 1 },
});

/** Greets `name` through the activity and returns the greeting. */
export async function tlsProbeWorkflow(input: { name: string }): Promise<string> {
  return await greet(input.name);
}
