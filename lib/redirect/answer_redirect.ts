// THE HOT PATH (DESIGN.md, "The redirect hot path"): a short-host request for a code, answered from the
// resolver ladder and the redirect policy, its click counted in memory. Runtime-neutral: the Node fast path
// (server/node_server.ts) writes the answer straight to the socket; the Hono route (routes/redirect.tsx, used
// by Deno and everything else) turns it into a Response. Pages are rendered by the caller's `pages`.

import { clickKindOf, countryOf, readAgent, referrerHostOf } from '../clicks/classify_click.ts';
import type { ClickCell, ClickRecorder } from '../clicks/click_buffer.ts';
import { isPossibleCode } from '../codes/code_rules.ts';
import { type Metrics, type Tally, tally } from '../shared/metrics.ts';
import type { LinkResolver } from './link_resolver.ts';
import { type LinkPreview, toLinkPreview } from './preview.ts';
import {
  isHttpsBase,
  publicPageHeaders,
  REDIRECT_REFERRER_POLICY,
  STRICT_TRANSPORT_SECURITY,
} from './public_headers.ts';
import {
  decideRedirect,
  decideRoutedRedirect,
  QR_MARKER,
  type RedirectDecision,
  type RedirectSettings,
} from './redirect_policy.ts';
import { readRouteVariant, routeNeeds, routeVariantKey, varyFor } from './route_choice.ts';
import { isTamperedRecord, type ServingRecord } from './serving_record.ts';
import { createShortDomainHosts, type ServedDomain } from './short_domain_hosts.ts';

/** One short-host request as the hot path needs it, independent of the runtime and framework serving it. */
export interface RedirectRequest {
  method: string;
  /**
   * The single path segment after `/` (a real code is plain ASCII, so decoding never matters); a trailing
   * `+` asks for the preview page.
   */
  code: string;
  /** The raw query string without `?` ('' when none). */
  query: string;
  /** A request header by its lower-case name (callers always pass one). */
  header(name: string): string | undefined;
}

/** The answer as plain data: the Hono route turns it into a Response, the Node fast path writes it directly. */
export interface RedirectAnswer {
  status: number;
  headers: Record<string, string>;
  /** null: no body (redirects, and every HEAD). */
  body: string | null;
  /**
   * A redirect's `headers` again as a flat `[name, value, …]` list in the same order: node:http's writeHead
   * takes a list without enumerating an object (for…in and a hasOwnProperty per header), the same bytes.
   */
  headerList?: readonly string[];
}

/** The short host's HTML pages (status pages and the preview), rendered by the web layer. */
export interface RedirectPages {
  status(page: NonNullable<RedirectDecision['page']>): string;
  preview(preview: LinkPreview): string;
}

/** What answering a redirect needs: one deployment's settings, resolver, metrics, click buffer and pages. */
export interface RedirectDeps {
  resolver: LinkResolver;
  config: {
    shortBaseUrl: string;
    /**
     * The short domains, the default first, and what a Host naming none of them gets (ADR 0078); absent:
     * SHORT_BASE_URL's host alone, answering every Host.
     */
    shortDomains?: readonly string[];
    unknownHost?: 'default' | 'not_found';
    redirect: RedirectSettings;
    resolver: { cacheMax: number };
    trustedCountryHeader?: string | undefined;
  };
  metrics: Pick<Metrics, 'redirects'>;
  clicks: ClickRecorder;
  pages: RedirectPages;
}

/** Answers short-host requests for one deployment. */
export interface RedirectAnswerer {
  /**
   * Resolve the code and answer per redirect_policy, then count the click in memory (lib/clicks; written to
   * click_counts in batches, never awaited). Counted: answers that send a reader on — redirects to the
   * target, expired links' 302 to their fallback, and the warn interstitial. Not counted: 404, 410, 451 and
   * the `{code}+` preview page.
   */
  answer(request: RedirectRequest): Promise<RedirectAnswer>;
  /**
   * `answer` without the lookup, synchronously, when the resolver's LRU already holds the record
   * (`resolver.peek`); undefined otherwise. Lets the Node fast path answer an LRU hit with no promise between
   * the parsed request and the socket. `request.code` must already be a possible code (a `+` may follow).
   */
  answerPeeked(request: RedirectRequest): RedirectAnswer | undefined;
  /**
   * `answer` for a caller that writes the answer itself: exactly one of `sink.deliver` (the answer) or
   * `sink.fail` (what went wrong) is called, from the lookup's own reaction. No promise of its own: the Node
   * fast path answers a cache miss with one reaction on the resolver's promise instead of three chained ones
   * (under 1 µs of a Postgres lookup's ~40 µs: a saving by construction, too small for the benchmark to resolve).
   */
  answerTo(request: RedirectRequest, sink: AnswerSink): void;
}

/** Where answerTo delivers: the answer, or the error answering it threw or the lookup failed with. */
export interface AnswerSink {
  deliver(answer: RedirectAnswer): void;
  fail(error: unknown): void;
}

/**
 * Renders a decision; HEAD gets the same status and headers without a body. `https`: the short host is served
 * over https (SHORT_BASE_URL), so every answer carries HSTS. Pages carry publicPageHeaders.
 */
export function toRedirectAnswer(
  decision: RedirectDecision,
  method: string,
  pages: RedirectPages,
  https = false,
): RedirectAnswer {
  const cacheControl = decision.cacheControl;
  const location = decision.location;
  if (location !== undefined) {
    // Each shape written as one literal (no property added, no list grown afterwards): this runs per redirect
    // answered from beyond the LRU.
    if (https) {
      return {
        status: decision.status,
        headers: {
          'Cache-Control': cacheControl,
          'X-Robots-Tag': 'noindex',
          'Referrer-Policy': REDIRECT_REFERRER_POLICY,
          'Strict-Transport-Security': STRICT_TRANSPORT_SECURITY,
          Location: location,
        },
        body: null,
        headerList: [
          'Cache-Control',
          cacheControl,
          'X-Robots-Tag',
          'noindex',
          'Referrer-Policy',
          REDIRECT_REFERRER_POLICY,
          'Strict-Transport-Security',
          STRICT_TRANSPORT_SECURITY,
          'Location',
          location,
        ],
      };
    }
    return {
      status: decision.status,
      headers: {
        'Cache-Control': cacheControl,
        'X-Robots-Tag': 'noindex',
        'Referrer-Policy': REDIRECT_REFERRER_POLICY,
        Location: location,
      },
      body: null,
      headerList: [
        'Cache-Control',
        cacheControl,
        'X-Robots-Tag',
        'noindex',
        'Referrer-Policy',
        REDIRECT_REFERRER_POLICY,
        'Location',
        location,
      ],
    };
  }
  const headers: Record<string, string> = {
    'Cache-Control': cacheControl,
    'X-Robots-Tag': 'noindex',
    'Referrer-Policy': REDIRECT_REFERRER_POLICY,
  };
  headers['Content-Type'] = 'text/html; charset=utf-8';
  Object.assign(headers, publicPageHeaders(https));
  const body = decision.page ? pages.status(decision.page) : '';
  return { status: decision.status, headers, body: method === 'HEAD' ? null : body };
}

/** A routed answer with its `Vary` header added (to the object and to the flat list alike). */
function withVary(answer: RedirectAnswer, vary: string): RedirectAnswer {
  return {
    status: answer.status,
    headers: { ...answer.headers, Vary: vary },
    body: answer.body,
    ...(answer.headerList ? { headerList: [...answer.headerList, 'Vary', vary] } : {}),
  };
}

/**
 * What the answerer keeps per record of a link with routing rules: which headers its rules read, its `Vary`,
 * and its memoised redirects per variant (at most ROUTED_VARIANTS_MAX, then started again: a variant is a few
 * short strings, but a language tag is whatever a client sends).
 */
interface RoutedMemo {
  needs: number;
  vary: string;
  answers: Map<string, RedirectAnswer>;
  cell: ClickCell | undefined;
}
const ROUTED_VARIANTS_MAX = 64;

/** `tampered`: a stored target broke the target rule (the resolver's stand-in record), answered 404. */
type Outcome = RedirectDecision['outcome'] | 'preview' | 'tampered';
const OUTCOMES: readonly Outcome[] = [
  'redirect',
  'warn',
  'archived',
  'expired',
  'gone',
  'blocked',
  'not_found',
  'preview',
  'tampered',
];

/** True when a request's path segment asks for the preview page: the code followed by `+`. */
function isPreview(segment: string): boolean {
  return segment.length > 1 && segment.charCodeAt(segment.length - 1) === 43; /* + */
}

/**
 * Builds the answerer; everything per deployment (tallies, settings, the answer memo) is looked up here once,
 * so a request costs the lookup, the policy and the click, nothing more.
 */
export function createRedirectAnswerer(deps: RedirectDeps): RedirectAnswerer {
  const { resolver, clicks, config, pages } = deps;
  const settings = config.redirect;
  const countryHeader = config.trustedCountryHeader?.toLowerCase();
  const https = isHttpsBase(config.shortBaseUrl);
  const hosts = createShortDomainHosts(
    {
      shortBaseUrl: config.shortBaseUrl,
      shortDomains: config.shortDomains ?? [new URL(config.shortBaseUrl).hostname.toLowerCase()],
      unknownHost: config.unknownHost ?? 'default',
    },
    resolver.peekerFor,
  );
  // One domain answering every Host (every deployment before several domains): the Host header is never read.
  const single = hosts.single;
  const home = hosts.home;
  const homeBaseUrl = home.baseUrl;
  const counted = Object.fromEntries(
    OUTCOMES.map((outcome) => [outcome, tally(deps.metrics.redirects, { outcome })]),
  ) as Record<Outcome, Tally>;
  /**
   * Answers that depend on nothing but the record: an active, clean link with no expiry, when no request query
   * parameters are forwarded. Keyed by the record object the resolver's LRU hands out (a changed link is a new
   * object), so an LRU hit skips the decision and the header building; an answer is shared and never mutated.
   * Beside it, a click-buffer cell for the code, so counting the click is an increment (no lookup by code).
   * Without the LRU every lookup is a new object: memoising would only add an entry per request.
   * `queried` is the same answer for a request with a query (`?qr=1`): never shared-cacheable
   * (redirect_policy.ts), so a hit costs one branch on the query more.
   */
  const memo =
    config.resolver.cacheMax > 0 && (settings.forwardQueryParams?.length ?? 0) === 0
      ? new WeakMap<ServingRecord, { answer: RedirectAnswer; queried: RedirectAnswer; cell: ClickCell }>()
      : undefined;

  /** Per record of a link with rules (ADR 0080): its needs and Vary always, its answers when memo is on. */
  const routed = new WeakMap<ServingRecord, RoutedMemo>();

  /**
   * answerResolved for a link with routing rules: the headers its rules read are parsed, the variant's answer is
   * a Map hit after its first request (for an active, clean, never-expiring link, as the memo above), and every
   * answer carries `Vary`. The click is counted like any other (per code, not per rule).
   */
  function answerRouted(
    request: RedirectRequest,
    code: string,
    record: ServingRecord & { rules: NonNullable<ServingRecord['rules']> },
    now: number,
  ): RedirectAnswer {
    let routing = routed.get(record);
    if (routing === undefined) {
      const needs = routeNeeds(record.rules);
      routing = { needs, vary: varyFor(needs, countryHeader), answers: new Map(), cell: undefined };
      routed.set(record, routing);
    }
    const variant = readRouteVariant(routing.needs, request, countryHeader);
    const alike =
      memo !== undefined &&
      record.status === 'active' &&
      record.expiresAt === null &&
      (record.safety === 'clean' || record.safety === 'unknown');
    const key = alike ? routeVariantKey(variant) : '';
    let answer = alike ? routing.answers.get(key) : undefined;
    let outcome: RedirectDecision['outcome'] = 'redirect';
    if (answer !== undefined) {
      counted.redirect.n++;
    } else {
      const decision = decideRoutedRedirect(
        code,
        record,
        variant,
        routing.vary,
        now,
        settings,
        request.query,
      );
      outcome = decision.outcome;
      const plain = toRedirectAnswer(decision, request.method, pages, https);
      answer = decision.vary === undefined ? plain : withVary(plain, decision.vary);
      counted[outcome].n++;
      if (alike && outcome === 'redirect') {
        // Any query gives this same answer (never shared-cacheable already, and no parameter is forwarded).
        if (routing.answers.size >= ROUTED_VARIANTS_MAX) routing.answers.clear();
        routing.answers.set(key, answer);
      }
      if (outcome !== 'warn' && outcome !== 'archived' && answer.headers.Location === undefined)
        return answer;
    }
    const agent = readAgent(request.method, request.header('user-agent'));
    const kind = clickKindOf(agent, request.query);
    if (kind === null) return answer;
    const country = countryHeader ? countryOf(request.header(countryHeader)) : '';
    const referrerHost = referrerHostOf(request.header('referer'));
    if (alike && outcome === 'redirect') {
      // Clicks count under the link's key (its code on another short domain is `{domain}/{code}`).
      routing.cell ??= clicks.cell(record.code);
      clicks.recordInCell(routing.cell, kind, country, referrerHost, now, agent);
    } else {
      clicks.record({ code: record.code, kind, country, referrerHost, atMs: now, agent });
    }
    return answer;
  }

  /** `GET /{code}+`: where the link leads and what following it does; no redirect and no click. */
  function answerPreview(
    code: string,
    record: ServingRecord | null,
    now: number,
    method: string,
    baseUrl: string,
  ): RedirectAnswer {
    const decision = decideRedirect(code, record, now, settings);
    if (!record || decision.outcome === 'not_found') {
      counted[record !== null && isTamperedRecord(record) ? 'tampered' : 'not_found'].n++;
      return toRedirectAnswer(decision, method, pages, https);
    }
    counted.preview.n++;
    return {
      status: 200,
      headers: {
        'Cache-Control': 'no-store',
        'X-Robots-Tag': 'noindex',
        'Content-Type': 'text/html; charset=utf-8',
        ...publicPageHeaders(https),
        'Referrer-Policy': 'no-referrer',
      },
      body: method === 'HEAD' ? null : pages.preview(toLinkPreview(code, record, decision, baseUrl)),
    };
  }

  /** `code` is the bare code the reader asked for; a record's `code` is its link's key, which clicks count. */
  function answerResolved(
    request: RedirectRequest,
    code: string,
    preview: boolean,
    record: ServingRecord | null,
    baseUrl: string,
  ): RedirectAnswer {
    const now = Date.now();
    if (preview) return answerPreview(code, record, now, request.method, baseUrl);
    if (record !== null && record.rules !== undefined) {
      return answerRouted(request, code, record as Parameters<typeof answerRouted>[2], now);
    }
    const alike =
      memo !== undefined &&
      record !== null &&
      record.status === 'active' &&
      record.expiresAt === null &&
      (record.safety === 'clean' || record.safety === 'unknown');
    let memoised = alike ? memo.get(record) : undefined;
    let answer: RedirectAnswer;
    if (memoised !== undefined) {
      answer = request.query === '' ? memoised.answer : memoised.queried;
      counted.redirect.n++;
    } else {
      const decision = decideRedirect(code, record, now, settings, request.query);
      answer = toRedirectAnswer(decision, request.method, pages, https);
      // A stand-in for a record whose target broke the rule (status pending, so decided 404): counted apart.
      const tampered = record !== null && record.status === 'pending' && isTamperedRecord(record);
      counted[tampered ? 'tampered' : decision.outcome].n++;
      if (alike && decision.outcome === 'redirect') {
        // Both variants at once (no query is forwarded here, so any query gives the same answer as `qr=1`).
        const other = toRedirectAnswer(
          decideRedirect(code, record, now, settings, request.query === '' ? `${QR_MARKER}=1` : ''),
          request.method,
          pages,
          https,
        );
        memoised =
          request.query === ''
            ? { answer, queried: other, cell: clicks.cell(record.code) }
            : { answer: other, queried: answer, cell: clicks.cell(record.code) };
        memo.set(record, memoised);
      }
      if (
        decision.outcome !== 'warn' &&
        decision.outcome !== 'archived' &&
        answer.headers.Location === undefined
      ) {
        return answer;
      }
    }
    // The agent is the remembered object for its User-Agent (classify_click.ts): a reference the click keeps;
    // its browser and OS families are worked out when the clicks are flushed, never here (ADR 0081).
    const agent = readAgent(request.method, request.header('user-agent'));
    const kind = clickKindOf(agent, request.query);
    if (kind === null) return answer;
    const country = countryHeader ? countryOf(request.header(countryHeader)) : '';
    const referrerHost = referrerHostOf(request.header('referer'));
    if (memoised !== undefined) clicks.recordInCell(memoised.cell, kind, country, referrerHost, now, agent);
    else clicks.record({ code: record?.code ?? code, kind, country, referrerHost, atMs: now, agent });
    return answer;
  }

  /** answerResolved for answerTo: its answer to `sink.deliver`, or what it threw to `sink.fail`. */
  function deliverResolved(
    request: RedirectRequest,
    code: string,
    preview: boolean,
    record: ServingRecord | null,
    baseUrl: string,
    sink: AnswerSink,
  ): void {
    let answer: RedirectAnswer;
    try {
      answer = answerResolved(request, code, preview, record, baseUrl);
    } catch (error) {
      sink.fail(error);
      return;
    }
    sink.deliver(answer);
  }

  function answerTo(request: RedirectRequest, sink: AnswerSink): void {
    let preview: boolean;
    let code: string;
    let lookup: Promise<ServingRecord | null> | undefined;
    let domain: ServedDomain | null;
    try {
      preview = isPreview(request.code);
      code = preview ? request.code.slice(0, -1) : request.code;
      domain = single ? home : hosts.select(request.header('host'));
      // A miss on another domain asks the ladder for the link's key, `{domain}/{code}` (the one string built).
      if (domain !== null && isPossibleCode(code)) {
        lookup = resolver.resolve(domain === home ? code : domain.keyPrefix + code);
      }
    } catch (error) {
      sink.fail(error);
      return;
    }
    const baseUrl = (domain ?? home).baseUrl;
    if (lookup === undefined) {
      deliverResolved(request, code, preview, null, baseUrl, sink);
      return;
    }
    // One reaction on the lookup; its two closures are all a miss allocates here.
    lookup.then(
      (record) => deliverResolved(request, code, preview, record, baseUrl, sink),
      (error: unknown) => sink.fail(error),
    );
  }

  return {
    answer(request) {
      return new Promise<RedirectAnswer>((resolve, reject) =>
        answerTo(request, { deliver: resolve, fail: reject }),
      );
    },
    answerTo,
    answerPeeked(request) {
      const preview = isPreview(request.code);
      const code = preview ? request.code.slice(0, -1) : request.code;
      if (single) {
        const record = resolver.peek?.(code);
        return record === undefined ? undefined : answerResolved(request, code, preview, record, homeBaseUrl);
      }
      const domain = hosts.select(request.header('host'));
      // A Host naming no short domain, with SHORT_DOMAIN_UNKNOWN_HOST=not_found: no link answers there.
      if (domain === null) return answerResolved(request, code, preview, null, homeBaseUrl);
      const record = domain.peek?.(code);
      return record === undefined
        ? undefined
        : answerResolved(request, code, preview, record, domain.baseUrl);
    },
  };
}
