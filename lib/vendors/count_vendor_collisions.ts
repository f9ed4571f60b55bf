// Recorded collisions (ADR 0008: a shared code Bitly refused or answered with another back-half) as a number
// the worker's metrics read at scrape time (lifeline_vendor_collisions).
import type { VendorCollisionCounts } from '../shared/promise_gauges.ts';
import type { Db } from '../stores/sql.ts';
import { countVendorLinksInState } from '../stores/vendor_link_store.ts';

/** Above this the exact number no longer changes what anyone does; the count stops there. */
export const COLLISION_COUNT_CAP = 10_000;

export async function countVendorCollisions(db: Db): Promise<VendorCollisionCounts> {
  return { bitly: await countVendorLinksInState(db, 'bitly', 'collision', COLLISION_COUNT_CAP) };
}
