// What other code reads of the destination checks: one link's destination state (the link page, the handling of a
// death), the links with a verdict, and the overview the metrics show. Reads only; the checks write.
import {
  type DestinationOverview,
  type DestinationState,
  type DestinationVerdict,
  getDestinationOverview,
  getDestinationState,
  listDestinationStatesByVerdict,
} from '../stores/destination_state_store.ts';
import type { Db } from '../stores/sql.ts';

export type {
  ChainHop,
  DestinationOutcome,
  DestinationOverview,
  DestinationState,
  DestinationVerdict,
  TlsState,
} from '../stores/destination_state_store.ts';

/**
 * A link's destination as last checked, or null when it has not been checked yet (no row, no check, or the row
 * describes a target the link no longer has).
 */
export async function getLinkDestinationState(db: Db, code: string): Promise<DestinationState | null> {
  const state = await getDestinationState(db, code);
  return state?.current && state.checkedAt ? state : null;
}

/** Links whose destination is confirmed `dead` or `moved` (paged by code), for the handling of a death. */
export function listLinksWithVerdict(
  db: Db,
  verdict: Extract<DestinationVerdict, 'dead' | 'moved' | 'suspect'>,
  page: { limit: number; afterCode?: string },
): Promise<DestinationState[]> {
  return listDestinationStatesByVerdict(db, verdict, page);
}

export function readDestinationOverview(db: Db): Promise<DestinationOverview> {
  return getDestinationOverview(db);
}
