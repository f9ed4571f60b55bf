// A real HTTP server reproducing Google Safe Browsing v4 `threatMatches:find` (VENDORS.md §2.1): key checks,
// request validation, the 500-entry limit, host-suffix / path-prefix matching, `{}` when clean, one match per
// (URL, list) with cacheDuration, Google's error envelope, and injectable failures (429/5xx/403, slowness).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const TEST_MALWARE_URL = 'http://testsafebrowsing.appspot.com/s/malware.html';
export const TEST_PHISHING_URL = 'http://testsafebrowsing.appspot.com/s/phishing.html';
export const TEST_UNWANTED_URL = 'http://testsafebrowsing.appspot.com/s/unwanted.html';

export interface SafeBrowsingFakeRequest {
  entries: number;
  urls: string[];
  status: number;
}

export interface SafeBrowsingFake {
  baseUrl: string;
  apiKey: string;
  /** Every call received, in order. */
  requests: SafeBrowsingFakeRequest[];
  /** Lists a URL expression (`host/path`, a URL, or a host with a trailing slash for the whole site). */
  addThreat(expression: string, threatType?: string): void;
  removeThreat(expression: string): void;
  /** The next `count` calls answer `status` with Google's error envelope. */
  failNext(status: 400 | 403 | 429 | 500 | 503 | 504, count?: number): void;
  /** The next `count` calls wait `ms` before answering. */
  delayNext(ms: number, count?: number): void;
  /** The cacheDuration string put on matches ("300s" by default; Google's docs show "300.000s"). */
  cacheDuration: string;
  close(): Promise<void>;
}

const VALID_THREAT_TYPES = new Set([
  'THREAT_TYPE_UNSPECIFIED',
  'MALWARE',
  'SOCIAL_ENGINEERING',
  'UNWANTED_SOFTWARE',
  'POTENTIALLY_HARMFUL_APPLICATION',
]);
const VALID_PLATFORMS = new Set([
  'PLATFORM_TYPE_UNSPECIFIED',
  'WINDOWS',
  'LINUX',
  'ANDROID',
  'OSX',
  'IOS',
  'ANY_PLATFORM',
  'ALL_PLATFORMS',
  'CHROME',
]);
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/**
 * The lookup expressions Safe Browsing tries for a URL: host suffixes (up to 5, the exact host first)
 * crossed with path prefixes (the exact path with and without query, then / and up to 4 directories).
 */
export function getLookupExpressions(value: string): string[] {
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    return [];
  }
  const host = url.hostname.toLowerCase().replace(/\.+$/, '');
  const labels = host.split('.');
  const hosts = [host];
  if (!/^[\d.]+$/.test(host) && !host.startsWith('[')) {
    for (let i = Math.max(1, labels.length - 5); i < labels.length - 1; i++)
      hosts.push(labels.slice(i).join('.'));
  }
  const path = url.pathname || '/';
  const paths = new Set<string>();
  if (url.search) paths.add(path + url.search);
  paths.add(path);
  paths.add('/');
  const dirs = path.split('/').filter(Boolean);
  for (let i = 1; i <= Math.min(dirs.length, 4); i++) {
    const dir = `/${dirs.slice(0, i).join('/')}/`;
    if (dir !== path) paths.add(dir);
  }
  return hosts.flatMap((h) => [...paths].map((p) => `${h}${p}`));
}

function toExpression(value: string): string {
  const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  return `${url.hostname.toLowerCase()}${url.pathname}${url.search}`;
}

/** Starts the fake on a free port of 127.0.0.1. */
export async function startSafeBrowsingFake(options: { apiKey?: string } = {}): Promise<SafeBrowsingFake> {
  const apiKey = options.apiKey ?? 'sb-test-key';
  const threats = new Map<string, Set<string>>();
  const failures: number[] = [];
  const delays: number[] = [];
  const requests: SafeBrowsingFakeRequest[] = [];

  const fake: SafeBrowsingFake = {
    baseUrl: '',
    apiKey,
    requests,
    cacheDuration: '300s',
    addThreat(expression, threatType = 'MALWARE') {
      const key = toExpression(expression);
      const set = threats.get(key) ?? new Set<string>();
      set.add(threatType);
      threats.set(key, set);
    },
    removeThreat(expression) {
      threats.delete(toExpression(expression));
    },
    failNext(status, count = 1) {
      for (let i = 0; i < count; i++) failures.push(status);
    },
    delayNext(ms, count = 1) {
      for (let i = 0; i < count; i++) delays.push(ms);
    },
    close: async () => {},
  };
  fake.addThreat(TEST_MALWARE_URL, 'MALWARE');
  fake.addThreat(TEST_PHISHING_URL, 'SOCIAL_ENGINEERING');
  fake.addThreat(TEST_UNWANTED_URL, 'UNWANTED_SOFTWARE');
  fake.addThreat('testsafebrowsing.appspot.com/apiv4/ANY_PLATFORM/MALWARE/URL/', 'MALWARE');
  fake.addThreat(
    'testsafebrowsing.appspot.com/apiv4/ANY_PLATFORM/SOCIAL_ENGINEERING/URL/',
    'SOCIAL_ENGINEERING',
  );

  function send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'Content-Type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(body));
  }
  function sendError(res: ServerResponse, status: number, message: string, reason?: string): void {
    send(res, status, {
      error: {
        code: status,
        message,
        status: STATUS_NAMES[status] ?? 'UNKNOWN',
        ...(reason
          ? {
              details: [
                {
                  '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
                  reason,
                  domain: 'googleapis.com',
                  metadata: { service: 'safebrowsing.googleapis.com' },
                },
              ],
            }
          : {}),
      },
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const record = (status: number, urls: string[] = []) =>
      requests.push({ entries: urls.length, urls, status });
    const delay = delays.shift();
    if (delay) await new Promise((r) => setTimeout(r, delay));
    if (req.method !== 'POST' || url.pathname !== '/v4/threatMatches:find') {
      record(404);
      return sendError(res, 404, 'Not Found');
    }
    const key = url.searchParams.get('key') ?? req.headers['x-goog-api-key'];
    if (!key) {
      record(403);
      return sendError(
        res,
        403,
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      );
    }
    if (key !== apiKey) {
      record(400);
      return sendError(res, 400, 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID');
    }
    const failure = failures.shift();
    if (failure) {
      record(failure);
      const messages: Record<number, string> = {
        429: "Quota exceeded for quota metric 'Requests' and limit 'Requests per day'.",
        403: 'Safe Browsing API has not been used in this project before or it is disabled.',
        500: 'Internal error encountered.',
        503: 'The service is currently unavailable.',
        504: 'The request timed out.',
        400: 'Request contains an invalid argument.',
      };
      return sendError(res, failure, messages[failure] ?? 'error');
    }
    let body: {
      threatInfo?: {
        threatTypes?: string[];
        platformTypes?: string[];
        threatEntryTypes?: string[];
        threatEntries?: { url?: string }[];
      };
    };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      record(400);
      return sendError(res, 400, 'Invalid JSON payload received.');
    }
    const info = body.threatInfo;
    const entries = info?.threatEntries ?? [];
    const urls = entries.map((e) => e.url ?? '');
    if (!info?.threatTypes?.length || info.threatTypes.some((t) => !VALID_THREAT_TYPES.has(t))) {
      record(400, urls);
      return sendError(
        res,
        400,
        "Invalid value at 'threat_info.threat_types': threat type not set or unknown.",
      );
    }
    if (!info.platformTypes?.length || info.platformTypes.some((p) => !VALID_PLATFORMS.has(p))) {
      record(400, urls);
      return sendError(res, 400, "Invalid value at 'threat_info.platform_types': platform type not set.");
    }
    if (!info.threatEntryTypes?.length) {
      record(400, urls);
      return sendError(res, 400, 'threat entry type not set');
    }
    if (entries.length > 500) {
      record(400, urls);
      return sendError(res, 400, 'Request contains more than 500 threat entries.');
    }
    record(200, urls);
    const wanted = new Set(info.threatTypes);
    const matches = [];
    for (const entryUrl of urls) {
      const found = new Set<string>();
      for (const expression of getLookupExpressions(entryUrl)) {
        for (const type of threats.get(expression) ?? []) if (wanted.has(type)) found.add(type);
      }
      for (const threatType of found) {
        matches.push({
          threatType,
          platformType: 'ANY_PLATFORM',
          threatEntryType: 'URL',
          threat: { url: entryUrl },
          cacheDuration: fake.cacheDuration,
        });
      }
    }
    send(res, 200, matches.length > 0 ? { matches } : {});
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}
