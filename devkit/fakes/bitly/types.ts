// The Bitly fake's shapes: what tests seed, script and inspect, and what its parts share.

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

/** A request as it arrives, before any delay or answer; query `?…` or ''. */
export interface FakeArrival {
  method: string;
  path: string;
  at: number;
  query: string;
}

/** What the fake counted, for tests to assert on. */
export interface BitlyStats {
  concurrencyRejections: number;
  rateLimited: number;
  redirectsCharged: number;
  redirectsServed: number;
  silentRandom: number;
  conflicts: number;
  chaos: number;
}

/** How Bitly's own rules answer (the plan and collision switches a test sets on the fake). */
export interface VendorSwitches {
  takenKeyword: 'conflict' | 'silent-random';
  conflictMessage: string;
  patchLongUrl: 'allowed' | 'upgrade-required' | 'forbidden';
  keywordOnCreate: 'allowed' | 'upgrade-required';
  bsdQuotaFallback: boolean;
  planLimits: FakePlanLimit[] | null;
}

/** How the transport throttles and slows requests (switches a test sets on the fake). */
export interface TransportLimits {
  perMinuteLimit: number;
  rateLimitStyle: '429' | '403';
  maxConcurrent: number;
  latencyMs: number;
}
