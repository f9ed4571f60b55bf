// The resolver's first rung: each process's LRU of records, its "no such code" LRU, the lookups in flight, the
// records it may still serve past their TTL while one refresh runs, and the target rule a record passes to enter.
import { LRUCache } from 'lru-cache';
import { DEFAULT_DOMAIN, keyCode, keyDomain } from '../shared/link_key.ts';
import type { Logger } from '../shared/logger.ts';
import { type CanonicalTargetPolicy, targetRuleProblem } from '../targets/target_rule.ts';
import type { LookupTallies } from './lookup_tallies.ts';
import { routingRulesProblem, type ServingRecord } from './serving_record.ts';

/**
 * "No such code" answers kept at most, in their own LRU beside the records': a flood of unknown codes churns
 * this one and never evicts real links (each entry lives RESOLVER_NEGATIVE_TTL_MS anyway).
 */
export const NEGATIVE_CACHE_MAX = 10_000;

/** How stale the LRU's clock may be at most (see ttlResolution below). */
const LRU_TTL_RESOLUTION_MS = 1_000;

/** "No such code", cached for negativeTtlMs in the negative LRU. */
const NOT_FOUND = Object.freeze({ notFound: true as const });

/**
 * A promise that never settles: a flight's placeholder until its lookup has started. Nothing may wait on it (a
 * reaction on it is never released: whatever it reaches stays alive for good).
 */
export const NEVER = new Promise<never>(() => {});

/** One lookup in flight for a code; `stale` is set when the code changed meanwhile (do not cache its answer). */
export interface Flight {
  promise: Promise<ServingRecord | null>;
  stale: boolean;
}

/**
 * Keys the flight table holds before it is rebuilt with only the flights still running: a bound on what it keeps
 * for codes whose lookups landed (a key with no flight is a few dozen bytes).
 */
export const FLIGHT_KEYS_MAX = 16_384;

/**
 * The lookups in flight by link key (docs/adr/0108-flight-table-keeps-its-keys.md). A landed lookup's key stays,
 * with no flight, so a code looked up again finds its slot and nothing is added or removed. A Map that gains a key
 * per miss and loses it when it lands is rebuilt every few dozen lookups, and V8 links each old table to the next:
 * once one such table was promoted, every later table and each lookup it held (with the request behind it)
 * survived the young collections and was promoted too (220 bytes a request on the serving-store path, a full
 * collection every 1.3 s under the web tier's heap cap). Past FLIGHT_KEYS_MAX keys the table starts again with
 * the flights still running.
 */
export class FlightTable {
  private map = new Map<string, Flight | undefined>();

  get(key: string): Flight | undefined {
    return this.map.get(key);
  }

  has(key: string): boolean {
    return this.map.get(key) !== undefined;
  }

  set(key: string, flight: Flight): void {
    if (this.map.size >= FLIGHT_KEYS_MAX && !this.map.has(key)) this.rebuild();
    this.map.set(key, flight);
  }

  /** No flight for `key` (its slot is kept for the next lookup of the same code). */
  delete(key: string): void {
    if (this.map.get(key) !== undefined) this.map.set(key, undefined);
  }

  /** The flights running now. */
  values(): Flight[] {
    const running: Flight[] = [];
    for (const flight of this.map.values()) if (flight !== undefined) running.push(flight);
    return running;
  }

  clear(): void {
    this.map = new Map();
  }

  /** Keys held (with or without a flight): for tests of the bound. */
  get keys(): number {
    return this.map.size;
  }

  private rebuild(): void {
    const running = new Map<string, Flight | undefined>();
    for (const [key, flight] of this.map) if (flight !== undefined) running.set(key, flight);
    this.map = running;
  }
}

/** LRU entries (0: no LRU) and their TTL; TTL of "no such code" entries (0: none kept). */
export interface ResolverCacheOptions {
  cacheMax: number;
  /**
   * The estimated bytes (estimateRecordBytes) the records' LRUs of every short domain hold together at most
   * (RESOLVER_CACHE_MAX_BYTES): one budget for the process, beside the `cacheMax` entries per domain. 0 or absent:
   * entries only.
   */
  cacheMaxBytes?: number;
  cacheTtlMs: number;
  negativeTtlMs: number;
  /**
   * How long past cacheTtlMs a servable record may still be answered while one refresh of it runs
   * (RESOLVER_STALE_MAX_MS; 0 or absent: never, an entry past its TTL is a miss as before).
   */
  staleMaxMs?: number;
  /**
   * The clock (epoch ms) of the TTLs, the stale window and `expiresAt`; absent: the runtime's. A test moves its
   * own instead of sleeping; it is then read on every check (the LRU's clock is otherwise reused ≤ 1 s).
   */
  now?: () => number;
}

/**
 * What a record costs the heap while the LRU holds it, estimated: the record, its strings, the LRU's slot, and
 * what the answerer keeps beside it for as long as the record lives (the memoised answers for a request with and
 * without a query, their header objects and lists, the click cell: lib/redirect/answer_redirect.ts). Fitted to
 * `npx tsx bench/redirect/lru_entry_bytes.ts` (ADR 0085): 919 B measured for the bench's 58-character target,
 * 1,065 B for a 200-character one (the answers' Location is the record's own string), 1,206 B with UTM values
 * (each answer then holds a Location of its own). A link with routing rules memoises up to 64 variants' answers:
 * counted as eight. Computed once, when the record enters the LRU (lru-cache's sizeCalculation, on the miss
 * path), never on a hit.
 */
export function estimateRecordBytes(record: ServingRecord): number {
  let bytes = RECORD_BASE_BYTES + record.code.length + record.url.length;
  if (record.expiredUrl !== null) bytes += record.expiredUrl.length;
  if (record.fallbackUrl !== undefined) bytes += record.fallbackUrl.length;
  const utm = record.utm;
  if (utm !== undefined) {
    const utmChars = (utm.campaign?.length ?? 0) + (utm.source?.length ?? 0) + (utm.medium?.length ?? 0);
    bytes += UTM_BYTES + 2 * (record.url.length + utmChars);
  }
  if (record.rules !== undefined) {
    for (const rule of record.rules) bytes += RULE_BYTES + rule.target.length + rule.values.length * 24;
    bytes += ROUTED_VARIANTS_COUNTED * (ANSWER_BYTES + record.url.length);
  }
  return bytes;
}
/** estimateRecordBytes's constants (bench/redirect/lru_entry_bytes.ts). */
const RECORD_BASE_BYTES = 860;
const UTM_BYTES = 130;
const RULE_BYTES = 120;
const ANSWER_BYTES = 250;
const ROUTED_VARIANTS_COUNTED = 8;

/** One short domain's LRUs (createResolverCache). */
interface DomainCache {
  lru: LRUCache<string, ServingRecord> | undefined;
  negative: LRUCache<string, typeof NOT_FOUND> | undefined;
}

/** What the rungs and the composition use of the cache (createResolverCache). */
export interface ResolverCache {
  /** An LRU is kept (cacheMax > 0): its misses are counted. */
  readonly enabled: boolean;
  /** Lookups in flight by link key: concurrent misses for one link share one. */
  readonly flights: FlightTable;
  /**
   * The default short domain's LRU answer for a code, counted as a hit or negative hit; undefined when it has none
   * (not counted).
   */
  peek(code: string): ServingRecord | null | undefined;
  /** peek for a link's key on any short domain (lib/shared/link_key.ts). */
  peekKey(key: string): ServingRecord | null | undefined;
  /** peek bound to one short domain's LRUs (its stored domain, '' the default), for an answerer to pick by Host. */
  peekerFor(domain: string): (code: string) => ServingRecord | null | undefined;
  /** Records past their TTL may be served while they are refreshed (staleMaxMs > 0 and an LRU is kept). */
  readonly staleOn: boolean;
  /**
   * After a peek that missed: the LRU's record for `code` if it may be served stale — past its TTL by at most
   * staleMaxMs, and servable-active (isServableActive) — else undefined. Not counted.
   */
  staleRecord(code: string): ServingRecord | undefined;
  /** A lookup landed with `record`: out of `flights`, and cached unless the code changed meanwhile. */
  remember(code: string, flight: Flight, record: ServingRecord | null): void;
  /** A lookup failed: out of `flights` (nothing cached). */
  forget(code: string, flight: Flight): void;
  /** Forgets `code` (it changed): its entries, and any lookup in flight is not cached when it lands. */
  drop(code: string): void;
  /** drop() for every code (after a missed-message window on the bus). */
  clear(): void;
  /** Entries in the LRUs now (records and "no such code" answers). */
  entries(): number;
  /** Estimated bytes of the records held now (estimateRecordBytes; 0 when RESOLVER_CACHE_MAX_BYTES is off). */
  bytes(): number;
  /** True when the LRU holds at least one live record. */
  hasLiveRecords(): boolean;
}

/**
 * Decides what this process answers without asking anyone: an LRU hit (a record or a remembered "no such
 * code"), and which answers of the rungs below are kept, for how long, and when they are dropped. `peek` is the
 * redirect's LRU-hit path (the Node fast path calls it through resolver.peek): a `get` on the LRU and a tally,
 * no promise, no allocation.
 */
export function createResolverCache(options: ResolverCacheOptions, counted: LookupTallies): ResolverCache {
  const staleMaxMs = options.cacheMax > 0 ? (options.staleMaxMs ?? 0) : 0;
  const maxBytes = options.cacheMax > 0 ? (options.cacheMaxBytes ?? 0) : 0;
  // Each domain's LRU is bounded by the whole budget on its own (lru-cache evicts its least recently used records
  // past it); with several domains, remember() keeps their sum within it too (trimToBudget).
  const bySize =
    maxBytes > 0
      ? {
          maxSize: maxBytes,
          sizeCalculation: estimateRecordBytes as (record: ServingRecord) => number,
        }
      : undefined;
  const now = options.now ?? Date.now;
  // An injected clock replaces the LRUs' own (performance.now) and is read on every check.
  const clock = options.now ? { perf: { now: options.now }, ttlResolution: 0 } : undefined;
  /** One short domain's LRUs, keyed by the bare code: its records and its "no such code" answers. */
  function createDomainCache(): DomainCache {
    return {
      lru:
        options.cacheMax > 0
          ? new LRUCache<string, ServingRecord>({
              max: options.cacheMax,
              ttl: options.cacheTtlMs,
              // The clock read for staleness is reused for this long (default 1 ms: a clock read and a new timer
              // every millisecond under load); a record may so live up to this much past its TTL.
              ttlResolution: Math.min(
                LRU_TTL_RESOLUTION_MS,
                Math.max(1, Math.floor(options.cacheTtlMs / 100)),
              ),
              // With a stale window, a `get` past the TTL still misses (the fresh hit path is unchanged) but
              // leaves the entry where staleRecord finds it; a refresh or an invalidation replaces or removes it.
              noDeleteOnStaleGet: staleMaxMs > 0,
              ...bySize,
              ...clock,
            })
          : undefined,
      negative:
        options.cacheMax > 0 && options.negativeTtlMs > 0
          ? new LRUCache<string, typeof NOT_FOUND>({
              max: Math.min(options.cacheMax, NEGATIVE_CACHE_MAX),
              ttl: options.negativeTtlMs,
              ...clock,
            })
          : undefined,
    };
  }
  // The default short domain's LRUs, keyed by the code, which is its links' key: its hit path is what it was.
  const home = createDomainCache();
  const { lru, negative } = home;
  // Every other short domain's, made when first asked for (ADR 0078): a hit there is a `get` by the bare code on
  // an LRU the answerer picked once by Host, never a key built per request.
  const away = new Map<string, DomainCache>();

  function domainCache(domain: string): DomainCache {
    let cache = away.get(domain);
    if (cache === undefined) {
      cache = createDomainCache();
      away.set(domain, cache);
    }
    return cache;
  }

  /** The LRUs a key's records live in and the code they are kept under there; undefined for a domain not seen. */
  function cacheOfKey(key: string): DomainCache | undefined {
    const domain = keyDomain(key);
    return domain === DEFAULT_DOMAIN ? home : away.get(domain);
  }
  const flights = new FlightTable();

  /**
   * A lookup landed with `record`: no longer in flight, and cached unless the code changed meanwhile (a stale
   * flight was already taken out of `flights` by drop or clear, and another may stand there now).
   */
  function remember(key: string, flight: Flight, record: ServingRecord | null) {
    if (flight.stale) return;
    flights.delete(key);
    // Landed: the flight lets go of its promise (and the request its reactions reach), whatever still holds it.
    flight.promise = NEVER;
    const cache = keyDomain(key) === DEFAULT_DOMAIN ? home : domainCache(keyDomain(key));
    const code = keyCode(key);
    if (record === null) {
      // The link is gone: a record of it kept past its TTL must never be served stale again.
      cache.lru?.delete(code);
      cache.negative?.set(code, NOT_FOUND);
    } else {
      cache.lru?.set(code, record);
      if (bySize !== undefined && away.size > 0) trimToBudget();
    }
  }

  /** Estimated bytes the records' LRUs of every domain hold now. */
  function heldBytes(): number {
    let n = lru?.calculatedSize ?? 0;
    for (const cache of away.values()) n += cache.lru?.calculatedSize ?? 0;
    return n;
  }

  /**
   * Several domains' LRUs over the one budget: the least recently used record of the domain holding the most
   * goes, until the sum fits (each LRU alone never passes the budget). A few domains, on the miss path only.
   */
  function trimToBudget() {
    for (let held = heldBytes(); held > maxBytes; held = heldBytes()) {
      let largest = home;
      for (const cache of away.values())
        if ((cache.lru?.calculatedSize ?? 0) > (largest.lru?.calculatedSize ?? 0)) largest = cache;
      if (largest.lru === undefined || largest.lru.pop() === undefined) return;
    }
  }

  /** A lookup failed: no longer in flight (nothing cached). */
  function forget(code: string, flight: Flight) {
    if (!flight.stale) flights.delete(code);
    flight.promise = NEVER;
  }

  function drop(key: string) {
    const cache = cacheOfKey(key);
    const code = keyCode(key);
    cache?.lru?.delete(code);
    cache?.negative?.delete(code);
    const flight = flights.get(key);
    if (flight) {
      flight.stale = true;
      flights.delete(key);
    }
  }

  function clear() {
    lru?.clear();
    negative?.clear();
    for (const cache of away.values()) {
      cache.lru?.clear();
      cache.negative?.clear();
    }
    for (const flight of flights.values()) flight.stale = true;
    flights.clear();
  }

  /** The LRU's answer, counted as a hit or negative hit; undefined when it has none (not counted). */
  function peek(code: string): ServingRecord | null | undefined {
    const cached = lru?.get(code);
    if (cached !== undefined) {
      counted.lru.hit.n++;
      return cached;
    }
    if (negative?.get(code) === undefined) return undefined;
    counted.lru.negative.n++;
    return null;
  }

  /** peek for another short domain's LRUs (peekerFor). */
  function peekIn(cache: DomainCache, code: string): ServingRecord | null | undefined {
    const cached = cache.lru?.get(code);
    if (cached !== undefined) {
      counted.lru.hit.n++;
      return cached;
    }
    if (cache.negative?.get(code) === undefined) return undefined;
    counted.lru.negative.n++;
    return null;
  }

  function peekKey(key: string): ServingRecord | null | undefined {
    if (keyDomain(key) === DEFAULT_DOMAIN) return peek(key);
    const cache = away.get(keyDomain(key));
    return cache === undefined ? undefined : peekIn(cache, keyCode(key));
  }

  function staleRecord(key: string): ServingRecord | undefined {
    if (staleMaxMs === 0) return undefined;
    // `ttl` is what is left of the entry's TTL on the clock now (negative once past it); info() keeps the
    // entry, stale or not.
    const entry = cacheOfKey(key)?.lru?.info(keyCode(key));
    if (entry === undefined || entry.ttl === undefined || entry.ttl < -staleMaxMs) return undefined;
    return isServableActive(entry.value, now()) ? entry.value : undefined;
  }

  return {
    enabled: lru !== undefined,
    flights,
    peek,
    peekKey,
    peekerFor(domain) {
      if (domain === DEFAULT_DOMAIN) return peek;
      const cache = domainCache(domain);
      return (code) => peekIn(cache, code);
    },
    staleOn: staleMaxMs > 0,
    staleRecord,
    remember,
    forget,
    drop,
    clear,
    entries() {
      let n = 0;
      for (const cache of [home, ...away.values()]) n += (cache.lru?.size ?? 0) + (cache.negative?.size ?? 0);
      return n;
    },
    bytes: heldBytes,
    hasLiveRecords() {
      // values() skips expired entries (most recently used first, so a warm cache answers at the first one);
      // "no such code" answers live in their own LRU, so any entry here is a record.
      for (const cache of [home, ...away.values()])
        if (cache.lru) for (const _entry of cache.lru.values()) return true;
      return false;
    },
  };
}

/**
 * True for a record the redirect would send a reader on with: an active link, not blocked by the scanner, not
 * past its `expiresAt` at `nowMs`. Only such records are served stale: a deleted, blocked, expired or pending
 * link (a tampered stand-in is pending) is looked up again once its TTL is over, whatever the lookup costs.
 */
export function isServableActive(record: ServingRecord, nowMs: number): boolean {
  return (
    record.status === 'active' &&
    record.safety !== 'blocked' &&
    (record.expiresAt === null || record.expiresAt > nowMs)
  );
}

/** A record as it may enter the LRU, or undefined when it breaks the target rule (createRecordAdmission). */
export type Admit = (record: ServingRecord, layer: 'serving_store' | 'postgres') => ServingRecord | undefined;

/** Why a record's routing rules break the rule list's shape or a rule target the target rule, or null. */
function rulesProblem(
  rules: NonNullable<ServingRecord['rules']>,
  policy: CanonicalTargetPolicy,
): string | null {
  const shape = routingRulesProblem(rules);
  if (shape !== null) return shape;
  for (const rule of rules) {
    const problem = targetRuleProblem(rule.target, policy);
    if (problem !== null) return problem;
  }
  return null;
}

/**
 * Decides which records may enter the LRU: a record from the serving store or Postgres whose target, fallback or
 * routing rule target breaks the one target rule (lib/targets/target_rule.ts) never redirects. Checked once per LRU fill, never on
 * an LRU hit. Without a policy (tests of the ladder alone) every record is admitted.
 */
export function createRecordAdmission(
  policy: CanonicalTargetPolicy | undefined,
  counted: LookupTallies,
  logger: Logger | undefined,
): Admit {
  /**
   * A record from `layer` as it may enter the LRU: itself when its target (and fallback) obey the target rule,
   * else undefined, counted and logged at error level with an `alert` field (a stored target that breaks the
   * rule was written around every way in, or the rule tightened since). Once per LRU fill, not per request.
   */
  // The archived copy is on the Internet Archive, never an allowed target host: its canonical form and "not our
  // short domain" are what it is held to.
  const fallbackPolicy = policy ? { ...policy, allowedHosts: [] } : undefined;
  return function admit(record, layer) {
    if (!policy) return record;
    const problem =
      targetRuleProblem(record.url, policy) ??
      (record.expiredUrl === null ? null : targetRuleProblem(record.expiredUrl, policy)) ??
      (record.fallbackUrl === undefined ? null : targetRuleProblem(record.fallbackUrl, fallbackPolicy!)) ??
      (record.rules === undefined ? null : rulesProblem(record.rules, policy));
    if (problem === null) return record;
    counted[layer].tampered.n++;
    logger?.error(
      { alert: 'tampered_target', code: record.code, layer, version: record.version, problem },
      'a stored link target breaks the target rule; the code answers 404 until it is fixed',
    );
    return undefined;
  };
}
