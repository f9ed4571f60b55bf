// Archive backfill (integrations/wordpress/CONTRACT.md §1): every post WordPress published before
// the plugin arrived gets its one code. A batch is decided and written in one transaction before the 202, per
// post: a post that has a link keeps it; one whose earlier short link (`knownShortUrl` on our Bitly or short
// domain, or a link reconciliation imported from Bitly pointing at its permalink) is free adopts that
// back-half; anything else is minted. The new links are queued for the sync-queue drainer in the same
// transaction (ADR 0024), which takes them to the serving store and to Bitly in batches; the run's workflow wakes
// it. Re-sent batches get the answers recorded the first time.

import { getBackfillWorkflowId } from '../../workflows/contract.ts';
import { refreshLinks } from '../propagation/refresh_links.ts';
import type { BackfillBatch, BackfillResult } from './backfill_batch.ts';
import { planBackfillBatch } from './backfill_decision.ts';
import type { BackfillDeps, BackfillSignaller } from './backfill_deps.ts';
import { writeBatch } from './backfill_write.ts';
import { type BitlyBudget, describeBitlyBudget } from './bitly_budget.ts';

export interface AcceptedBackfillBatch {
  workflowId: string;
  accepted: number;
  results: BackfillResult[];
  /** A dry run's Bitly budget, when Bitly is configured. */
  bitly?: BitlyBudget;
}

/**
 * Writes a batch durably and hands it to the run's workflow: the answers (and every new link, adoption and
 * audit entry) are committed in one transaction, then the workflow is signalled. A batch sent again gets the
 * recorded answers (and signals again). When Temporal cannot take the signal the caller answers 503: the plugin
 * resends the same batch, which is answered from the record and signalled then.
 */
export async function acceptBackfillBatch(
  deps: BackfillDeps & { workflows: BackfillSignaller },
  batch: BackfillBatch,
): Promise<AcceptedBackfillBatch> {
  const workflowId = getBackfillWorkflowId(batch.site, batch.run);
  if (batch.dryRun) {
    const plan = await planBackfillBatch(deps, batch);
    return {
      workflowId,
      accepted: batch.posts.length,
      results: plan.results,
      ...(deps.bitlyBudget
        ? { bitly: await describeBitlyBudget(deps.bitlyBudget, batch.run, plan.bitlyCreates) }
        : {}),
    };
  }
  const { results, switched } = await writeBatch(deps, batch, workflowId);
  if (switched) {
    await deps.workflows.requestWordPressReconcile?.({
      site: batch.site,
      reason: 'a new WordPress installation (migration mode)',
    });
  }
  if (deps.resolver) {
    // Served at once from every replica; the run's workflow refreshes them again (with retries) anyway.
    const fresh = results
      .filter((r) => (r.outcome === 'minted' || r.outcome === 'adopted') && r.code)
      .map((r) => r.code!);
    await refreshLinks(deps.resolver, fresh).catch((err) =>
      deps.logger.warn(
        { err, site: batch.site, run: batch.run },
        'serving-store refresh after a batch failed',
      ),
    );
  }
  await deps.workflows.signalBackfill({
    site: batch.site,
    runId: batch.run,
    batch: batch.batch,
    final: batch.final,
  });
  return { workflowId, accepted: batch.posts.length, results };
}
