// What the operations page shows of the prober and the scheduled drill: the settings, and the latest incidents.
import type { Config } from '../shared/config.ts';
import { listProbeIncidents, type ProbeIncidentRow } from '../stores/probe_store.ts';
import type { Db } from '../stores/sql.ts';

export type ProbeIncident = ProbeIncidentRow;

export interface ProbeOverview {
  /** PROBE_INTERVAL; null: off. */
  interval: string | null;
  /** Where probes ask (PROBE_BASE_URL, else the public short base URL). */
  baseUrl: string;
  sample: number;
  /** DRILL_INTERVAL; null: off. */
  drillInterval: string | null;
  /** The latest five incidents, newest first; an open one (closedAt null) comes first. */
  incidents: ProbeIncident[];
}

export async function getProbeOverview(deps: {
  sql: Db;
  config: Pick<Config, 'probe' | 'shortBaseUrl' | 'drillInterval'>;
}): Promise<ProbeOverview> {
  const { probe } = deps.config;
  return {
    interval: probe.interval ?? null,
    baseUrl: probe.baseUrl ?? deps.config.shortBaseUrl,
    sample: probe.sample,
    drillInterval: deps.config.drillInterval ?? null,
    incidents: await listProbeIncidents(deps.sql, 5),
  };
}
