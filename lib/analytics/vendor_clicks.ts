import type { VendorClickSource } from '../clicks/link_stats.ts';
import { getActiveFront } from '../failover/active_front.ts';
import type { Db } from '../stores/sql.ts';
import {
  getVendorClicksState,
  listFrontSwitches,
  listVendorDailyClicks,
} from '../stores/vendor_clicks_store.ts';

const DAY_MS = 86_400_000;

/**
 * Bitly's per-day counts of a link as the scheduled pull stored them (lib/analytics/pull_bitly_clicks.ts), with
 * the front changes that explain most of any difference; null when Bitly neither holds the link nor ever
 * reported on it. Reads only our database: a stats page never waits on Bitly.
 */
export function createStoredVendorClicks(db: Db): VendorClickSource {
  return async (code, range) => {
    const state = await getVendorClicksState(db, code, 'bitly');
    if (!state.held && !state.fetchedAt) return null;
    const firstDay = range.from.toISOString().slice(0, 10);
    const lastDay = new Date(Math.max(range.from.getTime(), range.to.getTime() - 1))
      .toISOString()
      .slice(0, 10);
    const [days, front, switches] = await Promise.all([
      listVendorDailyClicks(db, code, 'bitly', firstDay, lastDay),
      getActiveFront(db),
      listFrontSwitches(db, new Date(Date.parse(`${lastDay}T00:00:00Z`) + DAY_MS)),
    ]);
    return {
      name: 'bitly',
      fetchedAt: state.fetchedAt,
      days,
      fronts: { active: front.active, since: front.since, switches },
    };
  };
}
