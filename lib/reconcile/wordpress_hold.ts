// The breaker's side of a WordPress pass (ADR 0057): changes beyond the site's budget wait in the run's hold.
import { type BudgetState, findRunHold, holdChanges, readBudget } from '../publishing/mass_change_breaker.ts';
import type { HeldChangeRow } from '../stores/breaker_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import type { WordPressReconcileDeps, WordPressSiteInput } from './wordpress_pass.ts';

/** A change as a breaker hold keeps it. */
export function toHeldChange(
  link: LinkRow,
  change: 'retarget' | 'gone',
  permalink: string | null,
): HeldChangeRow {
  return {
    code: link.code,
    change,
    postId: link.postId,
    beforeUrl: link.targetUrl,
    afterUrl: change === 'retarget' ? permalink : null,
    beforeStatus: link.status,
    expectedVersion: link.version,
  };
}

/**
 * The breaker (ADR 0057): when the run has tripped already, or these changes would pass what is left of the
 * site's hourly budget, they go to the run's hold instead (true); the workflow then waits for a decision.
 */
export async function holdIfOverBudget(
  deps: WordPressReconcileDeps,
  input: WordPressSiteInput,
  changes: HeldChangeRow[],
): Promise<boolean> {
  if (changes.length === 0) return false;
  const tripped = await findRunHold(deps.sql, input.site, input.runId);
  const budget: BudgetState = await readBudget(deps.sql, input.site, deps.wordpressBreaker);
  if (!tripped && changes.length <= budget.remaining) return false;
  // One transaction: a hold is never seen without its changes.
  const hold = await deps.sql.begin((tx) =>
    holdChanges(
      tx,
      { site: input.site, source: 'reconcile', runId: input.runId, workflowId: input.workflowId ?? null },
      budget,
      changes,
    ),
  );
  if (!tripped) {
    deps.logger.warn(
      {
        site: input.site,
        runId: input.runId,
        holdId: hold.id,
        budget: budget.budget,
        remaining: budget.remaining,
      },
      'WordPress breaker tripped: changes wait for an admin',
    );
  }
  return true;
}
