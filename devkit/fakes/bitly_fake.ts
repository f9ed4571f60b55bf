// A real HTTP server that behaves like Bitly API v4 (VENDORS.md section 1), for tests and benchmarks.
// It holds bitlinks per group, keyword overrides unique per (domain, keyword) and case-sensitive, answers with
// Bitly's documented shapes and error envelope, and has switchable failure modes:
//   - a taken back-half answered with 409, or SILENTLY with a random back-half (200/201, wrong link);
//   - 429 and legacy 403 RATE_LIMIT_EXCEEDED rate limits (a per-minute limit, or scripted);
//   - 5xx, slow responses, hung requests (client timeouts), dropped connections, and answers lost after the
//     request took effect (the client cannot tell whether the link was made);
//   - PATCH of long_url refused by plan (402 UPGRADE_REQUIRED or 403 FORBIDDEN); keyword-on-create refused;
//   - the branded-domain monthly quota falling back to bit.ly links;
//   - more than N concurrent connections refused (Bitly allows 5 per IP).
// Inspection (links(), linkByKeyword(), requests) and seeding (seed(), setClicks(), seedDailyClicks()) are for
// tests; other helpers' reconciliation/import tests seed Bitly-only links with seed().
// Clicks (VENDORS.md 1.5): each bitlink holds clicks per UTC day (seedable, and counted by the fake's own
// redirects, `GET /<keyword or hash>` on the first domain) plus an undated total (setClicks). `/clicks` answers
// `{unit_reference, units, unit, link_clicks: [{date: "YYYY-MM-DDT00:00:00+0000", clicks}]}`, newest day first
// [obs: a client's sample result]; `/clicks/summary` answers `{unit_reference, total_clicks, units, unit}`. Only
// unit=day is modelled (other units are refused with 400 INVALID_ARG_UNIT, a deviation); bad `units` or
// `unit_reference` get 400 INVALID_ARG_UNITS / INVALID_ARG_UNIT_REFERENCE [infer: codes in Bitly's INVALID_ARG_*
// style]. Both are rate-limited like every other endpoint.
// Plan limits (VENDORS.md 1.3): `GET /v4/groups/{group_guid}` answers the Group with its `organization_guid`
// [spec: the v4 OpenAPI's Group schema], and `GET /v4/organizations/{organization_guid}/plan_limits` answers
// `{organization_guid, plan_limits: [{name, description, count, limit}], references}` from `planLimits`. The limit
// names Bitly uses are not in any source found; the fake uses `encodes`, `bsd_encodes` and `keyword_overrides`
// [infer: after the monthly codes MONTHLY_ENCODE_LIMIT_REACHED, MONTHLY_BSD_ENCODE_LIMIT_REACHED and
// KEYWORD_OVERRIDES_LIMIT_EXCEEDED], counted from this month's bitlinks of the group unless a count is given.
// `planLimits = null` (the default) answers 403 FORBIDDEN, as for a token that may not read its organization.
// The parts are in bitly/: the bitlink store, a route file per API group, the failure script, the HTTP
// transport, seeding and inspection; this class holds the switches and composes them.
import { randomBytes } from 'node:crypto';
import { BitlinkStore } from './bitly/bitlink_store.ts';
import { redirect } from './bitly/click_routes.ts';
import { FailureScript } from './bitly/failure_script.ts';
import {
  linkByKeyword,
  listLinks,
  type SeedBitlink,
  seedBitlink,
  seedDailyClicks,
  setClicks,
} from './bitly/inspection.ts';
import type { BitlyRouteContext } from './bitly/route_context.ts';
import { route } from './bitly/routes.ts';
import { BitlyTransport } from './bitly/transport.ts';
import type {
  BitlyFakeOptions,
  BitlyStats,
  FakeArrival,
  FakeBitlink,
  FakeChaos,
  FakeFailure,
  FakePlanLimit,
  FakeRequest,
} from './bitly/types.ts';

export type {
  BitlyFakeOptions,
  FakeBitlink,
  FakeChaos,
  FakeFailure,
  FakePlanLimit,
  FakeRequest,
} from './bitly/types.ts';

export class BitlyFake {
  readonly token: string;
  readonly groupGuid: string;
  readonly domains: string[];
  /** The organization our group belongs to (GET /v4/groups/{guid} names it). */
  readonly organizationGuid = 'Ofake0org';
  /** Every request answered (or dropped: status 0), in order. */
  readonly requests: FakeRequest[] = [];
  /** Every request as it arrives, before any delay or answer (to act while one is in flight); query `?…` or ''. */
  readonly arrivals: FakeArrival[] = [];

  /** What a taken keyword gets: a 409, or a silent random back-half (VENDORS.md 1.2, modes a and b). */
  takenKeyword: 'conflict' | 'silent-random' = 'conflict';
  /** The 409's `message` (no source shows the real one; VENDORS.md says make it configurable). */
  conflictMessage = 'ALREADY_EXISTS';
  /** Changing long_url with PATCH /v4/bitlinks: allowed, or refused by plan. */
  patchLongUrl: 'allowed' | 'upgrade-required' | 'forbidden' = 'allowed';
  /** `keyword` on POST /v4/bitlinks: allowed, or refused by plan (402). */
  keywordOnCreate: 'allowed' | 'upgrade-required' = 'allowed';
  /** Branded-link monthly quota used up: new links silently land on bit.ly instead of the BSD. */
  bsdQuotaFallback = false;
  /** Per-minute request limit (429 RATE_LIMIT_EXCEEDED beyond it); 0 = none. */
  perMinuteLimit = 0;
  /** How rate limits are answered: the current 429, or the legacy 403 with X-Ratelimit-Reason. */
  rateLimitStyle: '429' | '403' = '429';
  /** More than this many requests in flight are refused with 429; 0 = no limit. */
  maxConcurrent = 0;
  /** Added to every answer. */
  latencyMs = 0;
  /** The organization's plan limits; null: the plan_limits endpoint answers 403 FORBIDDEN. */
  planLimits: FakePlanLimit[] | null = null;
  readonly stats: BitlyStats = {
    concurrencyRejections: 0,
    rateLimited: 0,
    redirectsCharged: 0,
    redirectsServed: 0,
    silentRandom: 0,
    conflicts: 0,
    chaos: 0,
  };

  private readonly store = new BitlinkStore();
  private readonly failures = new FailureScript(this.stats);
  /** What the route handlers see: the store, our group, the switches above. */
  private readonly api: BitlyRouteContext;
  private readonly transport: BitlyTransport;

  constructor(options: BitlyFakeOptions = {}) {
    this.token = options.token ?? `fake-bitly-${randomBytes(8).toString('hex')}`;
    this.groupGuid = options.groupGuid ?? 'Bfake0group';
    this.domains = (options.domains ?? ['sho.rt']).map((d) => d.toLowerCase());
    const transport = new BitlyTransport({
      token: this.token,
      requests: this.requests,
      arrivals: this.arrivals,
      stats: this.stats,
      limits: this,
      nextFailure: (method, path) => this.failures.next(method, path),
      route: (method, path, query, body) => route(this.api, method, path, query, body),
      redirect: (res, method, path) => redirect(this.api, res, method, path),
    });
    this.transport = transport;
    this.api = {
      store: this.store,
      groupGuid: this.groupGuid,
      domains: this.domains,
      organizationGuid: this.organizationGuid,
      get baseUrl() {
        return transport.baseUrl;
      },
      switches: this,
      stats: this.stats,
      stealKeyword: () => this.failures.stealKeyword(),
    };
  }

  /** The base URL to give BITLY_API_BASE_URL (requests go to `<url>/v4/...`). */
  get url(): string {
    if (!this.transport.started) throw new Error('BitlyFake is not started');
    return this.transport.baseUrl;
  }

  /** Environment for parseConfig: Bitly enabled against this fake. */
  env(): Record<string, string> {
    return {
      BITLY_TOKEN: this.token,
      BITLY_DOMAIN: this.domains[0]!,
      BITLY_GROUP_GUID: this.groupGuid,
      BITLY_API_BASE_URL: this.url,
    };
  }

  async start(port = 0): Promise<this> {
    await this.transport.start(port);
    return this;
  }

  async stop(): Promise<void> {
    await this.transport.stop();
  }

  // ---- failure switches -------------------------------------------------------------------------

  /** Random failures in force (setChaos also seeds them). */
  get chaos(): FakeChaos | null {
    return this.failures.chaos;
  }

  set chaos(chaos: FakeChaos | null) {
    this.failures.chaos = chaos;
  }

  /** Scripts the next matching request(s). */
  failNext(failure: FakeFailure): void {
    this.failures.failNext(failure);
  }

  /** Injects random failures into `rate` of requests (seeded). */
  setChaos(chaos: FakeChaos | null): void {
    this.failures.setChaos(chaos);
  }

  /**
   * Someone else takes the next `n` keywords asked for: each is created in another group just before the
   * request is handled, so the request meets a taken back-half (answered per `takenKeyword`).
   */
  stealNextKeywords(n: number): void {
    this.failures.stealNextKeywords(n);
  }

  /** Clears links, scripted failures and switches (the server keeps running). */
  reset(): void {
    this.store.clear();
    this.failures.clear();
    this.requests.length = 0;
    this.arrivals.length = 0;
    this.takenKeyword = 'conflict';
    this.patchLongUrl = 'allowed';
    this.keywordOnCreate = 'allowed';
    this.bsdQuotaFallback = false;
    this.perMinuteLimit = 0;
    this.maxConcurrent = 0;
    this.latencyMs = 0;
    this.planLimits = null;
    for (const key of Object.keys(this.stats) as (keyof BitlyStats)[]) this.stats[key] = 0;
  }

  // ---- seeding and inspection -------------------------------------------------------------------

  /** Adds a link as if made in Bitly's UI (for reconciliation/import tests): a hash, plus `keyword` if given. */
  seed(link: SeedBitlink): FakeBitlink {
    return seedBitlink(this.store, { groupGuid: this.groupGuid, domain: this.domains[0]! }, link);
  }

  /** Adds clicks per UTC day (`{"2026-01-31": 4}`) to a link, by id or by a keyword on the first domain. */
  seedDailyClicks(idOrKeyword: string, perDay: Record<string, number>): void {
    seedDailyClicks(this.store, this.domains[0]!, idOrKeyword, perDay);
  }

  /** Sets the click counter of a link (by id, or by a keyword on the first domain). */
  setClicks(idOrKeyword: string, clicks: number): void {
    setClicks(this.store, this.domains[0]!, idOrKeyword, clicks);
  }

  /** Copies of the links the fake holds (default: our group's), oldest first. */
  listLinks(options: { group?: string | 'all' } = {}): FakeBitlink[] {
    return listLinks(this.store, options.group ?? this.groupGuid);
  }

  /** The link a keyword on `domain` (default: the first) reaches, or null. */
  linkByKeyword(keyword: string, domain = this.domains[0]!): FakeBitlink | null {
    return linkByKeyword(this.store, keyword, domain);
  }

  /** Requests whose method and path (after /v4) match. */
  requestsTo(method: string, pathPrefix: string): FakeRequest[] {
    return this.requests.filter((r) => r.method === method && r.path.startsWith(pathPrefix));
  }
}

/** Starts a Bitly fake on a free port. */
export async function startBitlyFake(options: BitlyFakeOptions = {}): Promise<BitlyFake> {
  return new BitlyFake(options).start();
}
