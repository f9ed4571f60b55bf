import { destinationHost } from '../archive/own_hosts.ts';
import { type EditLinkDeps, type EditLinkResult, editLink } from '../links/edit_link.ts';
import { ConflictError, NotFoundError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { ensureDestinationRow, getDestinationState } from '../stores/destination_state_store.ts';
import { getLinkByCode } from '../stores/link_store.ts';

/**
 * Retargets a link to the URL proposed for its moved destination (an editor's one click, or automatically when
 * DEAD_MOVED_AUTO_RETARGET allows): the ordinary edit, so the target rule, the safety scan, the audit entry and
 * the sync to every copy apply as to any retarget. The new target resets the destination's row (and lifts a
 * fallback, migration 0092). 404 when the link has no proposal; 409 when the link moved on since it was made.
 */
export async function applyProposedRetarget(
  deps: EditLinkDeps,
  input: { code: string; actor: string; mayManagePostLinks?: boolean },
): Promise<EditLinkResult> {
  const link = await getLinkByCode(deps.sql, input.code);
  if (!link || link.deletedAt) throw new NotFoundError(`No link ${input.code}.`);
  const state = await getDestinationState(deps.sql, input.code);
  if (!state?.proposedUrl) throw new NotFoundError(`No retarget is proposed for ${input.code}.`);
  if (state.url !== link.targetUrl) {
    throw new ConflictError(`The link ${input.code} was retargeted since the proposal was made.`, [
      { path: 'url', message: fieldProblem('proposalStale') },
    ]);
  }
  const result = await editLink(deps, input.code, { url: state.proposedUrl }, input.actor, {
    expectedVersion: link.version,
    ...(input.mayManagePostLinks ? { mayManagePostLinks: true } : {}),
  });
  // The row now describes the new destination, unchecked, with nothing left to propose.
  await ensureDestinationRow(deps.sql, {
    code: input.code,
    url: result.link.targetUrl,
    host: destinationHost(result.link.targetUrl) ?? state.host,
  });
  return result;
}
