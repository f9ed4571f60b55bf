// What the latest completed reconciliation found on each leg, for the worker's metrics (lifeline_reconcile_*):
// read from that run's ops_runs report (reconcile_run.ts's ReconcileSummary), one row.
import { DEFAULT_DOMAIN, type ShortDomains } from '../shared/link_key.ts';
import type { ReconcileDriftValues } from '../shared/promise_gauges.ts';
import { getLatestSucceededRun } from '../stores/ops_run_store.ts';
import { DRIFTS, type ReconcileSideSummary } from '../stores/reconcile_store.ts';
import type { Db } from '../stores/sql.ts';

const LEGS = ['bitly', 'serving', 'expiry', 'wordpress'] as const;
/** Older runs say nothing about today's copies: a Schedule that stopped shows as a stale timestamp, then none. */
const WINDOW_DAYS = 30;

export async function readReconcileDrift(
  db: Db,
  config: ShortDomains = { shortBaseUrl: 'http://localhost', shortDomains: [''] },
): Promise<ReconcileDriftValues> {
  // Only a full run reports `expiry` (a WordPress site's own pass does not): every leg, the same moment.
  const run = await getLatestSucceededRun(db, {
    kind: 'reconcile',
    reportKey: 'expiry',
    withinDays: WINDOW_DAYS,
  });
  const values: ReconcileDriftValues = { found: [], unrepaired: [], finishedAtSeconds: null };
  if (!run) return values;
  values.finishedAtSeconds = (run.finishedAt ?? run.startedAt).getTime() / 1000;
  for (const leg of LEGS) {
    const side = run.report[leg] as ReconcileSideSummary | null | undefined;
    if (!side || typeof side !== 'object') continue;
    let found = 0;
    let repaired = 0;
    const byDomain = (side as { byDomain?: { domain: string; drift: Partial<Record<string, number>> }[] })
      .byDomain;
    if (leg === 'bitly' && byDomain && byDomain.length > 0 && config.shortDomains.length > 1) {
      // With several short domains, the Bitly leg by domain (ADR 0073): each domain's series, its kinds zeros
      // included; they add up to the leg's total, so sums over the leg stay right. One domain: as always.
      for (const entry of byDomain) {
        const domain = entry.domain === DEFAULT_DOMAIN ? (config.shortDomains[0] ?? '') : entry.domain;
        for (const drift of DRIFTS) values.found.push({ leg, drift, count: entry.drift[drift] ?? 0, domain });
      }
      for (const drift of DRIFTS) found += side.drift?.[drift] ?? 0;
    } else {
      // Every kind, zeros included: a leg that ran clean shows 0, not nothing.
      for (const drift of DRIFTS) {
        const count = side.drift?.[drift] ?? 0;
        values.found.push({ leg, drift, count });
        found += count;
      }
    }
    for (const count of Object.values(side.repaired ?? {})) repaired += count ?? 0;
    values.unrepaired.push({ leg, count: Math.max(0, found - repaired) });
  }
  return values;
}
