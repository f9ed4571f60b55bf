import { refreshInhouseReplica } from '../lib/vendors/inhouse.ts';
import { recordVendorCollision } from '../lib/vendors/record_vendor_collision.ts';
import { syncToBitly } from '../lib/vendors/sync_to_bitly.ts';
import type { ActivityDeps } from './deps.ts';
import { currentTaskContext, runStep } from './task_context.ts';

/** Replicas kept equal to Postgres: the in-house serving store and caches, and Bitly (lib/vendors). */
export function createVendorActivities(deps: ActivityDeps) {
  const inhouse = {
    resolver: deps.resolver,
    shortBaseUrl: deps.vendors?.shortBaseUrl ?? 'http://inhouse.invalid',
  };
  return {
    /** Brings every cached copy of a link (in-process caches, serving store) up to date with Postgres. */
    purgeLinkCaches: (input: { code: string }) => deps.resolver.refresh(input.code),
    writeServingStore: (input: { codes: string[] }) => refreshInhouseReplica(inhouse, input.codes),
    syncToBitly: (input: { code: string; publishing?: boolean }) =>
      runStep(() => syncToBitly(deps, input, currentTaskContext())),
    recordVendorCollision: (input: { code: string; vendor: 'bitly'; detail: string }) =>
      recordVendorCollision(deps, input),
  };
}
