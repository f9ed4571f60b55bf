import { syncToBitly } from '../lib/propagation/sync_to_bitly.ts';
import { purgeLinkCaches, writeServingStore } from '../lib/propagation/write_serving_store.ts';
import { recordVendorCollision } from '../lib/vendors/record_vendor_collision.ts';
import type { ActivityDeps } from './deps.ts';
import { currentTaskContext, runStep } from './task_context.ts';

/** A link's copies brought in line with Postgres: the serving store and LRUs, and Bitly (lib/propagation). */
export function createVendorActivities(deps: ActivityDeps) {
  const inhouse = {
    resolver: deps.resolver,
    shortBaseUrl: deps.vendors?.shortBaseUrl ?? 'http://inhouse.invalid',
  };
  return {
    /** Brings every cached copy of a link (in-process caches, serving store) up to date with Postgres. */
    purgeLinkCaches: (input: { code: string }) => purgeLinkCaches(deps, input.code),
    writeServingStore: (input: { codes: string[] }) => writeServingStore(inhouse, input.codes),
    syncToBitly: (input: { code: string; publishing?: boolean }) =>
      runStep(() => syncToBitly(deps, input, currentTaskContext())),
    recordVendorCollision: (input: { code: string; vendor: 'bitly'; detail: string }) =>
      recordVendorCollision(deps, input),
  };
}
