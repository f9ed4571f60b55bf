import { Hono } from 'hono';
import { renderToString } from 'preact-render-to-string';
import { type LinkPreview, PreviewPage } from '../components/PreviewPage.tsx';
import { StatusPage } from '../components/StatusPage.tsx';
import { classifyClick, countryOf, referrerHostOf } from '../lib/clicks/classify_click.ts';
import { isPossibleCode, type ServingRecord } from '../lib/links/link.ts';
import { decideRedirect, type RedirectDecision } from '../lib/links/redirect_policy.ts';
import { incBound } from '../lib/metrics.ts';
import type { WebDeps } from '../lib/web_deps.ts';
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

/**
 * Answers that depend on nothing but the record: an active, clean link with no expiry, when no request query
 * parameters are forwarded. Keyed by the record object the resolver's LRU hands out (a changed link is a new
 * object), so an LRU hit skips the decision and the header building; the answer is shared and never mutated.
 */
const constantAnswers = new WeakMap<object, WeakMap<ServingRecord, RedirectAnswer>>();

/** The memo for one deployment's redirect settings (answers differ between settings, e.g. in tests). */
function answersFor(deps: RedirectDeps): WeakMap<ServingRecord, RedirectAnswer> {
  let memo = constantAnswers.get(deps.config.redirect);
  if (!memo) {
    memo = new WeakMap();
    constantAnswers.set(deps.config.redirect, memo);
  }
  return memo;
}

function answersAlike(record: ServingRecord, deps: RedirectDeps): boolean {
  return (
    // Without the LRU every lookup is a new object: memoising would only add a WeakMap entry per request.
    deps.config.resolver.cacheMax > 0 &&
    record.status === 'active' &&
    record.expiresAt === null &&
    (record.safety === 'clean' || record.safety === 'unknown') &&
    deps.config.redirect.forwardQueryParams.length === 0
  );
}

/**
 * THE HOT PATH, runtime-neutral: resolve the code and answer per lib/links/redirect_policy, then count the
 * click in memory (lib/clicks; written to click_counts in batches, never awaited). Counted: answers that
 * send a reader on — redirects to the target, expired links' 302 to their fallback, and the warn
 * interstitial. Not counted: 404, 410, 451 and the `{code}+` preview page.
 */
export async function answerRedirect(deps: RedirectDeps, request: RedirectRequest): Promise<RedirectAnswer> {
  const segment = request.code;
  const preview = segment.length > 1 && segment.charCodeAt(segment.length - 1) === 43; /* + */
  const code = preview ? segment.slice(0, -1) : segment;
  const record = isPossibleCode(code) ? await deps.resolver.resolve(code) : null;
  const now = Date.now();
  if (preview) return answerPreview(deps, code, record, now, request.method);
  const alike = record !== null && answersAlike(record, deps);
  const memo = alike ? answersFor(deps) : undefined;
  let answer = memo?.get(record!);
  let outcome: RedirectDecision['outcome'] = 'redirect';
  if (!answer) {
    const decision = decideRedirect(code, record, now, deps.config.redirect, request.query);
    outcome = decision.outcome;
    answer = toRedirectAnswer(decision, request.method);
    if (memo && outcome === 'redirect') memo.set(record!, answer);
  }
  incBound(deps.metrics.redirects, outcome, { outcome });
  if (outcome === 'redirect' || outcome === 'warn' || answer.headers.Location !== undefined) {
    deps.clicks.record({
      code,
      kind: classifyClick(request.method, request.header('user-agent'), request.query),
      country: deps.config.trustedCountryHeader
        ? countryOf(request.header(deps.config.trustedCountryHeader))
        : '',
      referrerHost: referrerHostOf(request.header('referer')),
      atMs: now,
    });
  }
  return answer;
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
  code: string,
  record: ServingRecord | null,
  now: number,
  method: string,
): RedirectAnswer {
  const decision = decideRedirect(code, record, now, deps.config.redirect);
  if (!record || decision.outcome === 'not_found') {
    incBound(deps.metrics.redirects, 'not_found', { outcome: 'not_found' });
    return toRedirectAnswer(decision, method);
  }
  incBound(deps.metrics.redirects, 'preview', { outcome: 'preview' });
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
  app.on(['GET', 'HEAD'], '/:code', async (c) => {
    const url = c.req.url;
    const queryAt = url.indexOf('?');
    const answer = await answerRedirect(deps, {
      method: c.req.method,
      code: c.req.param('code'),
      query: queryAt < 0 ? '' : url.slice(queryAt + 1),
      header: (name) => c.req.header(name),
    });
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  });
  return app;
}
