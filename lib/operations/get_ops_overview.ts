// What the operations page shows: the active front, the latest runs of each kind, API keys and users.
import { type ApiKey, listIssuedApiKeys } from '../auth/issue_api_key.ts';
import { type ActiveFront, getActiveFront } from '../failover/active_front.ts';
import type { Db } from '../stores/sql.ts';
import { listUsers, type UserRow } from '../stores/user_store.ts';
import { listLatestOpsRuns, type OpsRun } from './ops_runs.ts';

/** A user account as the operations page lists it. */
export type UserAccount = UserRow;

export interface OpsOverview {
  front: ActiveFront;
  runs: OpsRun[];
  keys: ApiKey[];
  users: UserAccount[];
}

export async function getOpsOverview(db: Db): Promise<OpsOverview> {
  const [front, runs, keys, users] = await Promise.all([
    getActiveFront(db),
    listLatestOpsRuns(db),
    listIssuedApiKeys(db),
    listUsers(db),
  ]);
  return { front, runs, keys, users };
}
