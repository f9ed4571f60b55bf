import { z } from 'zod';
import { NotFoundError } from '../shared/errors.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import {
  DEAD_POLICIES,
  type DeadPolicy,
  listActionableCodesOfHost,
  setHostDeadPolicy,
  setLinkDeadPolicy,
} from '../stores/destination_state_store.ts';
import { getLinkByCode } from '../stores/link_store.ts';
import type { Sql } from '../stores/sql.ts';
import { canonicalizeHost } from '../targets/canonical_url.ts';
import { actOnDestination, type DestinationDeps } from './act_on_destination.ts';

/** A policy to set; null clears it (the link then follows its host's, the host the default `notify`). */
export const deadPolicyInputSchema = z.strictObject({ policy: z.enum(DEAD_POLICIES).nullable() });

/** Sets a link's own dead-destination policy, audited. 404 for no such link. */
export async function setDeadPolicy(
  deps: { sql: Sql },
  input: { code: string; policy: DeadPolicy | null; actor: string },
): Promise<{ code: string; policy: DeadPolicy | null }> {
  return deps.sql.begin(async (tx) => {
    const link = await getLinkByCode(tx, input.code);
    if (!link || link.deletedAt) throw new NotFoundError(`No link ${input.code}.`);
    await setLinkDeadPolicy(tx, input.code, input.policy);
    await insertAuditEntry(tx, {
      code: input.code,
      actor: input.actor,
      action: 'link.dead_policy_changed',
      after: { deadPolicy: input.policy },
    });
    return { code: input.code, policy: input.policy };
  });
}

/** The host a host policy is set for, canonical (lower case, punycode), or null when it is not a host name. */
export function toPolicyHost(value: string): string | null {
  return canonicalizeHost(value);
}

/** How many of a host's dead links a policy change acts on from the request; the rest at their next check. */
export const HOST_POLICY_ACT_NOW = 200;

/**
 * Sets (or with null removes) the dead-destination policy of every destination on `host`, then acts on the
 * host's links that are dead, moved or answering a copy now (the first HOST_POLICY_ACT_NOW; the others at their
 * next check). Returns how many were acted on.
 */
export async function setHostPolicy(
  deps: DestinationDeps,
  input: { host: string; policy: DeadPolicy | null; actor: string },
): Promise<{ host: string; policy: DeadPolicy | null; actedOn: number }> {
  await setHostDeadPolicy(deps.sql, input.host, input.policy, input.actor);
  const codes = await listActionableCodesOfHost(deps.sql, input.host, HOST_POLICY_ACT_NOW);
  for (const code of codes) await actOnDestination(deps, { code, actor: input.actor });
  return { host: input.host, policy: input.policy, actedOn: codes.length };
}
