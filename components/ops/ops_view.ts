// What the operations page shows: the active front, a front change under way, runs, keys, users, adoption, escrow.
import type { ApiKey } from '../../lib/auth/issue_api_key.ts';
import type { DomainFactView } from '../../lib/domains/domain_watch_overview.ts';
import type { EscrowOverview } from '../../lib/escrow/get_escrow_overview.ts';
import type { AdoptionOverview } from '../../lib/operations/adoption_overview.ts';
import type { UserAccount as UserRow } from '../../lib/operations/get_ops_overview.ts';
import type { OpsRun as OpsRunRow } from '../../lib/operations/ops_runs.ts';
import type { ProbeOverview } from '../../lib/prober/probe_overview.ts';

/** One short domain's front on the page (ADR 0073). */
export interface DomainFrontView {
  /** Its host name, as people know it. */
  domain: string;
  active: string;
  since: string | null;
  /** Bitly can front it: Bitly is configured and the domain has a Bitly domain (BITLY_DOMAIN, BITLY_DOMAINS). */
  bitly: boolean;
}

export interface OpsView {
  /** The default short domain's front. */
  front: { active: string; since: string | null };
  /** Every short domain's front, the default first (one entry with one domain). */
  fronts?: DomainFrontView[];
  bitlyConfigured: boolean;
  /** The failover, failback or drill now running, with its current step. */
  frontChange: {
    kind: string;
    workflowId: string;
    step: string | null;
    waitingForDns: boolean;
    /** Where it goes, the steps finished and the end of a DNS TTL wait. */
    to?: string;
    /** The short domain whose front is changing (host name). */
    domain?: string;
    steps?: { name: string; ms: number }[];
    ttlWaitUntil?: Date | null;
  } | null;
  runs: OpsRunRow[];
  keys: ApiKey[];
  users: UserRow[];
  temporalUrl: string | null;
  /** Archive backfills and mass retargets. */
  adoption?: AdoptionOverview;
  /** Escrow exports and static snapshots. */
  escrow?: EscrowOverview;
  /** What the domain watch last read (DOMAIN_WATCH_INTERVAL; undefined: off). */
  domains?: { interval: string | undefined; facts: DomainFactView[] };
  /** The black-box prober's incidents, and the probe and drill schedules. */
  probes?: ProbeOverview;
}
