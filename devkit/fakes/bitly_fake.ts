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
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A bitlink as the fake holds it. */
export interface FakeBitlink {
  /** `domain/hash`, no scheme: Bitly's id. */
  id: string;
  domain: string;
  hash: string;
  /** Keyword overrides (custom back-halves) on `domain` that point here, case-sensitive. */
  keywords: string[];
  longUrl: string;
  archived: boolean;
  group: string;
  title: string | null;
  tags: string[];
  createdAt: string;
  /** Clicks with no day (setClicks): counted in all-time totals only. */
  clicks: number;
  /** Clicks per UTC day (`YYYY-MM-DD`), seeded or counted by the fake's redirects. */
  dailyClicks: Record<string, number>;
  /** Creation order, for newest-first paging. */
  seq: number;
}

/** One scripted answer for the next matching request(s). */
export interface FakeFailure {
  method?: string;
  /** Matches the path after /v4 (a prefix string or a RegExp). */
  path?: string | RegExp;
  /** How many matching requests it applies to (default 1). */
  times?: number;
  /** Answer with this status and body (Bitly's envelope is filled in from `message` when body is absent). */
  status?: number;
  message?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long first (then answer normally, or with `status`). */
  delayMs?: number;
  /** Never answer (the client times out); the socket is closed at stop(). */
  hang?: boolean;
  /** Destroy the connection without answering. */
  drop?: boolean;
  /** Handle the request (its effects happen) but lose the answer: the client sees a dropped connection. */
  lose?: boolean;
}

/** Random failures injected into a share of requests (seeded, so a run can be replayed). */
export interface FakeChaos {
  /** Share of requests (0..1) that fail. */
  rate: number;
  kinds: ('5xx' | '429' | '403-rate' | 'timeout' | 'drop' | 'slow')[];
  seed?: number;
  /** Delay of a 'slow' answer (default 300 ms). */
  slowMs?: number;
  /** Only requests whose path (after /v4) starts with this. */
  pathPrefix?: string;
}

/** One of the organization's plan limits (VENDORS.md 1.3); `count` absent: counted from this month's bitlinks. */
export interface FakePlanLimit {
  name: string;
  description: string;
  limit: number;
  count?: number;
}

export interface BitlyFakeOptions {
  token?: string;
  /** Our group (its links are what `links()` returns by default). */
  groupGuid?: string;
  /** Branded short domains the group may use. */
  domains?: string[];
}

export interface FakeRequest {
  method: string;
  path: string;
  /** 0 when the request was never answered (hung or dropped). */
  status: number;
  body: unknown;
  /** When it arrived (epoch ms). */
  at: number;
}

const BITLY_DEFAULT_DOMAIN = 'bit.ly';
const KEYWORD = /^[A-Za-z0-9_-]+$/;

/** Bitly's timestamp style: `2020-01-02T23:51:47+0000`. */
function bitlyTime(date = new Date()): string {
  return `${date.toISOString().slice(0, 19)}+0000`;
}

/** mulberry32: a tiny seeded PRNG, so chaos runs can be reproduced. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class HttpAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

function bitlyError(status: number, message: string, description: string, extra: object = {}): HttpAnswer {
  return new HttpAnswer(status, { message, resource: 'bitlinks', description, ...extra });
}

export class BitlyFake {
  readonly token: string;
  readonly groupGuid: string;
  readonly domains: string[];
  /** The organization our group belongs to (GET /v4/groups/{guid} names it). */
  readonly organizationGuid = 'Ofake0org';
  /** Every request answered (or dropped: status 0), in order. */
  readonly requests: FakeRequest[] = [];
  /** Every request as it arrives, before any delay or answer (to act while one is in flight); query `?…` or ''. */
  readonly arrivals: { method: string; path: string; at: number; query: string }[] = [];

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
  chaos: FakeChaos | null = null;
  /** The organization's plan limits; null: the plan_limits endpoint answers 403 FORBIDDEN. */
  planLimits: FakePlanLimit[] | null = null;

  private server: Server | null = null;
  private baseUrl = '';
  private readonly links = new Map<string, FakeBitlink>();
  /** `domain/keyword` → bitlink id. */
  private readonly keywordIndex = new Map<string, string>();
  private failures: FakeFailure[] = [];
  private keywordsToSteal = 0;
  private seq = 0;
  private inFlight = 0;
  private minuteWindow = { startedAt: 0, count: 0 };
  private random: () => number = Math.random;
  private readonly sockets = new Set<Socket>();
  private readonly hung: ServerResponse[] = [];
  readonly stats = {
    concurrencyRejections: 0,
    rateLimited: 0,
    redirectsCharged: 0,
    redirectsServed: 0,
    silentRandom: 0,
    conflicts: 0,
    chaos: 0,
  };

  constructor(options: BitlyFakeOptions = {}) {
    this.token = options.token ?? `fake-bitly-${randomBytes(8).toString('hex')}`;
    this.groupGuid = options.groupGuid ?? 'Bfake0group';
    this.domains = (options.domains ?? ['sho.rt']).map((d) => d.toLowerCase());
  }

  /** The base URL to give BITLY_API_BASE_URL (requests go to `<url>/v4/...`). */
  get url(): string {
    if (!this.server) throw new Error('BitlyFake is not started');
    return this.baseUrl;
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
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.hung.splice(0)) res.destroy();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  // ---- failure switches -------------------------------------------------------------------------

  /** Scripts the next matching request(s). */
  failNext(failure: FakeFailure): void {
    this.failures.push({ times: 1, ...failure });
  }

  /** Injects random failures into `rate` of requests (seeded). */
  setChaos(chaos: FakeChaos | null): void {
    this.chaos = chaos;
    this.random = chaos?.seed !== undefined ? seededRandom(chaos.seed) : Math.random;
  }

  /**
   * Someone else takes the next `n` keywords asked for: each is created in another group just before the
   * request is handled, so the request meets a taken back-half (answered per `takenKeyword`).
   */
  stealNextKeywords(n: number): void {
    this.keywordsToSteal += n;
  }

  /** Clears links, scripted failures and switches (the server keeps running). */
  reset(): void {
    this.links.clear();
    this.keywordIndex.clear();
    this.failures = [];
    this.keywordsToSteal = 0;
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
    this.setChaos(null);
    for (const key of Object.keys(this.stats) as (keyof typeof this.stats)[]) this.stats[key] = 0;
  }

  // ---- seeding and inspection -------------------------------------------------------------------

  /** Adds a link as if made in Bitly's UI (for reconciliation/import tests): a hash, plus `keyword` if given. */
  seed(link: {
    longUrl: string;
    keyword?: string;
    domain?: string;
    group?: string;
    archived?: boolean;
    title?: string;
    tags?: string[];
    clicks?: number;
    createdAt?: Date;
  }): FakeBitlink {
    const domain = (link.domain ?? this.domains[0]!).toLowerCase();
    if (link.keyword && this.keywordIndex.has(`${domain}/${link.keyword}`)) {
      throw new Error(`keyword ${domain}/${link.keyword} is already taken`);
    }
    const made = this.insert({
      domain,
      longUrl: link.longUrl,
      group: link.group ?? this.groupGuid,
      title: link.title ?? null,
      tags: link.tags ?? [],
      ...(link.createdAt ? { createdAt: link.createdAt } : {}),
    });
    made.archived = link.archived ?? false;
    made.clicks = link.clicks ?? 0;
    if (link.keyword) this.addKeyword(made, link.keyword);
    return { ...made, keywords: [...made.keywords], dailyClicks: { ...made.dailyClicks } };
  }

  /** Adds clicks per UTC day (`{"2026-01-31": 4}`) to a link, by id or by a keyword on the first domain. */
  seedDailyClicks(idOrKeyword: string, perDay: Record<string, number>): void {
    const link = this.lookup(idOrKeyword) ?? this.lookup(`${this.domains[0]}/${idOrKeyword}`);
    if (!link) throw new Error(`no bitlink ${idOrKeyword}`);
    for (const [day, clicks] of Object.entries(perDay)) {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new Error(`not a day: ${day}`);
      link.dailyClicks[day] = (link.dailyClicks[day] ?? 0) + clicks;
    }
  }

  /** Sets the click counter of a link (by id, or by a keyword on the first domain). */
  setClicks(idOrKeyword: string, clicks: number): void {
    const link = this.lookup(idOrKeyword) ?? this.lookup(`${this.domains[0]}/${idOrKeyword}`);
    if (!link) throw new Error(`no bitlink ${idOrKeyword}`);
    link.clicks = clicks;
  }

  /** Copies of the links the fake holds (default: our group's), oldest first. */
  listLinks(options: { group?: string | 'all' } = {}): FakeBitlink[] {
    const group = options.group ?? this.groupGuid;
    return [...this.links.values()]
      .filter((l) => group === 'all' || l.group === group)
      .sort((a, b) => a.seq - b.seq)
      .map((l) => ({
        ...l,
        keywords: [...l.keywords],
        tags: [...l.tags],
        dailyClicks: { ...l.dailyClicks },
      }));
  }

  /** The link a keyword on `domain` (default: the first) reaches, or null. */
  linkByKeyword(keyword: string, domain = this.domains[0]!): FakeBitlink | null {
    const id = this.keywordIndex.get(`${domain.toLowerCase()}/${keyword}`);
    const link = id ? this.links.get(id) : undefined;
    return link
      ? { ...link, keywords: [...link.keywords], tags: [...link.tags], dailyClicks: { ...link.dailyClicks } }
      : null;
  }

  /** Requests whose method and path (after /v4) match. */
  requestsTo(method: string, pathPrefix: string): FakeRequest[] {
    return this.requests.filter((r) => r.method === method && r.path.startsWith(pathPrefix));
  }

  // ---- the model --------------------------------------------------------------------------------

  private newHash(domain: string): string {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    for (;;) {
      let hash = '';
      for (const b of randomBytes(7)) hash += alphabet[b % alphabet.length];
      if (!this.links.has(`${domain}/${hash}`) && !this.keywordIndex.has(`${domain}/${hash}`)) return hash;
    }
  }

  private insert(input: {
    domain: string;
    longUrl: string;
    group: string;
    title: string | null;
    tags: string[];
    createdAt?: Date;
  }): FakeBitlink {
    const hash = this.newHash(input.domain);
    const link: FakeBitlink = {
      id: `${input.domain}/${hash}`,
      domain: input.domain,
      hash,
      keywords: [],
      longUrl: input.longUrl,
      archived: false,
      group: input.group,
      title: input.title,
      tags: input.tags,
      createdAt: bitlyTime(input.createdAt),
      clicks: 0,
      dailyClicks: {},
      seq: ++this.seq,
    };
    this.links.set(link.id, link);
    return link;
  }

  private addKeyword(link: FakeBitlink, keyword: string): void {
    link.keywords.push(keyword);
    this.keywordIndex.set(`${link.domain}/${keyword}`, link.id);
  }

  /** A bitlink by `domain/hash` or by `domain/keyword`. */
  private lookup(id: string): FakeBitlink | undefined {
    const direct = this.links.get(id);
    if (direct) return direct;
    const viaKeyword = this.keywordIndex.get(id);
    return viaKeyword ? this.links.get(viaKeyword) : undefined;
  }

  private toBody(link: FakeBitlink) {
    return {
      references: { group: `${this.baseUrl}/v4/groups/${link.group}` },
      link: `https://${link.id}`,
      id: link.id,
      long_url: link.longUrl,
      title: link.title,
      archived: link.archived,
      created_at: link.createdAt,
      created_by: 'lifeline-fake',
      client_id: 'fake-client',
      custom_bitlinks: link.keywords.map((k) => `https://${link.domain}/${k}`),
      tags: link.tags,
      launchpad_ids: [],
      deeplinks: [],
    };
  }

  private toCustomBody(domain: string, keyword: string, link: FakeBitlink) {
    return {
      custom_bitlink: `https://${domain}/${keyword}`,
      bitlink: this.toBody(link),
      bitlink_history: [
        {
          hash: link.hash,
          keyword,
          created: link.createdAt,
          group_guid: link.group,
          is_active: true,
          long_url: link.longUrl,
          bsd: domain,
          login: 'lifeline-fake',
        },
      ],
    };
  }

  private validLongUrl(value: unknown): value is string {
    if (typeof value !== 'string') return false;
    try {
      const u = new URL(value);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }

  private badLongUrl(): HttpAnswer {
    return bitlyError(400, 'INVALID_ARG_LONG_URL', 'The value provided is invalid.', {
      errors: [{ field: 'long_url', error_code: 'invalid' }],
    });
  }

  private resolveDomain(requested: unknown): string | HttpAnswer {
    const domain = typeof requested === 'string' ? requested.toLowerCase() : BITLY_DEFAULT_DOMAIN;
    if (domain !== BITLY_DEFAULT_DOMAIN && !this.domains.includes(domain)) {
      return bitlyError(400, 'INVALID_ARG_DOMAIN', 'The value provided is invalid.', {
        errors: [{ field: 'domain', error_code: 'invalid' }],
      });
    }
    // The monthly branded-link quota is used up: Bitly silently makes bit.ly links instead.
    return this.bsdQuotaFallback && domain !== BITLY_DEFAULT_DOMAIN ? BITLY_DEFAULT_DOMAIN : domain;
  }

  /** Makes the keyword taken by a link of another group, when the test asked for that. */
  private maybeSteal(domain: string, keyword: string): void {
    if (this.keywordsToSteal <= 0 || this.keywordIndex.has(`${domain}/${keyword}`)) return;
    this.keywordsToSteal--;
    const theirs = this.insert({
      domain,
      longUrl: `https://elsewhere.example/${keyword}`,
      group: 'Bsomeone0else',
      title: null,
      tags: [],
    });
    this.addKeyword(theirs, keyword);
  }

  /** POST /v4/shorten and POST /v4/bitlinks: 201 new, 200 the group's existing link for the URL. */
  private shorten(body: Record<string, unknown>, full: boolean): HttpAnswer {
    if (!this.validLongUrl(body.long_url)) return this.badLongUrl();
    const domain = this.resolveDomain(body.domain);
    if (domain instanceof HttpAnswer) return domain;
    const group = typeof body.group_guid === 'string' ? body.group_guid : this.groupGuid;
    if (group !== this.groupGuid) {
      return bitlyError(403, 'FORBIDDEN', 'You are currently forbidden to access this resource.');
    }
    const keyword = full && typeof body.keyword === 'string' ? body.keyword : undefined;
    if (keyword !== undefined) {
      if (this.keywordOnCreate === 'upgrade-required') {
        return bitlyError(402, 'UPGRADE_REQUIRED', 'Custom back-halves need an upgraded plan.');
      }
      if (!KEYWORD.test(keyword)) {
        return bitlyError(400, 'INVALID_ARG_KEYWORD', 'The value provided is invalid.', {
          errors: [{ field: 'keyword', error_code: 'invalid' }],
        });
      }
      this.maybeSteal(domain, keyword);
    }
    const taken = keyword !== undefined && this.keywordIndex.has(`${domain}/${keyword}`);
    if (taken && this.takenKeyword === 'conflict') {
      this.stats.conflicts++;
      return bitlyError(
        409,
        this.conflictMessage,
        'The custom back-half is already being used by another link.',
      );
    }
    const force = body.force_new_link === true;
    if (!force && keyword === undefined) {
      const existing = [...this.links.values()].find(
        (l) => l.group === group && l.domain === domain && l.longUrl === body.long_url && !l.archived,
      );
      if (existing) return new HttpAnswer(200, this.toBody(existing));
    }
    const link = this.insert({
      domain,
      longUrl: body.long_url,
      group,
      title: typeof body.title === 'string' ? body.title : null,
      tags: Array.isArray(body.tags) ? body.tags.filter((t): t is string => typeof t === 'string') : [],
    });
    if (keyword !== undefined) {
      // Taken: the silent mode still shortens, with the random hash only ("OVERRIDE_ALREADY_EXISTS").
      if (taken) this.stats.silentRandom++;
      else this.addKeyword(link, keyword);
    }
    return new HttpAnswer(201, this.toBody(link));
  }

  private addCustom(body: Record<string, unknown>): HttpAnswer {
    const custom =
      typeof body.custom_bitlink === 'string' ? body.custom_bitlink.replace(/^https?:\/\//, '') : '';
    const [domain = '', keyword = ''] = custom.split('/');
    const link = typeof body.bitlink_id === 'string' ? this.lookup(body.bitlink_id) : undefined;
    if (!link) return bitlyError(404, 'NOT_FOUND', 'What you are looking for cannot be found.');
    if (!this.domains.includes(domain.toLowerCase()) || !KEYWORD.test(keyword)) {
      return bitlyError(400, 'INVALID_ARG_BITLINK', 'The value provided is invalid.');
    }
    const d = domain.toLowerCase();
    this.maybeSteal(d, keyword);
    if (this.keywordIndex.has(`${d}/${keyword}`)) {
      if (this.takenKeyword === 'conflict') {
        this.stats.conflicts++;
        return bitlyError(
          409,
          this.conflictMessage,
          'The custom back-half is already being used by another link.',
        );
      }
      this.stats.silentRandom++;
      const random = this.newHash(d);
      this.addKeyword(link, random);
      return new HttpAnswer(200, this.toCustomBody(d, random, link));
    }
    this.addKeyword(link, keyword);
    return new HttpAnswer(200, this.toCustomBody(d, keyword, link));
  }

  private moveCustom(custom: string, body: Record<string, unknown>): HttpAnswer {
    const [domain = '', keyword = ''] = custom.split('/');
    const key = `${domain.toLowerCase()}/${keyword}`;
    const fromId = this.keywordIndex.get(key);
    const to = typeof body.bitlink_id === 'string' ? this.lookup(body.bitlink_id) : undefined;
    if (!fromId || !to) return bitlyError(404, 'NOT_FOUND', 'What you are looking for cannot be found.');
    const from = this.links.get(fromId)!;
    from.keywords = from.keywords.filter((k) => k !== keyword);
    to.keywords.push(keyword);
    this.keywordIndex.set(key, to.id);
    return new HttpAnswer(200, this.toCustomBody(domain.toLowerCase(), keyword, to));
  }

  private patchBitlink(link: FakeBitlink, body: Record<string, unknown>): HttpAnswer {
    if (body.long_url !== undefined && body.long_url !== link.longUrl) {
      if (this.patchLongUrl === 'upgrade-required') {
        return bitlyError(402, 'UPGRADE_REQUIRED', 'Editing the destination needs an upgraded plan.');
      }
      if (this.patchLongUrl === 'forbidden') {
        return bitlyError(403, 'FORBIDDEN', 'You are currently forbidden to access this resource.');
      }
      if (!this.validLongUrl(body.long_url)) return this.badLongUrl();
      link.longUrl = body.long_url;
      this.stats.redirectsCharged++;
    }
    if (typeof body.archived === 'boolean') link.archived = body.archived;
    if (typeof body.title === 'string') link.title = body.title;
    if (Array.isArray(body.tags)) link.tags = body.tags.filter((t): t is string => typeof t === 'string');
    return new HttpAnswer(200, this.toBody(link));
  }

  private listGroup(group: string, query: URLSearchParams): HttpAnswer {
    if (group !== this.groupGuid)
      return bitlyError(403, 'FORBIDDEN', 'You are currently forbidden to access this resource.');
    const size = Math.min(Math.max(Number(query.get('size') ?? 50) || 50, 1), 100);
    const archived = query.get('archived') ?? 'off';
    const createdAfter = Number(query.get('created_after') ?? 0) * 1000;
    const all = [...this.links.values()]
      .filter((l) => l.group === group)
      .filter((l) => !createdAfter || Date.parse(l.createdAt.replace('+0000', 'Z')) >= createdAfter)
      .filter((l) => archived === 'both' || (archived === 'on' ? l.archived : !l.archived))
      .sort((a, b) => b.seq - a.seq);
    let start = 0;
    const after = query.get('search_after');
    if (after) {
      const seq = Number(Buffer.from(after, 'base64url').toString('utf8'));
      start = all.findIndex((l) => l.seq < seq);
      if (start < 0) start = all.length;
    } else if (query.get('page')) {
      start = (Math.max(Number(query.get('page')) || 1, 1) - 1) * size;
    }
    const page = all.slice(start, start + size);
    const more = start + size < all.length;
    const pageNo = Math.floor(start / size) + 1;
    const last = page.at(-1);
    const nextUrl = new URL(`${this.baseUrl}/v4/groups/${group}/bitlinks`);
    nextUrl.searchParams.set('page', String(pageNo + 1));
    nextUrl.searchParams.set('size', String(size));
    return new HttpAnswer(200, {
      links: page.map((l) => this.toBody(l)),
      pagination: {
        prev: '',
        next: more ? nextUrl.toString() : '',
        size,
        page: pageNo,
        total: all.length,
        search_after: more && last ? Buffer.from(String(last.seq)).toString('base64url') : '',
      },
    });
  }

  private route(
    method: string,
    path: string,
    query: URLSearchParams,
    body: Record<string, unknown>,
  ): HttpAnswer {
    if (method === 'POST' && path === '/shorten') return this.shorten(body, false);
    if (method === 'POST' && path === '/bitlinks') return this.shorten(body, true);
    if (method === 'POST' && path === '/custom_bitlinks') return this.addCustom(body);
    if (method === 'POST' && path === '/expand') {
      const link = typeof body.bitlink_id === 'string' ? this.lookup(body.bitlink_id) : undefined;
      if (!link) return bitlyError(404, 'NOT_FOUND', 'What you are looking for cannot be found.');
      return new HttpAnswer(200, {
        long_url: link.longUrl,
        created_at: link.createdAt,
        link: `https://${link.id}`,
        id: link.id,
      });
    }
    let m = /^\/custom_bitlinks\/([^/]+\/[^/]+)$/.exec(path);
    if (m) {
      const custom = decodeURIComponent(m[1]!);
      if (method === 'PATCH') return this.moveCustom(custom, body);
      const [domain = '', keyword = ''] = custom.split('/');
      const link = this.lookup(`${domain.toLowerCase()}/${keyword}`);
      if (method === 'GET' && link && link.keywords.includes(keyword)) {
        return new HttpAnswer(200, this.toCustomBody(domain.toLowerCase(), keyword, link));
      }
      return bitlyError(404, 'NOT_FOUND', 'What you are looking for cannot be found.');
    }
    m = /^\/groups\/([^/]+)\/bitlinks$/.exec(path);
    if (m && method === 'GET') return this.listGroup(decodeURIComponent(m[1]!), query);
    m = /^\/groups\/([^/]+)$/.exec(path);
    if (m && method === 'GET') return this.getGroup(decodeURIComponent(m[1]!));
    m = /^\/organizations\/([^/]+)\/plan_limits$/.exec(path);
    if (m && method === 'GET') return this.getPlanLimits(decodeURIComponent(m[1]!));
    m = /^\/bitlinks\/([^/]+\/[^/]+?)(\/clicks\/summary|\/clicks)?$/.exec(path);
    if (m) {
      const link = this.lookup(decodeURIComponent(m[1]!));
      if (!link || (link.group !== this.groupGuid && method !== 'GET')) {
        return bitlyError(404, 'NOT_FOUND', 'What you are looking for cannot be found.');
      }
      if (m[2] && method === 'GET') return this.clicks(link, m[2] === '/clicks/summary', query);
      if (!m[2] && method === 'GET') return new HttpAnswer(200, this.toBody(link));
      if (!m[2] && method === 'PATCH') return this.patchBitlink(link, body);
    }
    return bitlyError(404, 'NOT_FOUND', 'What you are looking for cannot be found.');
  }

  /** GET /v4/groups/{group_guid}: the Group (OpenAPI schema `Group`). */
  private getGroup(group: string): HttpAnswer {
    if (group !== this.groupGuid)
      return bitlyError(403, 'FORBIDDEN', 'You are currently forbidden to access this resource.');
    return new HttpAnswer(200, {
      references: { organization: `${this.baseUrl}/v4/organizations/${this.organizationGuid}` },
      guid: this.groupGuid,
      name: 'Newsroom',
      organization_guid: this.organizationGuid,
      bsds: this.domains,
      is_active: true,
      role: 'org-admin',
      created: bitlyTime(new Date(0)),
      modified: bitlyTime(new Date(0)),
    });
  }

  /** GET /v4/organizations/{organization_guid}/plan_limits, counting this month's bitlinks of our group. */
  private getPlanLimits(organization: string): HttpAnswer {
    if (organization !== this.organizationGuid || this.planLimits === null)
      return bitlyError(403, 'FORBIDDEN', 'You are currently forbidden to access this resource.');
    const month = new Date().toISOString().slice(0, 7);
    const made = [...this.links.values()].filter(
      (l) => l.group === this.groupGuid && l.createdAt.slice(0, 7) === month,
    );
    const counted: Record<string, number> = {
      encodes: made.length,
      bsd_encodes: made.filter((l) => l.domain !== BITLY_DEFAULT_DOMAIN).length,
      keyword_overrides: made.reduce((n, l) => n + l.keywords.length, 0),
    };
    return new HttpAnswer(200, {
      organization_guid: organization,
      plan_limits: this.planLimits.map((p) => ({
        name: p.name,
        description: p.description,
        count: p.count ?? counted[p.name] ?? 0,
        limit: p.limit,
      })),
      references: {},
    });
  }

  /** GET /v4/bitlinks/{bitlink}/clicks and /clicks/summary, for unit=day. */
  private clicks(link: FakeBitlink, summary: boolean, query: URLSearchParams): HttpAnswer {
    const unit = query.get('unit') ?? 'day';
    if (unit !== 'day') {
      return bitlyError(
        400,
        'INVALID_ARG_UNIT',
        'The value provided is invalid (the fake models unit=day only).',
      );
    }
    const units = Number(query.get('units') ?? -1);
    if (!Number.isInteger(units) || units === 0 || units < -1) {
      return bitlyError(400, 'INVALID_ARG_UNITS', 'The value provided is invalid.');
    }
    const referenceText = query.get('unit_reference');
    const reference = referenceText
      ? new Date(referenceText.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'))
      : new Date();
    if (Number.isNaN(reference.getTime())) {
      return bitlyError(400, 'INVALID_ARG_UNIT_REFERENCE', 'The value provided is invalid.');
    }
    const lastDay = reference.toISOString().slice(0, 10);
    const firstDay =
      units > 0
        ? new Date(Date.parse(lastDay) - (units - 1) * 86_400_000).toISOString().slice(0, 10)
        : [link.createdAt.slice(0, 10), ...Object.keys(link.dailyClicks)].sort()[0]!;
    const days: string[] = [];
    for (let t = Date.parse(lastDay); t >= Date.parse(firstDay); t -= 86_400_000) {
      days.push(new Date(t).toISOString().slice(0, 10));
    }
    const unitReference = bitlyTime(reference);
    if (summary) {
      const dated = days.reduce((sum, day) => sum + (link.dailyClicks[day] ?? 0), 0);
      return new HttpAnswer(200, {
        unit_reference: unitReference,
        total_clicks: dated + (units === -1 ? link.clicks : 0),
        units,
        unit,
      });
    }
    return new HttpAnswer(200, {
      unit_reference: unitReference,
      units,
      unit,
      link_clicks: days.map((day) => ({ date: `${day}T00:00:00+0000`, clicks: link.dailyClicks[day] ?? 0 })),
    });
  }

  /** GET/HEAD /<keyword or hash> on the first domain: the short link itself, counted on today's UTC day. */
  private redirect(res: ServerResponse, method: string, path: string): void {
    const backHalf = decodeURIComponent(path.slice(1));
    const link = KEYWORD.test(backHalf) ? this.lookup(`${this.domains[0]}/${backHalf}`) : undefined;
    if (!link || (method !== 'GET' && method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('Not Found');
      return;
    }
    const today = new Date().toISOString().slice(0, 10);
    link.dailyClicks[today] = (link.dailyClicks[today] ?? 0) + 1;
    this.stats.redirectsServed++;
    res.writeHead(301, { Location: link.longUrl, 'Content-Length': 0 });
    res.end();
  }

  // ---- transport --------------------------------------------------------------------------------

  private takeFailure(method: string, path: string): FakeFailure | null {
    const index = this.failures.findIndex(
      (f) =>
        (f.method === undefined || f.method === method) &&
        (f.path === undefined || (typeof f.path === 'string' ? path.startsWith(f.path) : f.path.test(path))),
    );
    if (index < 0) return null;
    const failure = this.failures[index]!;
    failure.times = (failure.times ?? 1) - 1;
    if (failure.times <= 0) this.failures.splice(index, 1);
    return failure;
  }

  private chaosFailure(path: string): FakeFailure | null {
    const chaos = this.chaos;
    if (!chaos || chaos.kinds.length === 0) return null;
    if (chaos.pathPrefix && !path.startsWith(chaos.pathPrefix)) return null;
    if (this.random() >= chaos.rate) return null;
    this.stats.chaos++;
    const kind = chaos.kinds[Math.floor(this.random() * chaos.kinds.length)]!;
    switch (kind) {
      case '5xx':
        return this.random() < 0.5
          ? { status: 500, message: 'INTERNAL_ERROR' }
          : { status: 503, message: 'TEMPORARILY_UNAVAILABLE' };
      case '429':
        return { status: 429, message: 'RATE_LIMIT_EXCEEDED' };
      case '403-rate':
        return { status: 403, message: 'RATE_LIMIT_EXCEEDED', headers: { 'X-Ratelimit-Reason': 'hourly' } };
      case 'timeout':
        return { hang: true };
      case 'drop':
        return { drop: true };
      case 'slow':
        return { delayMs: chaos.slowMs ?? 300 };
    }
  }

  private send(res: ServerResponse, method: string, path: string, answer: HttpAnswer, requestBody: unknown) {
    this.requests.push({ method, path, status: answer.status, body: requestBody, at: Date.now() });
    const payload = JSON.stringify(answer.body);
    res.writeHead(answer.status, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(payload),
      ...answer.headers,
    });
    res.end(payload);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.inFlight++;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const url = new URL(req.url ?? '/', 'http://fake');
      const method = req.method ?? 'GET';
      const path = url.pathname.replace(/^\/v4(?=\/)/, '');
      this.arrivals.push({ method, path, at: Date.now(), query: url.search });
      let body: Record<string, unknown> = {};
      const raw = Buffer.concat(chunks).toString('utf8');
      if (raw) {
        try {
          body = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          this.send(res, method, path, bitlyError(400, 'INVALID_BODY', 'The request body is not JSON.'), raw);
          return;
        }
      }
      if (/^\/[^/]+$/.test(url.pathname)) {
        this.redirect(res, method, url.pathname);
        return;
      }
      if (!url.pathname.startsWith('/v4/')) {
        this.send(
          res,
          method,
          path,
          bitlyError(404, 'NOT_FOUND', 'What you are looking for cannot be found.'),
          body,
        );
        return;
      }
      if (req.headers.authorization !== `Bearer ${this.token}`) {
        this.send(
          res,
          method,
          path,
          bitlyError(403, 'FORBIDDEN', 'You are currently forbidden to access this resource.'),
          body,
        );
        return;
      }
      if (this.maxConcurrent > 0 && this.inFlight > this.maxConcurrent) {
        this.stats.concurrencyRejections++;
        this.send(
          res,
          method,
          path,
          new HttpAnswer(429, {
            message: 'RATE_LIMIT_EXCEEDED',
            resource: 'bitlinks',
            description: 'Too many concurrent connections.',
          }),
          body,
        );
        return;
      }
      if (this.perMinuteLimit > 0) {
        const now = Date.now();
        if (now - this.minuteWindow.startedAt >= 60_000) this.minuteWindow = { startedAt: now, count: 0 };
        if (++this.minuteWindow.count > this.perMinuteLimit) {
          this.stats.rateLimited++;
          const answer =
            this.rateLimitStyle === '429'
              ? new HttpAnswer(429, {
                  message: 'RATE_LIMIT_EXCEEDED',
                  resource: 'bitlinks',
                  description: 'You have exceeded your rate limit.',
                })
              : bitlyError(403, 'RATE_LIMIT_EXCEEDED', 'You have exceeded your rate limit.');
          if (this.rateLimitStyle === '403')
            (answer.headers as Record<string, string>)['X-Ratelimit-Reason'] = 'minute';
          this.send(res, method, path, answer, body);
          return;
        }
      }
      const failure = this.takeFailure(method, path) ?? this.chaosFailure(path);
      const delay = (failure?.delayMs ?? 0) + this.latencyMs;
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      if (failure?.hang) {
        this.requests.push({ method, path, status: 0, body, at: Date.now() });
        this.hung.push(res);
        return;
      }
      if (failure?.drop) {
        this.requests.push({ method, path, status: 0, body, at: Date.now() });
        req.socket.destroy();
        return;
      }
      if (failure?.status) {
        const answer = new HttpAnswer(
          failure.status,
          failure.body ?? {
            message: failure.message ?? 'INTERNAL_ERROR',
            resource: 'bitlinks',
            description: 'Injected failure.',
          },
          failure.headers ?? {},
        );
        this.send(res, method, path, answer, body);
        return;
      }
      const answer = this.route(method, path, url.searchParams, body);
      if (failure?.lose) {
        this.requests.push({ method, path, status: 0, body, at: Date.now() });
        req.socket.destroy();
        return;
      }
      this.send(res, method, path, answer, body);
    } catch (error) {
      if (!res.headersSent) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({ message: 'INTERNAL_ERROR', resource: 'bitlinks', description: String(error) }),
        );
      }
    } finally {
      this.inFlight--;
    }
  }
}

/** Starts a Bitly fake on a free port. */
export async function startBitlyFake(options: BitlyFakeOptions = {}): Promise<BitlyFake> {
  return new BitlyFake(options).start();
}
