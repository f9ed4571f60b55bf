// The failover drill on a schedule (DRILL_INTERVAL, workflows/scheduled_drill.ts): the same drill an admin starts
// from the operations page, reserved the same way (one front change at a time), and its results as metrics.

import { DEFAULT_DOMAIN, type ShortDomains } from '../shared/link_key.ts';
import type { Logger } from '../shared/logger.ts';
import type { DrillGaugeValue } from '../shared/metrics.ts';
import { getDrillResults, insertOpsRun } from '../stores/ops_run_store.ts';
import { isUniqueViolation, type Sql } from '../stores/sql.ts';
import type { Front } from './active_front.ts';
import { frontRunReport, getRunningFrontChange } from './request_front_change.ts';

const ONE_FRONT_CHANGE_INDEX = 'ops_runs_one_front_change';

/**
 * Reserves the ops_runs row of a scheduled drill (idempotent for its workflow ID). Another front change running
 * (a failover, failback or drill someone started) wins: the scheduled one is skipped, and says which ran.
 */
export async function reserveScheduledDrill(
  deps: { sql: Sql; logger: Logger },
  input: { workflowId: string; to: Front; domain?: string },
): Promise<{ reserved: true } | { reserved: false; running: string | null }> {
  try {
    await insertOpsRun(deps.sql, {
      kind: 'drill',
      workflowId: input.workflowId,
      report: frontRunReport({
        to: input.to,
        requestedBy: 'schedule',
        ...(input.domain ? { domain: input.domain } : {}),
      }),
    });
    return { reserved: true };
  } catch (error) {
    if (!isUniqueViolation(error, ONE_FRONT_CHANGE_INDEX)) throw error;
    const running = await getRunningFrontChange(deps.sql);
    deps.logger.warn(
      { workflowId: input.workflowId, running: running?.workflowId },
      'scheduled drill skipped: another front change is running',
    );
    return { reserved: false, running: running?.workflowId ?? null };
  }
}

/**
 * The drill gauges' values (lifeline_drill_last_result, lifeline_drill_last_success_timestamp_seconds), per front
 * and short domain: `domain` is the host name (the default's from `shortDomains`, the first of SHORT_DOMAINS).
 */
export async function getDrillGaugeValues(
  sql: Sql,
  config: ShortDomains = { shortBaseUrl: 'http://localhost', shortDomains: [''] },
): Promise<DrillGaugeValue[]> {
  return (await getDrillResults(sql)).map((r) => ({
    to: r.to,
    domain: r.domain === DEFAULT_DOMAIN ? (config.shortDomains[0] ?? '') : r.domain,
    passed: r.passed,
    lastSuccessSeconds: r.lastSuccessAt ? r.lastSuccessAt.getTime() / 1000 : null,
  }));
}
