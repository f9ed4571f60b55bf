// A real HTTP server reproducing the Internet Archive's two contracts Lifeline uses (docs/VENDORS.md, "Internet
// Archive"): Save Page Now 2 (`POST /save` with `Authorization: LOW accesskey:secret` and a form body `url=…`,
// answering `{url, job_id}`; `GET /save/status/{job_id}` answering `pending` until the capture is done, then
// `success` with `timestamp` and `original_url`, or `error` with `status_ext`), 429 with Retry-After when too many
// captures run, and the Wayback availability API (`GET /wayback/available?url=…&timestamp=…` answering
// `{url, archived_snapshots: {closest: {available, url, timestamp, status}}}`, or `archived_snapshots: {}`).
// One server answers both base URLs (ARCHIVE_SAVE_BASE_URL and ARCHIVE_AVAILABILITY_BASE_URL).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface InternetArchiveFakeRequest {
  method: string;
  path: string;
  status: number;
  /** The form's or query's `url`, when there was one. */
  url?: string;
  /** When it arrived (Date.now()): how far apart a client's requests came. */
  at: number;
}

export interface InternetArchiveFake {
  baseUrl: string;
  accessKey: string;
  secretKey: string;
  /** Every request, in order. */
  requests: InternetArchiveFakeRequest[];
  /** Status polls a capture answers `pending` before it ends (default 1). */
  pendingPolls: number;
  /** The next `count` capture requests answer 429 with `Retry-After: retryAfterSeconds`. */
  rateLimitNext(count?: number, retryAfterSeconds?: number): void;
  /** The next `count` requests of `endpoint` answer `status` (a 5xx: the Archive's own outage). */
  failNext(endpoint: 'save' | 'status' | 'available', status: 500 | 502 | 503, count?: number): void;
  /** Captures of `url` end in `status: error` with this status_ext (e.g. error:not-found, error:blocked-url). */
  failCapture(url: string, statusExt: string): void;
  /** Seeds an existing snapshot (timestamp YYYYMMDDhhmmss) for the availability API. */
  addSnapshot(url: string, timestamp: string, status?: string): void;
  /** Jobs started, by job id. */
  jobs: Map<string, { url: string; polls: number; state: 'pending' | 'success' | 'error' }>;
  close(): Promise<void>;
}

/** What the availability API compares: no scheme, no `www.`, no trailing slash, lower-case host. */
function availabilityKey(value: string): string {
  const withoutScheme = value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const slash = withoutScheme.indexOf('/');
  const host = (slash < 0 ? withoutScheme : withoutScheme.slice(0, slash))
    .toLowerCase()
    .replace(/^www\./, '');
  const rest = slash < 0 ? '' : withoutScheme.slice(slash);
  return `${host}${rest}`.replace(/\/+$/, '');
}

/** A Wayback timestamp (YYYYMMDDhhmmss, UTC) for a date. */
export function waybackTimestamp(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** Starts the fake on a free port of 127.0.0.1. */
export async function startInternetArchiveFake(
  options: { accessKey?: string; secretKey?: string } = {},
): Promise<InternetArchiveFake> {
  const accessKey = options.accessKey ?? 'ia-access-test';
  const secretKey = options.secretKey ?? 'ia-secret-test';
  const requests: InternetArchiveFakeRequest[] = [];
  const rateLimits: number[] = [];
  const failures: Record<'save' | 'status' | 'available', number[]> = { save: [], status: [], available: [] };
  const captureFailures = new Map<string, string>();
  const snapshots = new Map<string, { timestamp: string; status: string; url: string }[]>();
  const jobs: InternetArchiveFake['jobs'] = new Map();
  let nextJob = 1;

  const fake: InternetArchiveFake = {
    baseUrl: '',
    accessKey,
    secretKey,
    requests,
    pendingPolls: 1,
    jobs,
    rateLimitNext(count = 1, retryAfterSeconds = 1) {
      for (let i = 0; i < count; i++) rateLimits.push(retryAfterSeconds);
    },
    failNext(endpoint, status, count = 1) {
      for (let i = 0; i < count; i++) failures[endpoint].push(status);
    },
    failCapture(url, statusExt) {
      captureFailures.set(url, statusExt);
    },
    addSnapshot(url, timestamp, status = '200') {
      const key = availabilityKey(url);
      const list = snapshots.get(key) ?? [];
      list.push({ timestamp, status, url });
      snapshots.set(key, list);
    },
    close: async () => {},
  };

  function send(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  function authorized(req: IncomingMessage): boolean {
    return req.headers.authorization === `LOW ${accessKey}:${secretKey}`;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const record = (status: number, asked?: string) =>
      requests.push({
        method: req.method ?? '',
        path: url.pathname,
        status,
        at: Date.now(),
        ...(asked !== undefined ? { url: asked } : {}),
      });

    if (req.method === 'GET' && url.pathname === '/wayback/available') {
      const asked = url.searchParams.get('url') ?? '';
      const failure = failures.available.shift();
      if (failure) {
        record(failure, asked);
        return send(res, failure, { error: 'Service Unavailable' });
      }
      record(200, asked);
      const found = asked ? snapshots.get(availabilityKey(asked)) : undefined;
      if (!found || found.length === 0) return send(res, 200, { url: asked, archived_snapshots: {} });
      // The closest to `timestamp` (default: the newest), as the Wayback Machine picks it.
      const wanted = Number((url.searchParams.get('timestamp') ?? '99991231235959').padEnd(14, '0'));
      const closest = [...found].sort(
        (a, b) => Math.abs(Number(a.timestamp) - wanted) - Math.abs(Number(b.timestamp) - wanted),
      )[0] as { timestamp: string; status: string; url: string };
      return send(res, 200, {
        url: asked,
        archived_snapshots: {
          closest: {
            status: closest.status,
            available: true,
            // The API answers http:// snapshot URLs.
            url: `http://web.archive.org/web/${closest.timestamp}/${closest.url}`,
            timestamp: closest.timestamp,
          },
        },
      });
    }

    if (req.method === 'POST' && url.pathname === '/save') {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const asked = form.get('url') ?? undefined;
      if (!authorized(req)) {
        record(401, asked);
        return send(res, 401, { message: 'You need to be logged in to use Save Page Now.' });
      }
      const retryAfter = rateLimits.shift();
      if (retryAfter !== undefined) {
        record(429, asked);
        return send(
          res,
          429,
          {
            status: 'error',
            status_ext: 'error:too-many-requests',
            message: 'You have already reached the limit of active sessions. Please try again later.',
          },
          { 'Retry-After': String(retryAfter) },
        );
      }
      const failure = failures.save.shift();
      if (failure) {
        record(failure, asked);
        return send(res, failure, { message: 'Service Unavailable' });
      }
      if (!asked || !/^https?:\/\/[^/\s]+/i.test(asked)) {
        record(400, asked);
        return send(res, 400, {
          status: 'error',
          status_ext: 'error:invalid-url-syntax',
          message: 'The URL syntax is not valid.',
        });
      }
      const jobId = `spn2-${(nextJob++).toString(16).padStart(40, '0')}`;
      jobs.set(jobId, { url: asked, polls: 0, state: 'pending' });
      record(200, asked);
      return send(res, 200, { url: asked, job_id: jobId });
    }

    const status = /^\/save\/status\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && status) {
      if (!authorized(req)) {
        record(401);
        return send(res, 401, { message: 'You need to be logged in to use Save Page Now.' });
      }
      const failure = failures.status.shift();
      if (failure) {
        record(failure);
        return send(res, failure, { message: 'Service Unavailable' });
      }
      const jobId = decodeURIComponent(status[1] as string);
      const job = jobs.get(jobId);
      record(200, job?.url);
      if (!job) {
        return send(res, 200, {
          status: 'error',
          job_id: jobId,
          status_ext: 'error:not-found',
          message: 'Job not found.',
        });
      }
      job.polls++;
      if (job.polls <= fake.pendingPolls) {
        return send(res, 200, { status: 'pending', job_id: jobId, resources: [] });
      }
      const statusExt = captureFailures.get(job.url);
      if (statusExt) {
        job.state = 'error';
        return send(res, 200, {
          status: 'error',
          job_id: jobId,
          status_ext: statusExt,
          message: 'The capture failed.',
          original_url: job.url,
        });
      }
      job.state = 'success';
      const timestamp = waybackTimestamp(new Date());
      fake.addSnapshot(job.url, timestamp);
      return send(res, 200, {
        status: 'success',
        job_id: jobId,
        original_url: job.url,
        timestamp,
        duration_sec: 6.2,
        resources: [job.url],
      });
    }

    record(404);
    return send(res, 404, { message: 'Not Found' });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, { message: 'fake failed' });
      else res.end();
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
