import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { ProbeInput, ProbeReport } from './contract.ts';

// One attempt: a probe that could not run is not retried into the next minute's; the next probe is the retry.
const { runProbe } = proxyActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: { maximumAttempts: 1 },
});

/**
 * The black-box prober (lib/prober/run_probe.ts): the canary and a rotating sample of codes asked through the
 * public short domain and compared with Postgres; incidents opened and closed. Started by the `probe:{taskQueue}`
 * Schedule every PROBE_INTERVAL.
 */
export async function probeWorkflow(input: ProbeInput): Promise<ProbeReport> {
  const report = await runProbe(input.sample ? { sample: input.sample } : {});
  if (report.incident) log.info('probe incident changed', { incident: report.incident });
  return report;
}
