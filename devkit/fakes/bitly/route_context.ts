// What the Bitly fake's route handlers see of it: the store, our group and domains, switches and counters.
import type { BitlinkStore } from './bitlink_store.ts';
import type { BitlyStats, VendorSwitches } from './types.ts';

export interface BitlyRouteContext {
  readonly store: BitlinkStore;
  /** Our group: the only one the token may write to or list. */
  readonly groupGuid: string;
  /** Branded short domains the group may use (lower case); the first is the fake's redirect domain. */
  readonly domains: string[];
  readonly organizationGuid: string;
  /** The fake's base URL ('' before start), for the references in bodies. */
  readonly baseUrl: string;
  readonly switches: VendorSwitches;
  readonly stats: BitlyStats;
  /** True (and one fewer left) when a test asked for the next keyword to be taken by someone else. */
  stealKeyword(): boolean;
}
