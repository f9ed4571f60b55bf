// The Internet Archive as Lifeline uses it (docs/VENDORS.md, "Internet Archive"): Save Page Now 2 to capture a
// destination, its status endpoint to learn the capture's timestamp, and the Wayback availability API for the
// closest existing snapshot. Failures are typed for the workflow that retries them (never a reader's request):
// a rate limit or an outage is a TransientFailure (with Retry-After when the Archive gives one), refused keys
// or a URL the Archive will not take a PermanentFailure.
import { PermanentFailure, TransientFailure } from '../shared/errors.ts';

/** How long one request to the Archive may take (a capture request answers at once with a job id). */
const REQUEST_TIMEOUT_MS = 20_000;
/** When a 429 carries no Retry-After: the Archive asks for a minute between bursts. */
const DEFAULT_RATE_LIMIT_WAIT_MS = 60_000;
/** A Retry-After beyond this is capped: the workflow retries, and the activity's schedule stays bounded. */
const MAX_RATE_LIMIT_WAIT_MS = 15 * 60_000;
/** The most of an Archive answer we read. */
const MAX_BODY_BYTES = 256 * 1024;

export type SaveStatus =
  | { state: 'pending' }
  | { state: 'success'; snapshotUrl: string; capturedAt: Date }
  | { state: 'error'; statusExt: string };

export interface Snapshot {
  url: string;
  capturedAt: Date;
}

export interface InternetArchive {
  /** Asks Save Page Now to capture `url`; the job id to poll. */
  requestSave(url: string): Promise<{ jobId: string }>;
  /** Where the capture `jobId` stands. */
  saveStatus(jobId: string): Promise<SaveStatus>;
  /** The existing snapshot of `url` closest to `at` (default: the newest), or null when there is none. */
  closestSnapshot(url: string, at?: Date): Promise<Snapshot | null>;
}

export interface InternetArchiveOptions {
  saveBaseUrl: string;
  availabilityBaseUrl: string;
  keys: { accessKey: string; secretKey: string } | undefined;
  /** The outgoing-request fetch (lib/shared/outgoing_request.ts): the base URLs are settings. */
  fetch: typeof fetch;
  timeoutMs?: number;
}

/** A Wayback timestamp (YYYYMMDDhhmmss, UTC) as a Date, or null when malformed. */
export function parseWaybackTimestamp(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})?(\d{2})?(\d{2})?$/.exec(value);
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00'] = m;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** The address readers get for a snapshot: https on the Wayback Machine's own host (the API answers http). */
export function toReaderSnapshotUrl(url: string): string {
  return url.replace(/^http:\/\/web\.archive\.org\//i, 'https://web.archive.org/');
}

/** Retry-After (seconds or an HTTP date) in milliseconds, within bounds. */
function retryAfterMs(header: string | null, now = Date.now()): number {
  if (header === null) return DEFAULT_RATE_LIMIT_WAIT_MS;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - now;
  if (!Number.isFinite(ms)) return DEFAULT_RATE_LIMIT_WAIT_MS;
  return Math.min(Math.max(ms, 1000), MAX_RATE_LIMIT_WAIT_MS);
}

export function createInternetArchive(options: InternetArchiveOptions): InternetArchive {
  const saveBase = options.saveBaseUrl.replace(/\/+$/, '');
  const availabilityBase = options.availabilityBaseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;

  function authorization(): string {
    if (!options.keys)
      throw new PermanentFailure(
        'Save Page Now needs ARCHIVE_ACCESS_KEY and ARCHIVE_SECRET_KEY',
        'ArchiveKeys',
      );
    return `LOW ${options.keys.accessKey}:${options.keys.secretKey}`;
  }

  /** One request; network failures and 5xx are transient, the answer's JSON body otherwise. */
  async function call(
    what: string,
    url: string,
    init: RequestInit,
  ): Promise<{ status: number; body: unknown; headers: Headers }> {
    let response: Response;
    try {
      response = await options.fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'OutgoingRequestRefused')
        throw new PermanentFailure(`${what}: ${(error as Error).message}`, 'ArchiveRefused');
      throw new TransientFailure(
        `${what}: ${name === 'TimeoutError' ? 'timed out' : `network error (${name})`}`,
        'ArchiveUnavailable',
      );
    }
    const text = await readBounded(response);
    if (response.status === 429) {
      throw new TransientFailure(
        `${what}: rate limited (429)`,
        'ArchiveRateLimited',
        retryAfterMs(response.headers.get('retry-after')),
      );
    }
    if (response.status >= 500)
      throw new TransientFailure(`${what}: the Archive answered ${response.status}`, 'ArchiveUnavailable');
    if (response.status === 401 || response.status === 403) {
      throw new PermanentFailure(`${what}: the Archive refused the keys (${response.status})`, 'ArchiveKeys');
    }
    let body: unknown = null;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      throw new TransientFailure(`${what}: unreadable answer (${response.status})`, 'ArchiveUnavailable');
    }
    return { status: response.status, body, headers: response.headers };
  }

  return {
    async requestSave(url) {
      const { status, body } = await call('Save Page Now', `${saveBase}/save`, {
        method: 'POST',
        headers: {
          Accept: 'application/json',
          Authorization: authorization(),
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        // skip_first_archive: we do not need to know whether it is the first capture (faster, per the docs).
        body: new URLSearchParams({ url, skip_first_archive: '1' }).toString(),
      });
      const answer = (body ?? {}) as { job_id?: unknown; status_ext?: unknown };
      if (status === 200 && typeof answer.job_id === 'string' && answer.job_id !== '')
        return { jobId: answer.job_id };
      const ext = typeof answer.status_ext === 'string' ? answer.status_ext : `HTTP ${status}`;
      throw new PermanentFailure(`Save Page Now refused the capture: ${ext}`, 'ArchiveRefused');
    },

    async saveStatus(jobId) {
      const { body } = await call(
        'Save Page Now status',
        `${saveBase}/save/status/${encodeURIComponent(jobId)}`,
        {
          headers: { Accept: 'application/json', Authorization: authorization() },
        },
      );
      const answer = (body ?? {}) as {
        status?: unknown;
        timestamp?: unknown;
        original_url?: unknown;
        status_ext?: unknown;
      };
      if (answer.status === 'pending') return { state: 'pending' };
      if (answer.status === 'success') {
        const capturedAt = parseWaybackTimestamp(answer.timestamp);
        if (capturedAt && typeof answer.original_url === 'string') {
          return {
            state: 'success',
            snapshotUrl: `https://web.archive.org/web/${answer.timestamp as string}/${answer.original_url}`,
            capturedAt,
          };
        }
        throw new TransientFailure('Save Page Now status: success without a timestamp', 'ArchiveUnavailable');
      }
      if (answer.status === 'error') {
        return {
          state: 'error',
          statusExt: typeof answer.status_ext === 'string' ? answer.status_ext.slice(0, 100) : 'error',
        };
      }
      throw new TransientFailure('Save Page Now status: unexpected answer', 'ArchiveUnavailable');
    },

    async closestSnapshot(url, at) {
      const query = new URLSearchParams({ url });
      if (at) query.set('timestamp', at.toISOString().replace(/[-:T]/g, '').slice(0, 14));
      const { status, body } = await call(
        'Wayback availability',
        `${availabilityBase}/wayback/available?${query}`,
        {
          headers: { Accept: 'application/json' },
        },
      );
      if (status !== 200)
        throw new TransientFailure(`Wayback availability: HTTP ${status}`, 'ArchiveUnavailable');
      const closest = (body as { archived_snapshots?: { closest?: Record<string, unknown> } } | null)
        ?.archived_snapshots?.closest;
      if (closest?.available !== true || typeof closest.url !== 'string') return null;
      // A snapshot of an error page is no copy of the article.
      if (typeof closest.status === 'string' && !/^2\d\d$/.test(closest.status)) return null;
      const capturedAt = parseWaybackTimestamp(closest.timestamp);
      if (!capturedAt) return null;
      return { url: toReaderSnapshotUrl(closest.url), capturedAt };
    },
  };
}

async function readBounded(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw new TransientFailure('the Archive answered more than expected', 'ArchiveUnavailable');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
