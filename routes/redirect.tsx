import { Hono } from 'hono';
import { renderToString } from 'preact-render-to-string';
import { type LinkPreview, PreviewPage } from '../components/PreviewPage.tsx';
import { StatusPage } from '../components/StatusPage.tsx';
import { classifyClick, countryOf, referrerHostOf } from '../lib/clicks/classify_click.ts';
import type { ClickCell } from '../lib/clicks/click_buffer.ts';
import { isPossibleCode } from '../lib/links/code_rules.ts';
import { decideRedirect, type RedirectDecision } from '../lib/redirect/redirect_policy.ts';
import type { ServingRecord } from '../lib/redirect/serving_record.ts';
import { type Tally, tally } from '../lib/shared/metrics.ts';
import type { WebDeps } from '../server/web_deps.ts';
import type { AppEnv } from './app_env.ts';

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
}

/** What answering a redirect needs from the web tier's dependencies. */
export type RedirectDeps = Pick<WebDeps, 'resolver' | 'config' | 'metrics' | 'clicks'>;

const PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'";

/** Renders a decision; HEAD gets the same status and headers without a body. */
export function toRedirectAnswer(decision: RedirectDecision, method: string): RedirectAnswer {
  const headers: Record<string, string> = {
    'Cache-Control': decision.cacheControl,
    'X-Robots-Tag': 'noindex',
    'Referrer-Policy': 'unsafe-url',
  };
  if (decision.location !== undefined) {
    headers.Location = decision.location;
    return { status: decision.status, headers, body: null };
  }
  headers['Content-Type'] = 'text/html; charset=utf-8';
  headers['Content-Security-Policy'] = PAGE_CSP;
  const body = decision.page ? `<!doctype html>${renderToString(<StatusPage page={decision.page} />)}` : '';
  return { status: decision.status, headers, body: method === 'HEAD' ? null : body };
}

type Outcome = RedirectDecision['outcome'] | 'preview';
const OUTCOMES: readonly Outcome[] = [
  'redirect',
  'warn',
  'expired',
  'gone',
  'blocked',
  'not_found',
  'preview',
];

/** True when a request's path segment asks for the preview page: the code followed by `+`. */
function isPreview(segment: string): boolean {
  return segment.length > 1 && segment.charCodeAt(segment.length - 1) === 43; /* + */
}

/** Answers short-host requests for one deployment (its settings, resolver, metrics and click buffer). */
export interface RedirectAnswerer {
  /**
   * THE HOT PATH, runtime-neutral: resolve the code and answer per lib/links/redirect_policy, then count the
   * click in memory (lib/clicks; written to click_counts in batches, never awaited). Counted: answers that
   * send a reader on — redirects to the target, expired links' 302 to their fallback, and the warn
   * interstitial. Not counted: 404, 410, 451 and the `{code}+` preview page.
   */
  answer(request: RedirectRequest): Promise<RedirectAnswer>;
  /**
   * `answer` without the lookup, synchronously, when the resolver's LRU already holds the record
   * (`resolver.peek`); undefined otherwise. Lets the Node fast path answer an LRU hit with no promise between
   * the parsed request and the socket. `request.code` must already be a possible code (a `+` may follow).
   */
  answerPeeked(request: RedirectRequest): RedirectAnswer | undefined;
}

/**
 * Builds the answerer; everything per deployment (tallies, settings, the answer memo) is looked up here once,
 * so a request costs the lookup, the policy and the click, nothing more.
 */
export function createRedirectAnswerer(deps: RedirectDeps): RedirectAnswerer {
  const { resolver, clicks, config } = deps;
  const settings = config.redirect;
  const countryHeader = config.trustedCountryHeader?.toLowerCase();
  const counted = Object.fromEntries(
    OUTCOMES.map((outcome) => [outcome, tally(deps.metrics.redirects, { outcome })]),
  ) as Record<Outcome, Tally>;
  /**
   * Answers that depend on nothing but the record: an active, clean link with no expiry, when no request query
   * parameters are forwarded. Keyed by the record object the resolver's LRU hands out (a changed link is a new
   * object), so an LRU hit skips the decision and the header building; an answer is shared and never mutated.
   * Beside it, a click-buffer cell for the code, so counting the click is an increment (no lookup by code).
   * Without the LRU every lookup is a new object: memoising would only add an entry per request.
   */
  const memo =
    config.resolver.cacheMax > 0 && settings.forwardQueryParams.length === 0
      ? new WeakMap<ServingRecord, { answer: RedirectAnswer; cell: ClickCell }>()
      : undefined;

  function answerResolved(
    request: RedirectRequest,
    code: string,
    preview: boolean,
    record: ServingRecord | null,
  ): RedirectAnswer {
    const now = Date.now();
    if (preview) return answerPreview(deps, counted, code, record, now, request.method);
    const alike =
      memo !== undefined &&
      record !== null &&
      record.status === 'active' &&
      record.expiresAt === null &&
      (record.safety === 'clean' || record.safety === 'unknown');
    let memoised = alike ? memo.get(record) : undefined;
    let answer: RedirectAnswer;
    if (memoised !== undefined) {
      answer = memoised.answer;
      counted.redirect.n++;
    } else {
      const decision = decideRedirect(code, record, now, settings, request.query);
      answer = toRedirectAnswer(decision, request.method);
      counted[decision.outcome].n++;
      if (alike && decision.outcome === 'redirect') {
        memoised = { answer, cell: clicks.cell(code) };
        memo.set(record, memoised);
      }
      if (decision.outcome !== 'warn' && answer.headers.Location === undefined) return answer;
    }
    const kind = classifyClick(request.method, request.header('user-agent'), request.query);
    const country = countryHeader ? countryOf(request.header(countryHeader)) : '';
    const referrerHost = referrerHostOf(request.header('referer'));
    if (memoised !== undefined) clicks.recordInCell(memoised.cell, kind, country, referrerHost, now);
    else clicks.record({ code, kind, country, referrerHost, atMs: now });
    return answer;
  }

  return {
    async answer(request) {
      const preview = isPreview(request.code);
      const code = preview ? request.code.slice(0, -1) : request.code;
      const record = isPossibleCode(code) ? await resolver.resolve(code) : null;
      return answerResolved(request, code, preview, record);
    },
    answerPeeked(request) {
      const preview = isPreview(request.code);
      const code = preview ? request.code.slice(0, -1) : request.code;
      const record = resolver.peek?.(code);
      return record === undefined ? undefined : answerResolved(request, code, preview, record);
    },
  };
}

const OUTCOME_TEXT: Record<RedirectDecision['outcome'], string> = {
  redirect: 'Redirects to the destination',
  warn: 'Shows a warning page naming the destination, with a link to continue',
  expired: 'The link has expired',
  gone: 'Nothing: the link was retired (410 Gone)',
  blocked: 'Nothing: the link is blocked (451)',
  not_found: 'Nothing: no such link',
};

/** `GET /{code}+`: where the link leads and what following it does; no redirect and no click. */
function answerPreview(
  deps: RedirectDeps,
  counted: Record<Outcome, Tally>,
  code: string,
  record: ServingRecord | null,
  now: number,
  method: string,
): RedirectAnswer {
  const decision = decideRedirect(code, record, now, deps.config.redirect);
  if (!record || decision.outcome === 'not_found') {
    counted.not_found.n++;
    return toRedirectAnswer(decision, method);
  }
  counted.preview.n++;
  const destination = decision.location ?? decision.page?.destination;
  const preview: LinkPreview = {
    code,
    shortUrl: `${deps.config.shortBaseUrl}/${code}`,
    status: decision.outcome === 'expired' ? 'expired' : record.status,
    safety: record.safety,
    ...(destination !== undefined ? { destination } : {}),
    outcome:
      decision.outcome === 'expired'
        ? decision.location !== undefined
          ? `The link has expired: redirects (${decision.status}) to its fallback page`
          : 'Nothing: the link has expired (410 Gone)'
        : decision.outcome === 'redirect'
          ? `${OUTCOME_TEXT.redirect} (HTTP ${decision.status})`
          : OUTCOME_TEXT[decision.outcome],
  };
  return {
    status: 200,
    headers: {
      'Cache-Control': 'no-store',
      'X-Robots-Tag': 'noindex',
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': PAGE_CSP,
      'Referrer-Policy': 'no-referrer',
    },
    body: method === 'HEAD' ? null : `<!doctype html>${renderToString(<PreviewPage preview={preview} />)}`,
  };
}

/** GET|HEAD /:code on Hono (Deno, tests, and Node requests the fast path does not take). */
export function createRedirectRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  const answerer = createRedirectAnswerer(deps);
  app.on(['GET', 'HEAD'], '/:code', async (c) => {
    const url = c.req.url;
    const queryAt = url.indexOf('?');
    const answer = await answerer.answer({
      method: c.req.method,
      code: c.req.param('code'),
      query: queryAt < 0 ? '' : url.slice(queryAt + 1),
      header: (name) => c.req.header(name),
    });
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  });
  return app;
}
