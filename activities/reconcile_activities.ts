import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { importProblem, importVendorLink } from '../lib/reconcile/import_vendor_link.ts';
import type { ServingReplica } from '../lib/reconcile/serving_replica.ts';
import { type ServingRecord, toServingRecord } from '../lib/redirect/serving_record.ts';
import { describeScanResult, nextSafetyVerdict } from '../lib/safety/scan_result.ts';
import { forEachConcurrently } from '../lib/shared/concurrency.ts';
import type { LinkRow } from '../lib/stores/link_rows.ts';
import { listVendorLinks } from '../lib/stores/link_store.ts';
import {
  analyzeMarks,
  type Drift,
  deleteMarks,
  getLinksByCodes,
  insertMarks,
  listExpiringLinksAfter,
  listLinksAfter,
  listUnseenActiveCodes,
  type ReconcileSideSummary,
  summarizeMarks,
  updateMarksRepaired,
} from '../lib/stores/reconcile_store.ts';
import { signalExpiry } from '../lib/temporal/expiry_signal.ts';
import { getExpireWorkflowId } from '../lib/temporal/workflow_ids.ts';
import { BITLY_DISCARDED_TAG } from '../lib/vendors/bitly.ts';
import type { VendorLink } from '../lib/vendors/short_link_provider.ts';
import { toVendorTarget } from '../lib/vendors/vendor_target.ts';
import type { ActivityDeps } from './deps.ts';
import { createVendorActivities } from './vendor_activities.ts';

/** Bitly's page size for the group listing (its maximum is 100). */
const BITLY_PAGE_SIZE = 100;
/** Links read from Postgres per step of the passes over it. */
const POSTGRES_CHUNK = 500;
/** Repairs (each a few vendor calls) in flight at once; Bitly allows 5 connections per IP. */
const REPAIR_CONCURRENCY = 4;
/** Transient vendor failures a single repair waits out before it is left to the next run. */
const REPAIR_ATTEMPTS = 4;

/** Where a reconciliation run stands; carried across activity calls and continue-as-new. */
export interface ReconcilePosition {
  phase: 'bitly' | 'missing' | 'serving' | 'expiry' | 'done';
  cursor: string | null;
}

export interface ReconcileStepInput {
  runId: string;
  startedAtMs: number;
  position: ReconcilePosition;
  /** false: report drift only (a check); true: repair it, Postgres winning. */
  repair: boolean;
  /** Import links that exist only on Bitly (under their own back-half). */
  importExtra: boolean;
  /** Work per call: Bitly pages, or Postgres links. */
  budget: number;
}

/** The drift a run reports, per side (counted from reconcile_marks: exact across crashes). */
export type ReconcileSummary = {
  bitly: (ReconcileSideSummary & { imported: number }) | null;
  serving: ReconcileSideSummary | null;
  /** Expiry timers found missing (and re-armed when repairing). */
  expiry: ReconcileSideSummary;
};

/** Reconciliation: Postgres ↔ Bitly (with import of Bitly-only links) ↔ the serving store. */
export function createReconcileActivities(deps: ActivityDeps) {
  const vendor = createVendorActivities(deps);

  /** Runs the sync of one link inline, waiting out transient vendor failures a few times. */
  async function syncInline(code: string): Promise<'synced' | 'collision' | 'failed'> {
    const ctx = Context.current();
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await vendor.syncToBitly({ code });
        if (result.outcome === 'mismatch') {
          await vendor.recordVendorCollision({ code, vendor: 'bitly', detail: result.detail });
          return 'collision';
        }
        return result.outcome === 'synced' || result.outcome === 'skipped' ? 'synced' : 'failed';
      } catch (error) {
        const transient = error instanceof ApplicationFailure && !error.nonRetryable;
        if (!transient || attempt >= REPAIR_ATTEMPTS) {
          deps.logger.warn({ code, err: (error as Error).message }, 'reconciliation could not repair a link');
          return 'failed';
        }
        await ctx.sleep(Math.min(Number((error as ApplicationFailure).nextRetryDelay ?? 1_000), 30_000));
      }
    }
  }

  async function repairAll(
    runId: string,
    side: 'bitly',
    codes: string[],
    heartbeat: () => void,
  ): Promise<void> {
    const repaired: string[] = [];
    await forEachConcurrently(codes, REPAIR_CONCURRENCY, async (code) => {
      heartbeat();
      if ((await syncInline(code)) === 'synced') repaired.push(code);
    });
    await updateMarksRepaired(deps.sql, runId, side, repaired);
  }

  /** Classifies one page of Bitly links against Postgres; repairs and imports when asked. */
  async function reconcileBitlyLinks(
    input: ReconcileStepInput,
    links: VendorLink[],
    heartbeat: () => void,
  ): Promise<{ otherDomain: number }> {
    const bitly = deps.vendors!.bitly!;
    const prefix = `${bitly.domain}/`;
    const entries: { code: string; link: VendorLink }[] = [];
    let otherDomain = 0;
    for (const link of links) {
      // A bitlink Bitly made with the wrong back-half was archived and tagged by the sync: never a link of ours.
      if (link.tags.includes(BITLY_DISCARDED_TAG)) continue;
      const codes = getBackHalves(link, prefix);
      if (codes.length === 0) otherDomain++;
      for (const code of codes) entries.push({ code, link });
    }
    const codes = entries.map((e) => e.code);
    const rows = await getLinksByCodes(deps.sql, codes);
    const mappings = new Map(
      (await listVendorLinks(deps.sql, codes)).filter((v) => v.vendor === 'bitly').map((v) => [v.code, v]),
    );
    const settings = { ...deps.vendors!.redirect, shortBaseUrl: deps.vendors!.shortBaseUrl };
    const marks: { code: string; drift: Drift | null }[] = [];
    const inSync: string[] = [];
    const toRepair: string[] = [];
    const toImport: { code: string; link: VendorLink }[] = [];
    for (const { code, link } of entries) {
      const row = rows.get(code);
      if (!row) {
        const problem = importProblem(code, link.longUrl);
        marks.push({ code, drift: problem ? 'unimportable' : 'extra' });
        if (problem)
          deps.logger.warn(
            { code, vendorId: link.vendorId, problem },
            'a Bitly-only link cannot be imported',
          );
        else toImport.push({ code, link });
        continue;
      }
      // A pending link is being published; its publish workflow places it on Bitly.
      if (row.status === 'pending') {
        marks.push({ code, drift: null });
        continue;
      }
      const target = toVendorTarget(row, settings, Date.now());
      const mapping = mappings.get(code);
      const ours =
        link.group === bitly.groupGuid &&
        (link.longUrl === target.longUrl || (mapping !== undefined && mapping.state !== 'collision'));
      if (!ours) {
        marks.push({ code, drift: 'collision' });
        if (input.repair && mapping?.state !== 'collision') {
          await vendor.recordVendorCollision({
            code,
            vendor: 'bitly',
            detail: `our back-half ${bitly.domain}/${code} is held by ${link.vendorId} (found by reconciliation)`,
          });
        }
        continue;
      }
      const stale =
        link.longUrl !== target.longUrl ||
        link.archived !== target.archived ||
        mapping === undefined ||
        mapping.state !== 'synced' ||
        mapping.vendorId !== link.vendorId;
      marks.push({ code, drift: stale ? 'stale' : null });
      if (stale) toRepair.push(code);
      else inSync.push(code);
    }
    await insertMarks(deps.sql, input.runId, 'bitly', marks);
    // A page processed again after a crash finds what the first attempt repaired in sync.
    await updateMarksRepaired(deps.sql, input.runId, 'bitly', inSync);
    if (input.repair) await repairAll(input.runId, 'bitly', toRepair, heartbeat);
    if (input.repair && input.importExtra && toImport.length > 0) {
      const imported = await importLinks(input, toImport);
      await updateMarksRepaired(deps.sql, input.runId, 'bitly', imported.codes);
      // A blocked import is now ours to answer 451 for; the Bitly copy must stop redirecting too.
      await repairAll(input.runId, 'bitly', imported.blocked, heartbeat);
    }
    return { otherDomain };
  }

  /** Imports Bitly-only links (scanned first, like any new destination) and warms the serving store. */
  async function importLinks(
    input: ReconcileStepInput,
    links: { code: string; link: VendorLink }[],
  ): Promise<{ codes: string[]; blocked: string[] }> {
    const results = await deps.safety.scanMany(links.map((l) => l.link.longUrl));
    const codes: string[] = [];
    const blocked: string[] = [];
    const now = new Date();
    await forEachConcurrently(links, 8, async ({ code, link }, i) => {
      const result = results[i]!;
      const safety = {
        safety: nextSafetyVerdict('unknown', result),
        safetyReason: describeScanResult(result),
        safetyCheckedAt: result.complete ? now : null,
      };
      const inserted = await importVendorLink(deps.sql, {
        code,
        vendor: 'bitly',
        link,
        safety,
        reason: importReason(input.runId),
      });
      // Inserted now, or by an earlier attempt of this page: either way the link is ours and served.
      await deps.resolver.refresh(code);
      codes.push(code);
      if (inserted && safety.safety === 'blocked') blocked.push(code);
    });
    return { codes, blocked };
  }

  return {
    /**
     * Pages through the group's bitlinks from `position.cursor` (Bitly's own paging token), classifying
     * each link on our branded domain against Postgres: in sync, stale, a collision, or Bitly-only (extra:
     * imported). Heartbeats the Bitly cursor after every page, so a new worker resumes at that page.
     */
    async reconcileBitlyPages(
      input: ReconcileStepInput,
    ): Promise<{ position: ReconcilePosition; read: number }> {
      const ctx = Context.current();
      const bitly = deps.vendors?.bitly;
      if (!bitly) return { position: { phase: 'missing', cursor: '' }, read: 0 };
      const resumed = ctx.info.heartbeatDetails as { cursor: string | null; read: number } | undefined;
      let cursor = resumed?.cursor ?? input.position.cursor;
      let read = resumed?.read ?? 0;
      const beat = () => ctx.heartbeat({ cursor, read });
      for (let pages = 0; pages < input.budget; pages++) {
        if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
        const page = await bitly.listLinks({ cursor, size: BITLY_PAGE_SIZE, archived: 'both' });
        await reconcileBitlyLinks(input, page.links, beat);
        read += page.links.length;
        cursor = page.nextCursor;
        beat();
        if (!cursor) return { position: { phase: 'missing', cursor: '' }, read };
      }
      return { position: { phase: 'bitly', cursor }, read };
    },

    /**
     * Active links Bitly was not seen holding (after the Bitly pass): marked `missing` and, when repairing,
     * created there through the same sync the per-link workflow runs. Pages by code, heartbeating.
     */
    async reconcileMissingOnBitly(
      input: ReconcileStepInput,
    ): Promise<{ position: ReconcilePosition; read: number }> {
      const ctx = Context.current();
      if (!deps.vendors?.bitly) return { position: { phase: 'serving', cursor: '' }, read: 0 };
      const resumed = ctx.info.heartbeatDetails as { cursor: string; read: number } | undefined;
      let cursor = resumed?.cursor ?? input.position.cursor ?? '';
      let read = resumed?.read ?? 0;
      const beat = () => ctx.heartbeat({ cursor, read });
      // The marks table was just filled: without fresh statistics the planner takes it for empty and joins
      // it by scanning (seconds per chunk at 10,000 links, against milliseconds).
      await analyzeMarks(deps.sql);
      while (read < input.budget) {
        const codes = await listUnseenActiveCodes(deps.sql, {
          runId: input.runId,
          startedAt: new Date(input.startedAtMs),
          cursor,
          limit: Math.min(POSTGRES_CHUNK, input.budget - read),
        });
        if (codes.length === 0) return { position: { phase: 'serving', cursor: '' }, read };
        await insertMarks(
          deps.sql,
          input.runId,
          'bitly',
          codes.map((code) => ({ code, drift: 'missing' as const })),
        );
        if (input.repair) await repairAll(input.runId, 'bitly', codes, beat);
        read += codes.length;
        cursor = codes.at(-1)!;
        beat();
      }
      return { position: { phase: 'missing', cursor }, read };
    },

    /**
     * Postgres ↔ serving store: each link's record in the store must be what Postgres says (missing or
     * stale otherwise); a repair writes it through the resolver (which also tells web instances to drop
     * their copies) and reads it back. Skipped when no serving store is configured.
     */
    async reconcileServingStore(
      input: ReconcileStepInput,
    ): Promise<{ position: ReconcilePosition; read: number }> {
      const ctx = Context.current();
      const store: ServingReplica | undefined = deps.servingStore;
      if (!store) return { position: { phase: 'expiry', cursor: '' }, read: 0 };
      const resumed = ctx.info.heartbeatDetails as { cursor: string; read: number } | undefined;
      let cursor = resumed?.cursor ?? input.position.cursor ?? '';
      let read = resumed?.read ?? 0;
      while (read < input.budget) {
        const rows = await listLinksAfter(deps.sql, {
          cursor,
          limit: Math.min(POSTGRES_CHUNK, input.budget - read),
          statuses: ['active', 'expired', 'gone', 'blocked'],
        });
        if (rows.length === 0) return { position: { phase: 'expiry', cursor: '' }, read };
        const stored = await store.getMany(rows.map((r) => r.code));
        const marks = rows.map((row, i) => ({ code: row.code, drift: servingDrift(row, stored[i] ?? null) }));
        await insertMarks(
          deps.sql,
          input.runId,
          'serving',
          marks.filter((m) => m.drift !== null),
        );
        const drifted = marks.filter((m) => m.drift !== null).map((m) => m.code);
        if (input.repair && drifted.length > 0) {
          await forEachConcurrently(drifted, 8, async (code) => {
            await store.delete?.(code);
            await deps.resolver.refresh(code);
          });
          const after = await store.getMany(drifted);
          const byCode = new Map(rows.map((r) => [r.code, r]));
          await updateMarksRepaired(
            deps.sql,
            input.runId,
            'serving',
            drifted.filter((code, i) => servingDrift(byCode.get(code)!, after[i] ?? null) === null),
          );
        }
        read += rows.length;
        cursor = rows.at(-1)!.code;
        ctx.heartbeat({ cursor, read });
      }
      return { position: { phase: 'serving', cursor }, read };
    },

    /**
     * Every live link with an expiry has its durable timer: one that lost it (Temporal restored from an old
     * backup, a sync deferred while Temporal was down) gets it back, and one already past its date expires
     * at once. Running timers are only described, never signalled, so their histories do not grow.
     */
    async reconcileExpiryTimers(
      input: ReconcileStepInput,
    ): Promise<{ position: ReconcilePosition; read: number }> {
      const ctx = Context.current();
      const resumed = ctx.info.heartbeatDetails as { cursor: string; read: number } | undefined;
      let cursor = resumed?.cursor ?? input.position.cursor ?? '';
      let read = resumed?.read ?? 0;
      while (read < input.budget) {
        const rows = await listExpiringLinksAfter(deps.sql, {
          cursor,
          limit: Math.min(POSTGRES_CHUNK, input.budget - read),
        });
        if (rows.length === 0) return { position: { phase: 'done', cursor: null }, read };
        const missing: string[] = [];
        await forEachConcurrently(rows, 8, async (row) => {
          const running = await ctx.client.workflow
            .getHandle(getExpireWorkflowId(row.code))
            .describe()
            .then((d) => d.status.name === 'RUNNING')
            .catch((error) => {
              if (error instanceof WorkflowNotFoundError) return false;
              throw error;
            });
          if (running) return;
          missing.push(row.code);
          if (input.repair) {
            await signalExpiry(ctx.client.workflow, {
              taskQueue: ctx.info.taskQueue,
              code: row.code,
              expiresAtMs: row.expiresAt.getTime(),
            });
          }
        });
        await insertMarks(
          deps.sql,
          input.runId,
          'expiry',
          missing.map((code) => ({ code, drift: 'missing' as const })),
        );
        if (input.repair) await updateMarksRepaired(deps.sql, input.runId, 'expiry', missing);
        read += rows.length;
        cursor = rows.at(-1)!.code;
        ctx.heartbeat({ cursor, read });
      }
      return { position: { phase: 'expiry', cursor }, read };
    },

    /** The run's counts, read from reconcile_marks and the audit log. */
    async summarizeReconcileRun(input: { runId: string }): Promise<ReconcileSummary> {
      const bitly = deps.vendors?.bitly ? await summarizeMarks(deps.sql, input.runId, 'bitly') : null;
      const [imported] = await deps.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM audit_log
        WHERE action = 'link.imported' AND reason = ${importReason(input.runId)}`;
      return {
        bitly: bitly ? { ...bitly, imported: imported?.n ?? 0 } : null,
        serving: deps.servingStore ? await summarizeMarks(deps.sql, input.runId, 'serving') : null,
        expiry: await summarizeMarks(deps.sql, input.runId, 'expiry'),
      };
    },

    /** Drops a finished run's scratch marks. */
    async forgetReconcileRun(input: { runId: string }): Promise<void> {
      await deleteMarks(deps.sql, input.runId);
    },
  };
}

/**
 * The back-halves a bitlink answers on our branded domain, as readers know them: its custom back-halves
 * (keyword overrides) when it has any, else its own random hash (a link made by hand in Bitly's UI on the
 * branded domain without a custom back-half is shared under that hash).
 */
export function getBackHalves(link: VendorLink, prefix: string): string[] {
  const onDomain = link.shortIds.filter((id) => id.startsWith(prefix));
  const keywords = onDomain.filter((id) => id !== link.vendorId);
  return (keywords.length > 0 ? keywords : onDomain).map((id) => id.slice(prefix.length));
}

/** How a serving record differs from Postgres, or null when it answers the same. */
function servingDrift(row: LinkRow, stored: ServingRecord | null): Drift | null {
  if (!stored) return 'missing';
  const expected = toServingRecord(row);
  const same =
    stored.url === expected.url &&
    stored.status === expected.status &&
    stored.safety === expected.safety &&
    stored.redirectStatus === expected.redirectStatus &&
    stored.expiresAt === expected.expiresAt &&
    stored.expiredUrl === expected.expiredUrl;
  return same ? null : 'stale';
}

function importReason(runId: string): string {
  return `import ${runId}`;
}
