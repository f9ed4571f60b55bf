// The Bitly leg of reconciliation: every bitlink on each of our branded domains classified against Postgres (in
// sync, stale, a collision, or Bitly-only: imported) as the links of the short domain mapped to it (BITLY_DOMAIN for
// the default, BITLY_DOMAINS for the others; ADR 0073), then every active link Bitly was not seen holding.

import { syncToBitly } from '../propagation/sync_to_bitly.ts';
import { describeScanResult, nextSafetyVerdict } from '../safety/scan_result.ts';
import { forEachConcurrently } from '../shared/concurrency.ts';
import { TransientFailure } from '../shared/errors.ts';
import { DEFAULT_DOMAIN, linkKey } from '../shared/link_key.ts';
import type { TaskContext } from '../shared/task_context.ts';
import { throwIfCancelled } from '../shared/task_context.ts';
import { findCodeWindowEnd, getVendorTargetRowsByCodes, listVendorLinks } from '../stores/link_store.ts';
import {
  analyzeMarks,
  type Drift,
  insertMarks,
  listUnseenActiveCodes,
  UNSEEN_WINDOW,
  updateMarksRepaired,
} from '../stores/reconcile_store.ts';
import type { BitlyProvider } from '../vendors/bitly.ts';
import { BITLY_DISCARDED_TAG, BITLY_OWN_TAG } from '../vendors/bitly.ts';
import { recordVendorCollision } from '../vendors/record_vendor_collision.ts';
import { ProviderError, type VendorLink } from '../vendors/short_link_provider.ts';
import { toVendorTarget } from '../vendors/vendor_target.ts';
import { importProblem, importVendorLink, toImportTarget } from './import_vendor_link.ts';
import {
  importReason,
  POSTGRES_CHUNK,
  type ReconcileDeps,
  type ReconcileStepInput,
  type ReconcileStepResult,
} from './reconcile_run.ts';

/** Bitly's page size for the group listing (its maximum is 100). */
const BITLY_PAGE_SIZE = 100;
/** Repairs (each a few vendor calls) in flight at once; Bitly allows 5 connections per IP. */
const REPAIR_CONCURRENCY = 4;
/** Transient vendor failures a single repair waits out before it is left to the next run. */
const REPAIR_ATTEMPTS = 4;
/**
 * Windows of links Bitly holds every one of that one call of the missing pass walks before it returns to the
 * workflow (a million links, a few seconds at 10,000,000 links): the run's progress shows even where Bitly
 * lacks nothing.
 */
const EMPTY_WINDOWS_PER_CALL = 50;

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

/** Runs the sync of one link inline, waiting out transient vendor failures a few times. */
async function syncInline(
  deps: ReconcileDeps,
  code: string,
  context: TaskContext,
  heartbeat: () => void,
): Promise<'synced' | 'collision' | 'failed'> {
  // The sync's own keep-alive heartbeats must carry the reconciliation's position, not erase it.
  const inner: TaskContext = { ...context, heartbeat };
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await syncToBitly(deps, { code }, inner);
      if (result.outcome === 'mismatch') {
        await recordVendorCollision(deps, { code, vendor: 'bitly', detail: result.detail });
        return 'collision';
      }
      return result.outcome === 'synced' || result.outcome === 'skipped' ? 'synced' : 'failed';
    } catch (error) {
      if (!(error instanceof TransientFailure) || attempt >= REPAIR_ATTEMPTS) {
        deps.logger.warn({ code, err: (error as Error).message }, 'reconciliation could not repair a link');
        return 'failed';
      }
      await context.sleep(Math.min(error.retryAfterMs ?? 1_000, 30_000));
    }
  }
}

async function repairAll(
  deps: ReconcileDeps,
  runId: string,
  codes: string[],
  context: TaskContext,
  heartbeat: () => void,
): Promise<void> {
  const repaired: string[] = [];
  await forEachConcurrently(codes, REPAIR_CONCURRENCY, async (code) => {
    heartbeat();
    if ((await syncInline(deps, code, context, heartbeat)) === 'synced') repaired.push(code);
  });
  await updateMarksRepaired(deps.sql, runId, 'bitly', repaired);
}

/** A bitlink made this recently may be a create still in flight. */
const STRAY_GRACE_MS = 10 * 60_000;

function isRecent(link: VendorLink): boolean {
  const created = link.createdAt
    ? Date.parse(link.createdAt.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'))
    : Number.NaN;
  return Number.isFinite(created) && Date.now() - created < STRAY_GRACE_MS;
}

/** Archives strays (and tags them discarded, so no later run or importer mistakes them for links). */
async function archiveStrays(
  deps: ReconcileDeps,
  input: ReconcileStepInput,
  strays: { link: VendorLink; codes: string[] }[],
  heartbeat: () => void,
  bitly: BitlyProvider,
): Promise<void> {
  const archived: string[] = [];
  await forEachConcurrently(strays, REPAIR_CONCURRENCY, async ({ link, codes }) => {
    heartbeat();
    for (let attempt = 1; attempt <= REPAIR_ATTEMPTS; attempt++) {
      try {
        await bitly.discard(link.vendorId);
        deps.logger.warn({ vendorId: link.vendorId, codes }, 'archived a stray bitlink of ours');
        archived.push(...codes);
        return;
      } catch (error) {
        if (!(error instanceof ProviderError && error.retryable) || attempt === REPAIR_ATTEMPTS) {
          deps.logger.error({ err: error, vendorId: link.vendorId }, 'could not archive a stray bitlink');
          return;
        }
        await new Promise((r) => setTimeout(r, Math.min(error.details.retryAfterMs ?? 1_000, 30_000)));
      }
    }
  });
  await updateMarksRepaired(deps.sql, input.runId, 'bitly', archived);
}

/** Imports Bitly-only links (scanned first, like any new destination) and warms the serving store. */
async function importLinks(
  deps: ReconcileDeps,
  input: ReconcileStepInput,
  links: { code: string; link: VendorLink }[],
): Promise<{ codes: string[]; blocked: string[] }> {
  const results = await deps.safety.scanMany(links.map((l) => toImportTarget(l.link.longUrl)));
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

/** One Bitly domain of ours and the short domain it answers for (its stored name, '' for the default). */
export interface BitlyLeg {
  domain: string;
  bitly: BitlyProvider;
}

/**
 * Every Bitly domain reconciliation reads, the default short domain's first (BITLY_DOMAIN), then each other short
 * domain's (BITLY_DOMAINS, in a stable order): a short domain without one keeps its links off Bitly.
 */
export function listBitlyLegs(vendors: ReconcileDeps['vendors']): BitlyLeg[] {
  if (!vendors?.bitly) return [];
  const others = [...(vendors.bitlyByDomain ?? new Map<string, BitlyProvider>())]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([domain, bitly]) => ({ domain, bitly }));
  return [{ domain: DEFAULT_DOMAIN, bitly: vendors.bitly }, ...others];
}

/**
 * The Bitly phase's cursor names the leg it is on: the default's is Bitly's own paging token, as it always was
 * (a run started before several legs resumes unchanged); another leg's is `#<leg>:<token>`.
 */
function parseLegCursor(cursor: string | null): { leg: number; cursor: string | null } {
  const m = cursor ? /^#(\d+):(.*)$/s.exec(cursor) : null;
  if (!m) return { leg: 0, cursor };
  return { leg: Number(m[1]), cursor: m[2] === '' ? null : m[2]! };
}

function legCursor(leg: number, cursor: string | null): string | null {
  return leg === 0 ? cursor : `#${leg}:${cursor ?? ''}`;
}

/** Classifies one page of a Bitly domain's links against its short domain's links; repairs and imports when asked. */
async function reconcileBitlyLinks(
  deps: ReconcileDeps,
  input: ReconcileStepInput,
  links: VendorLink[],
  context: TaskContext,
  heartbeat: () => void,
  leg: BitlyLeg,
): Promise<{ otherDomain: number }> {
  const { bitly } = leg;
  const prefix = `${bitly.domain}/`;
  /** `code` is the link's key on its short domain; `backHalf` the code Bitly holds. */
  const entries: { code: string; backHalf: string; link: VendorLink }[] = [];
  let otherDomain = 0;
  for (const link of links) {
    // A bitlink Bitly made with the wrong back-half was archived and tagged by the sync: never a link of ours.
    if (link.tags.includes(BITLY_DISCARDED_TAG)) continue;
    const codes = getBackHalves(link, prefix);
    if (codes.length === 0) otherDomain++;
    for (const code of codes) entries.push({ code: linkKey(leg.domain, code), backHalf: code, link });
  }
  const codes = entries.map((e) => e.code);
  const rows = await getVendorTargetRowsByCodes(deps.sql, codes);
  const mappings = new Map(
    (await listVendorLinks(deps.sql, codes)).filter((v) => v.vendor === 'bitly').map((v) => [v.code, v]),
  );
  const settings = { ...deps.vendors!.redirect, shortBaseUrl: deps.vendors!.shortBaseUrl };
  const marks: { code: string; drift: Drift | null }[] = [];
  const inSync: string[] = [];
  const toRepair: string[] = [];
  const toImport: { code: string; link: VendorLink }[] = [];
  const strays = new Map<string, { link: VendorLink; codes: string[] }>();
  for (const { code, backHalf, link } of entries) {
    const row = rows.get(code);
    if (!row && link.tags.includes(BITLY_OWN_TAG)) {
      // Made by us (tagged at creation) yet holding no code of ours: a stray of a create whose answer was lost
      // or that Bitly gave a random back-half. Never imported; archived. A very recent one may be a create
      // still in flight (the two-step path adds its keyword in a second call): left to the next run.
      if (isRecent(link)) continue;
      marks.push({ code, drift: 'stray' });
      const entry = strays.get(link.vendorId) ?? { link, codes: [] };
      entry.codes.push(code);
      strays.set(link.vendorId, entry);
      continue;
    }
    if (!row) {
      const problem = importProblem(backHalf, link.longUrl, deps.targetPolicy);
      marks.push({ code, drift: problem ? 'unimportable' : 'extra' });
      if (problem)
        deps.logger.warn({ code, vendorId: link.vendorId, problem }, 'a Bitly-only link cannot be imported');
      else toImport.push({ code, link });
      continue;
    }
    // A pending link is being published; its publish workflow places it on Bitly.
    if (row.status === 'pending') {
      marks.push({ code, drift: null });
      continue;
    }
    const target = toVendorTarget(row, settings, Date.now());
    const marked = mappings.get(code);
    if (marked?.state === 'inhouse' && deps.vendors!.archiveLinksInHouse) {
      // An archive link kept off Bitly, yet Bitly answers its code: fine when it answers ours (nothing of ours
      // to keep in step), a collision when it sends readers elsewhere.
      const answersOurs = link.group === bitly.groupGuid && link.longUrl === target.longUrl;
      marks.push({ code, drift: answersOurs ? null : 'collision' });
      continue;
    }
    // Turned off since: an in-house-only link is one Bitly was never asked for.
    const mapping = marked?.state === 'inhouse' ? undefined : marked;
    const ours =
      link.group === bitly.groupGuid &&
      (link.longUrl === target.longUrl || (mapping !== undefined && mapping.state !== 'collision'));
    if (!ours) {
      marks.push({ code, drift: 'collision' });
      if (input.repair && mapping?.state !== 'collision') {
        await recordVendorCollision(deps, {
          code,
          vendor: 'bitly',
          detail: `our back-half ${bitly.domain}/${backHalf} is held by ${link.vendorId} (found by reconciliation)`,
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
  const marked = new Set(await insertMarks(deps.sql, input.runId, 'bitly', marks));
  // A page processed again after a crash finds what the first attempt repaired in sync. Only codes marked before
  // can be such: on a first pass this is no statement (it was a probe of the marks' index per bitlink).
  await updateMarksRepaired(
    deps.sql,
    input.runId,
    'bitly',
    inSync.filter((code) => marked.has(code)),
  );
  if (input.repair && strays.size > 0)
    await archiveStrays(deps, input, [...strays.values()], heartbeat, bitly);
  if (input.repair) await repairAll(deps, input.runId, toRepair, context, heartbeat);
  if (input.repair && input.importExtra && toImport.length > 0) {
    const imported = await importLinks(deps, input, toImport);
    await updateMarksRepaired(deps.sql, input.runId, 'bitly', imported.codes);
    // A blocked import is now ours to answer 451 for; the Bitly copy must stop redirecting too.
    await repairAll(deps, input.runId, imported.blocked, context, heartbeat);
  }
  return { otherDomain };
}

/**
 * Pages through the group's bitlinks from `position.cursor` (Bitly's own paging token), classifying each link
 * on our branded domain against Postgres: in sync, stale, a collision, or Bitly-only (extra: imported).
 * Heartbeats the Bitly cursor after every page, so a retry resumes at that page.
 */
export async function reconcileBitlyPages(
  deps: ReconcileDeps,
  input: ReconcileStepInput,
  context: TaskContext,
): Promise<ReconcileStepResult> {
  const legs = listBitlyLegs(deps.vendors);
  if (legs.length === 0) return { position: { phase: 'missing', cursor: '' }, read: 0 };
  const resumed = context.resumed as { cursor: string | null; read: number } | undefined;
  // The position (and the heartbeat) carry the leg: `#<leg>:<token>` past the default's (parseLegCursor).
  let { leg, cursor } = parseLegCursor(resumed?.cursor ?? input.position.cursor);
  let read = resumed?.read ?? 0;
  const beat = () => context.heartbeat({ cursor: legCursor(leg, cursor), read });
  for (let pages = 0; pages < input.budget; pages++) {
    throwIfCancelled(context);
    const current = legs[leg];
    if (!current) return { position: { phase: 'missing', cursor: '' }, read };
    const page = await current.bitly.listLinks({ cursor, size: BITLY_PAGE_SIZE, archived: 'both' });
    await reconcileBitlyLinks(deps, input, page.links, context, beat, current);
    read += page.links.length;
    cursor = page.nextCursor;
    if (!cursor) {
      // This Bitly domain is done: the next one from its first page, or the pass over Postgres.
      leg++;
      cursor = null;
      if (leg >= legs.length) {
        beat();
        return { position: { phase: 'missing', cursor: '' }, read };
      }
    }
    beat();
  }
  return { position: { phase: 'bitly', cursor: legCursor(leg, cursor) }, read };
}

/**
 * Active links Bitly was not seen holding (after the Bitly pass): marked `missing` and, when repairing,
 * created there through the same sync the per-link workflow runs. Pages by code, heartbeating.
 */
export async function reconcileMissingOnBitly(
  deps: ReconcileDeps,
  input: ReconcileStepInput,
  context: TaskContext,
): Promise<ReconcileStepResult> {
  if (!deps.vendors?.bitly) return { position: { phase: 'serving', cursor: '' }, read: 0 };
  const resumed = context.resumed as { cursor: string; read: number } | undefined;
  let cursor = resumed?.cursor ?? input.position.cursor ?? '';
  let read = resumed?.read ?? 0;
  const beat = () => context.heartbeat({ cursor, read });
  // The marks table was just filled: the planner's estimate of a window's marks is what lets it hash them (a
  // window's worth fits work_mem many times over), so it gets fresh statistics first.
  await analyzeMarks(deps.sql);
  let emptyWindows = 0;
  while (read < input.budget && emptyWindows < EMPTY_WINDOWS_PER_CALL) {
    // One statement per window (null: the window reaches the last link); its links are then taken in chunks.
    const through = await findCodeWindowEnd(deps.sql, cursor, UNSEEN_WINDOW);
    const unseen = await listUnseenActiveCodes(deps.sql, {
      runId: input.runId,
      startedAt: new Date(input.startedAtMs),
      cursor,
      through,
      skipInhouseOnly: deps.vendors.archiveLinksInHouse === true,
      // Every short domain with a Bitly domain of its own (their Bitly pages were read above).
      domains: listBitlyLegs(deps.vendors).map((l) => l.domain),
    });
    if (unseen.length === 0) emptyWindows++;
    let done = 0;
    while (done < unseen.length && read < input.budget) {
      const codes = unseen.slice(done, done + Math.min(POSTGRES_CHUNK, input.budget - read));
      done += codes.length;
      await insertMarks(
        deps.sql,
        input.runId,
        'bitly',
        codes.map((code) => ({ code, drift: 'missing' as const })),
      );
      if (input.repair) await repairAll(deps, input.runId, codes, context, beat);
      read += codes.length;
      // Only now past the chunk: repairAll heartbeats the cursor, and a retry must redo the chunk's repairs
      // (the window is read again from here; a link marked missing is still unseen).
      cursor = codes.at(-1)!;
      beat();
    }
    // The budget ran out inside the window: the next call reads it again from the last chunk done.
    if (done < unseen.length) break;
    if (through === null) return { position: { phase: 'serving', cursor: '' }, read };
    // On past the window, whose every link Bitly was lacking is marked.
    cursor = through;
    beat();
  }
  return { position: { phase: 'missing', cursor }, read };
}
