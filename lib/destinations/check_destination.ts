// One destination check (docs/OPERATIONS.md, "Destination checks"): HEAD, a small GET where HEAD is refused,
// redirects followed up to five with the chain kept, then the outcome — ok, moved, gone, soft-404, unreachable
// or parked. Every request waits for its host's gate (one at a time, at the host's rate).
import { randomBytes } from 'node:crypto';
import type { OutgoingRule } from '../shared/outgoing_request.ts';
import type { ChainHop, DestinationOutcome, TlsState } from '../stores/destination_state_store.ts';
import { type HopAnswer, HopFailure, type HopOptions, requestHop } from './destination_request.ts';
import type { HostGate } from './host_gate.ts';
import { extractTitle, isSamePage } from './page_text.ts';
import {
  getRegistrableDomain,
  hasParkingNameServer,
  isParkingHost,
  looksLikeParkingPage,
} from './parking.ts';

/** Redirects followed before a destination counts as unreachable. */
export const MAX_REDIRECTS = 5;
/** The most of a body any check reads. */
export const MAX_BODY_BYTES = 64 * 1024;
// Answers to HEAD that a small GET is asked to repeat: servers that refuse or mishandle HEAD, and (for the
// destination, not the soft-404 probe) a "gone" that a HEAD alone should not decide.
const HEAD_REFUSED = new Set([400, 403, 405, 501]);
const HEAD_GONE = new Set([404, 410]);

export interface DestinationCheckerDeps {
  rule: OutgoingRule;
  lookup: HopOptions['lookup'];
  gate: HostGate;
  userAgent: string;
  timeoutMs: number;
  /** A domain's name servers (the parking test); absent: not asked. */
  resolveNs?: (domain: string) => Promise<string[]>;
  /** Every request made, with its host (benchmarks and tests count them). */
  onRequest?: (host: string) => void;
}

/** What one check found. */
export interface CheckResult {
  outcome: DestinationOutcome;
  httpStatus: number | null;
  finalUrl: string | null;
  chain: ChainHop[];
  tls: TlsState | null;
  error: string | null;
  pageTitle: string | null;
}

interface Followed {
  chain: ChainHop[];
  final: URL;
  answer: HopAnswer;
  /** The last https answer's TLS. */
  tls: TlsState | null;
}

class ChainFailure extends Error {
  constructor(
    readonly chain: ChainHop[],
    readonly failure: HopFailure,
    readonly url: URL,
  ) {
    super(failure.message);
  }
}

const hostOf = (url: URL) => url.hostname.toLowerCase().replace(/^\[|\]$/g, '');

async function hop(
  deps: DestinationCheckerDeps,
  url: URL,
  method: 'HEAD' | 'GET',
  maxBytes = 8 * 1024,
): Promise<HopAnswer> {
  const host = hostOf(url);
  return deps.gate.run(host, () => {
    deps.onRequest?.(host);
    return requestHop(url, {
      method,
      timeoutMs: deps.timeoutMs,
      maxBytes,
      userAgent: deps.userAgent,
      rule: deps.rule,
      lookup: deps.lookup,
    });
  });
}

/** HEAD (a small GET where HEAD is refused), following redirects up to MAX_REDIRECTS. */
async function follow(
  deps: DestinationCheckerDeps,
  start: URL,
  wantBody: boolean,
  confirmGone = true,
): Promise<Followed> {
  const chain: ChainHop[] = [];
  let url = start;
  let tls: TlsState | null = null;
  for (let redirects = 0; ; redirects++) {
    let answer: HopAnswer;
    try {
      answer = await hop(deps, url, wantBody ? 'GET' : 'HEAD', wantBody ? MAX_BODY_BYTES : undefined);
      if (!wantBody && (HEAD_REFUSED.has(answer.status) || (confirmGone && HEAD_GONE.has(answer.status))))
        answer = await hop(deps, url, 'GET');
    } catch (error) {
      const failure = error instanceof HopFailure ? error : new HopFailure('connection', String(error));
      throw new ChainFailure(chain, failure, url);
    }
    if (answer.tls) tls = answer.tls;
    const redirect = answer.status >= 300 && answer.status < 400 && answer.location !== null;
    chain.push({ url: url.href, status: answer.status, location: redirect ? answer.location : null });
    if (!redirect) return { chain, final: url, answer, tls };
    if (redirects === MAX_REDIRECTS)
      throw new ChainFailure(chain, new HopFailure('protocol', `more than ${MAX_REDIRECTS} redirects`), url);
    try {
      url = new URL(answer.location!, url);
    } catch {
      throw new ChainFailure(chain, new HopFailure('protocol', 'a redirect to an invalid URL'), url);
    }
  }
}

/** The same resource for a reader: scheme, a leading `www.` and a trailing slash aside. */
function isTrivialMove(from: URL, to: URL): boolean {
  const key = (u: URL) =>
    `${u.hostname.replace(/^www\./, '')}${u.port ? `:${u.port}` : ''}${u.pathname.replace(/\/+$/, '')}${u.search}`;
  return key(from) === key(to);
}

/** A path beside the destination's that surely does not exist (the soft-404 probe). */
function siblingOf(url: URL): { url: URL; token: string } {
  const token = `lifeline-check-${randomBytes(9).toString('hex')}`;
  const sibling = new URL(url.href);
  const dir = sibling.pathname.replace(/[^/]*$/, '');
  sibling.pathname = `${dir}${token}`;
  sibling.search = '';
  sibling.hash = '';
  return { url: sibling, token };
}

/** Whether the destination is the site's not-found page; `body`: the destination's page if it had to be read. */
async function isSoft404(
  deps: DestinationCheckerDeps,
  start: URL,
  followed: Followed,
  body: string | null,
): Promise<{ soft404: boolean; body: string | null }> {
  const no = { soft404: false, body };
  const redirected = followed.chain.length > 1;
  const finalPath = followed.final.pathname;
  // A home page is not a not-found page, unless a deeper link was redirected there.
  if (finalPath === '/' && (!redirected || start.pathname === '/')) return no;
  const probe = siblingOf(redirected && finalPath === '/' ? start : followed.final);
  let sibling: Followed;
  try {
    sibling = await follow(deps, probe.url, false, false);
  } catch {
    return no;
  }
  if (sibling.answer.status < 200 || sibling.answer.status >= 300) return no;
  // Where a made-up path lands is where the destination landed: the site sends the unknown there.
  if (redirected && sibling.final.href === followed.final.href) return { soft404: true, body };
  const ours = body ?? (await hop(deps, followed.final, 'GET', MAX_BODY_BYTES)).body ?? '';
  const theirs = (await hop(deps, sibling.final, 'GET', MAX_BODY_BYTES)).body ?? '';
  const ownSegment = safeDecode(followed.final.pathname.split('/').pop() ?? '');
  return { soft404: isSamePage(ours, theirs, [probe.token, ownSegment]), body: ours };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

async function isParked(deps: DestinationCheckerDeps, start: URL, followed: Followed, body: string | null) {
  if (followed.chain.some((h) => isParkingHost(new URL(h.url).hostname))) return true;
  if (body && looksLikeParkingPage(body)) return true;
  const domain = getRegistrableDomain(hostOf(start));
  if (!domain || !deps.resolveNs) return false;
  const nameServers = await deps.resolveNs(domain).catch(() => [] as string[]);
  return hasParkingNameServer(nameServers);
}

/**
 * Checks one destination. `wantTitle`: read the page (a small GET) for its title — the first check of a link
 * (crawl on create). Never throws for anything the destination does; the outcome says it.
 */
export async function checkDestination(
  deps: DestinationCheckerDeps,
  target: string,
  options: { wantTitle: boolean },
): Promise<CheckResult> {
  return withinLimits(await checkUnbounded(deps, target, options));
}

/** The most of a URL kept (the column's limit); a site's Location header can be far longer. */
const MAX_URL_BYTES = 2048;

/** What is stored stays within the columns' limits: an over-long final URL is dropped, chain URLs are cut. */
function withinLimits(result: CheckResult): CheckResult {
  const cut = (url: string) => (url.length > MAX_URL_BYTES ? url.slice(0, MAX_URL_BYTES) : url);
  return {
    ...result,
    finalUrl: result.finalUrl && Buffer.byteLength(result.finalUrl) <= MAX_URL_BYTES ? result.finalUrl : null,
    chain: result.chain.map((hop) => ({
      url: cut(hop.url),
      status: hop.status,
      location: hop.location == null ? null : cut(hop.location),
    })),
  };
}

async function checkUnbounded(
  deps: DestinationCheckerDeps,
  target: string,
  options: { wantTitle: boolean },
): Promise<CheckResult> {
  let start: URL;
  try {
    start = new URL(target);
  } catch {
    return failed('unreachable', [], null, 'not a valid URL', null);
  }
  let followed: Followed;
  try {
    followed = await follow(deps, start, options.wantTitle);
  } catch (error) {
    if (!(error instanceof ChainFailure)) throw error;
    const { failure } = error;
    const tls = failure.tlsError
      ? { protocol: null, issuer: null, validTo: null, error: failure.tlsError }
      : null;
    return failed('unreachable', error.chain, error.url.href, `${failure.kind}: ${failure.message}`, tls);
  }
  const status = followed.answer.status;
  const base = {
    httpStatus: status,
    finalUrl: followed.final.href,
    chain: followed.chain,
    tls: followed.tls,
  };
  if (status === 404 || status === 410) return { ...base, outcome: 'gone', error: null, pageTitle: null };
  if (status >= 500 || (status >= 300 && status < 400))
    return { ...base, outcome: 'unreachable', error: `HTTP ${status}`, pageTitle: null };
  const body = followed.answer.body;
  const pageTitle = options.wantTitle && body ? extractTitle(body) : null;
  if (await isParked(deps, start, followed, body))
    return { ...base, outcome: 'parked', error: null, pageTitle: null };
  if (status >= 200 && status < 300) {
    const probe = await isSoft404(deps, start, followed, body);
    // A parking page answers every path alike: the bodies the probe read tell it from a not-found page.
    if (probe.body && !body && looksLikeParkingPage(probe.body))
      return { ...base, outcome: 'parked', error: null, pageTitle: null };
    if (probe.soft404) return { ...base, outcome: 'soft-404', error: null, pageTitle: null };
  }
  const first = followed.chain[0]!;
  const permanent = first.status === 301 || first.status === 308;
  if (permanent && status < 300 && !isTrivialMove(start, followed.final))
    return { ...base, outcome: 'moved', error: null, pageTitle };
  // 401, 403, 429 and the like: the page is there and refuses us; its status is kept.
  return { ...base, outcome: 'ok', error: null, pageTitle };
}

function failed(
  outcome: DestinationOutcome,
  chain: ChainHop[],
  finalUrl: string | null,
  error: string,
  tls: TlsState | null,
): CheckResult {
  return { outcome, httpStatus: null, finalUrl, chain, tls, error: error.slice(0, 500), pageTitle: null };
}
