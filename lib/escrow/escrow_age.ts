// How late the copies that outlive us are: seconds since the last successful escrow export and static snapshot,
// beside their Schedules' intervals, for the worker's metrics (lifeline_escrow_*; the alert fires past twice the
// interval). A run that fails leaves the age growing from the last success, so a broken export is seen.
import type { Config } from '../shared/config.ts';
import type { ScheduledCopyAge } from '../shared/promise_gauges.ts';
import { type EscrowRunKind, getEscrowRunAges } from '../stores/escrow_run_store.ts';
import type { Db } from '../stores/sql.ts';

const UNIT_SECONDS = { m: 60, h: 3_600, d: 86_400 } as const;

/** A Schedule interval as the settings take it (`30m`, `12h`, `1d`) in seconds; undefined (off) is null. */
export function intervalSeconds(interval: string | undefined): number | null {
  const m = interval ? /^([1-9]\d*)(m|h|d)$/.exec(interval) : null;
  return m ? Number(m[1]) * UNIT_SECONDS[m[2] as keyof typeof UNIT_SECONDS] : null;
}

/** Both kinds: the age of the last success (or of the first attempt while none succeeded) and the interval. */
export async function readEscrowAges(
  db: Db,
  config: Pick<Config, 'escrow' | 'snapshot'>,
): Promise<ScheduledCopyAge[]> {
  const kinds: [EscrowRunKind, string | undefined][] = [
    ['export', config.escrow.interval],
    ['snapshot', config.snapshot.interval],
  ];
  return Promise.all(
    kinds.map(async ([kind, interval]) => {
      const ages = await getEscrowRunAges(db, kind);
      return {
        kind,
        ageSeconds: ages.sinceSuccessSeconds ?? ages.sinceFirstSeconds,
        intervalSeconds: intervalSeconds(interval),
      };
    }),
  );
}
