import { LRUCache } from 'lru-cache';
import { backoffDelay } from '../shared/backoff.ts';

/** Google Safe Browsing v4 Lookup API: at most this many URLs per threatMatches:find call. */
export const SAFE_BROWSING_MAX_URLS_PER_CALL = 500;
/** Threat types we ask about. */
export const SAFE_BROWSING_THREAT_TYPES = [
  'MALWARE',
  'SOCIAL_ENGINEERING',
  'UNWANTED_SOFTWARE',
  'POTENTIALLY_HARMFUL_APPLICATION',
] as const;
const REQUEST_TIMEOUT_MS = 5_000;
// Google's back-off for Safe Browsing: MIN(2^(N-1) * 15 min * (RAND + 1), 24 h) after N failures in a row.
const BACKOFF_BASE_MS = 15 * 60_000;
const BACKOFF_MAX_MS = 24 * 60 * 60_000;
const CACHE_MAX_ENTRIES = 100_000;

/** What Safe Browsing said about the URLs of one lookup. */
export interface SafeBrowsingAnswer {
  /** Threat types listed for each URL that matched (URLs with no match are absent). */
  threats: Map<string, string[]>;
  /** URLs Safe Browsing could not be asked about (back-off, error, timeout): not verified. */
  unavailable: Set<string>;
}

/** A Safe Browsing Lookup client: batched, caching matches for their cacheDuration, backing off on errors. */
export interface SafeBrowsing {
  lookup(urls: string[]): Promise<SafeBrowsingAnswer>;
  /** When the client will call Google again after failures (epoch ms), or null when not backing off. */
  backoffUntil(): number | null;
}

export interface SafeBrowsingOptions {
  apiKey: string;
  /** `<base>/v4/threatMatches:find`; https://safebrowsing.googleapis.com in production. */
  apiBaseUrl: string;
  clientId?: string;
  clientVersion?: string;
  timeoutMs?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  now?: () => number;
  random?: () => number;
  fetch?: typeof fetch;
  /** Told about failures (never given the key or the request URL, which carries it). */
  onError?: (error: { status: number | null; message: string; backoffMs: number }) => void;
}

interface MatchBody {
  matches?: {
    threatType?: string;
    threat?: { url?: string };
    cacheDuration?: string;
  }[];
}

/** Parses a protobuf Duration string ("300s", "300.000s") to milliseconds; null when malformed. */
export function parseDurationMs(value: string | undefined): number | null {
  const m = /^(\d+)(?:\.(\d{1,9}))?s$/.exec(value ?? '');
  if (!m) return null;
  return Number(m[1]) * 1000 + Math.round(Number(`0.${m[2] ?? '0'}`) * 1000);
}

/** The real client of `<base>/v4/threatMatches:find?key=…`. */
export function createSafeBrowsing(options: SafeBrowsingOptions): SafeBrowsing {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const doFetch = options.fetch ?? fetch;
  const endpoint = `${options.apiBaseUrl.replace(/\/+$/, '')}/v4/threatMatches:find`;
  // Only matches are cached: the Lookup API gives no lifetime for a clean answer, and a link whose target
  // turns malicious must be caught by the next re-scan.
  const cache = new LRUCache<string, { threats: string[]; until: number }>({ max: CACHE_MAX_ENTRIES });
  let failures = 0;
  let backoffUntil = 0;

  function fail(status: number | null, message: string): void {
    failures++;
    const base = options.backoffBaseMs ?? BACKOFF_BASE_MS;
    const backoffMs = backoffDelay({
      attempt: failures,
      baseMs: base,
      maxMs: options.backoffMaxMs ?? BACKOFF_MAX_MS,
      jitter: { min: 1, range: 1, beforeCap: true },
      random,
    });
    backoffUntil = now() + backoffMs;
    options.onError?.({ status, message, backoffMs });
  }

  async function findMatches(urls: string[]): Promise<Map<string, string[]> | null> {
    const body = {
      client: { clientId: options.clientId ?? 'lifeline', clientVersion: options.clientVersion ?? '1.0.0' },
      threatInfo: {
        threatTypes: SAFE_BROWSING_THREAT_TYPES,
        platformTypes: ['ANY_PLATFORM'],
        threatEntryTypes: ['URL'],
        threatEntries: urls.map((url) => ({ url })),
      },
    };
    let response: Response;
    try {
      response = await doFetch(`${endpoint}?key=${encodeURIComponent(options.apiKey)}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs ?? REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      const name = (error as Error).name;
      fail(null, name === 'TimeoutError' ? 'timed out' : `network error (${name})`);
      return null;
    }
    let parsed: MatchBody;
    try {
      const text = await response.text();
      if (response.status !== 200) {
        fail(response.status, describeGoogleError(text));
        return null;
      }
      parsed = JSON.parse(text) as MatchBody;
    } catch (error) {
      fail(response.status, `unreadable response (${(error as Error).name})`);
      return null;
    }
    failures = 0;
    const found = new Map<string, string[]>();
    const asked = new Set(urls);
    for (const match of parsed.matches ?? []) {
      const url = match.threat?.url;
      if (!url || !asked.has(url) || !match.threatType) continue;
      const list = found.get(url) ?? [];
      if (!list.includes(match.threatType)) list.push(match.threatType);
      found.set(url, list);
      const ttl = parseDurationMs(match.cacheDuration);
      if (ttl && ttl > 0) cache.set(url, { threats: list, until: now() + ttl });
    }
    return found;
  }

  return {
    async lookup(urls) {
      const threats = new Map<string, string[]>();
      const unavailable = new Set<string>();
      const toAsk: string[] = [];
      for (const url of new Set(urls)) {
        const cached = cache.get(url);
        if (cached && cached.until > now()) threats.set(url, cached.threats);
        else toAsk.push(url);
      }
      for (let i = 0; i < toAsk.length; i += SAFE_BROWSING_MAX_URLS_PER_CALL) {
        const batch = toAsk.slice(i, i + SAFE_BROWSING_MAX_URLS_PER_CALL);
        const found = now() < backoffUntil ? null : await findMatches(batch);
        if (!found) {
          for (const url of batch) unavailable.add(url);
          continue;
        }
        for (const [url, list] of found) threats.set(url, list);
      }
      return { threats, unavailable };
    },
    backoffUntil() {
      return now() < backoffUntil ? backoffUntil : null;
    },
  };
}

/** `status: message` from Google's error envelope, without echoing anything else. */
function describeGoogleError(text: string): string {
  try {
    const { error } = JSON.parse(text) as { error?: { status?: string; message?: string } };
    if (error) return `${error.status ?? 'ERROR'}: ${String(error.message ?? '').slice(0, 200)}`;
  } catch {}
  return 'non-JSON error body';
}
