// Asking a domain's registry about it over RDAP (RFC 9082 queries, RFC 9083 answers, RFC 7480 HTTP use). The
// registry's service is found in IANA's bootstrap file (RFC 9224: `services: [[[labels…], [urls…]], …]`), kept
// for a day; a setting may name one RDAP URL for every domain instead. Every request goes through the
// outgoing-request rule (ADR 0058): the bootstrap file, not us, chooses where the RDAP request goes.
// A rate limit (429) or an outage is a TransientFailure carrying Retry-After: the workflow's retry waits it out,
// nothing here loops or sleeps.
import { parseRetryAfter } from '../cdn/purge_batches.ts';
import { PermanentFailure, TransientFailure } from '../shared/errors.ts';
import { OutgoingRequestRefused } from '../shared/outgoing_request.ts';
import { parseRdapDomain, type RdapDomain } from './rdap_domain.ts';

const BOOTSTRAP_TTL_MS = 24 * 60 * 60_000;
const REQUEST_TIMEOUT_MS = 15_000;
const MAX_ANSWER_BYTES = 1024 * 1024;
// A registry asking us to wait longer than this is waited for at the next scheduled run instead.
const MAX_RETRY_AFTER_MS = 30 * 60_000;

/** What the registry said about a domain. */
export type RdapAnswer =
  | { kind: 'found'; domain: RdapDomain; server: string }
  | { kind: 'not_found'; server: string };

export interface RdapClient {
  lookupDomain(name: string): Promise<RdapAnswer>;
}

export interface RdapClientOptions {
  /** DOMAIN_WATCH_RDAP_URL: one base for every domain (no bootstrap). */
  rdapUrl?: string | undefined;
  /** DOMAIN_WATCH_RDAP_BOOTSTRAP_URL: IANA's dns.json, or a copy of it. */
  bootstrapUrl: string;
  /** A fetch obeying the outgoing-request rule (createOutgoingFetch). */
  fetch: typeof fetch;
  now?: () => number;
  timeoutMs?: number;
}

type Services = { labels: string[]; urls: string[] }[];

/** The services of a bootstrap file; throws when the file does not have RFC 9224's shape. */
export function parseBootstrap(body: unknown): Services {
  const services = (body as { services?: unknown } | null)?.services;
  if (!Array.isArray(services)) throw new Error('the bootstrap file has no services array');
  return services.flatMap((service) => {
    if (!Array.isArray(service) || !Array.isArray(service[0]) || !Array.isArray(service[1])) return [];
    const labels = (service[0] as unknown[]).filter((l): l is string => typeof l === 'string');
    const urls = (service[1] as unknown[]).filter((u): u is string => typeof u === 'string');
    return [{ labels: labels.map((l) => l.toLowerCase()), urls }];
  });
}

/** The RDAP base for `name`: the service whose label is the longest suffix of it, its https URL first. */
export function findRdapBase(services: Services, name: string): string | null {
  let best: { length: number; urls: string[] } | null = null;
  for (const service of services) {
    for (const label of service.labels) {
      if ((name === label || name.endsWith(`.${label}`)) && (!best || label.length > best.length))
        best = { length: label.length, urls: service.urls };
    }
  }
  if (!best) return null;
  return best.urls.find((u) => u.startsWith('https:')) ?? best.urls[0] ?? null;
}

async function readJson(response: Response, what: string): Promise<unknown> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_ANSWER_BYTES) {
    await response.body?.cancel();
    throw new PermanentFailure(
      `${what} is ${declared} bytes, over ${MAX_ANSWER_BYTES}`,
      'RdapAnswerTooLarge',
    );
  }
  // Read as it arrives and stopped at the cap: a server that sends no length cannot fill the worker's memory.
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  for (;;) {
    const part = reader ? await reader.read() : { done: true as const, value: undefined };
    if (part.done) break;
    size += part.value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader?.cancel();
      throw new PermanentFailure(`${what} is over ${MAX_ANSWER_BYTES} bytes`, 'RdapAnswerTooLarge');
    }
    chunks.push(part.value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new PermanentFailure(`${what} is not JSON`, 'RdapUnreadable');
  }
}

/** 429, 408 and 5xx wait and are retried (Retry-After when sent); any other failure is this answer's end. */
function failureOf(response: Response, what: string, now: number): Error {
  const status = response.status;
  if (status === 429 || status === 408 || status >= 500) {
    const retryAfterMs = parseRetryAfter(response.headers.get('Retry-After'), now);
    return new TransientFailure(
      `${what} answered ${status}${retryAfterMs !== undefined ? ` (Retry-After ${Math.ceil(retryAfterMs / 1000)} s)` : ''}`,
      status === 429 ? 'RdapRateLimited' : 'RdapUnavailable',
      retryAfterMs === undefined ? undefined : Math.min(retryAfterMs, MAX_RETRY_AFTER_MS),
    );
  }
  return new PermanentFailure(`${what} answered ${status}`, 'RdapRefused');
}

export function createRdapClient(options: RdapClientOptions): RdapClient {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  let bootstrap: { services: Services; until: number } | null = null;

  async function get(url: string, what: string): Promise<Response> {
    try {
      return await options.fetch(url, {
        headers: { Accept: 'application/rdap+json, application/json' },
        redirect: 'follow',
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const e = error as Error;
      if (e instanceof OutgoingRequestRefused) throw new PermanentFailure(`${what}: ${e.message}`, 'Refused');
      const reason =
        e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `network error (${e.name})`;
      throw new TransientFailure(`${what}: ${reason}`, 'RdapUnavailable');
    }
  }

  async function services(): Promise<Services> {
    if (bootstrap && bootstrap.until > now()) return bootstrap.services;
    const what = 'the RDAP bootstrap file';
    const response = await get(options.bootstrapUrl, what);
    if (response.status !== 200) {
      await response.body?.cancel();
      throw failureOf(response, what, now());
    }
    let parsed: Services;
    try {
      parsed = parseBootstrap(await readJson(response, what));
    } catch (error) {
      if (error instanceof PermanentFailure) throw error;
      throw new PermanentFailure(`${what}: ${(error as Error).message}`, 'RdapUnreadable');
    }
    bootstrap = { services: parsed, until: now() + BOOTSTRAP_TTL_MS };
    return parsed;
  }

  return {
    async lookupDomain(name) {
      const base = options.rdapUrl ?? findRdapBase(await services(), name);
      if (!base)
        throw new PermanentFailure(`no RDAP service for ${name} in the bootstrap file`, 'RdapNoService');
      const server = new URL(base).host;
      const url = `${base.replace(/\/+$/, '')}/domain/${encodeURIComponent(name)}`;
      const what = `RDAP at ${server}`;
      const response = await get(url, what);
      if (response.status === 404) {
        await response.body?.cancel();
        return { kind: 'not_found', server };
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        throw failureOf(response, what, now());
      }
      const domain = parseRdapDomain(await readJson(response, `${what}'s answer`));
      if (!domain) throw new PermanentFailure(`${what} answered without a domain object`, 'RdapUnreadable');
      return { kind: 'found', domain, server };
    },
  };
}
