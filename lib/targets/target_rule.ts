/**
 * The one target rule: where a canonical target (canonical_url.ts) may point under the deployment's policy:
 * on ALLOWED_TARGET_HOSTS or a subdomain (empty: any host), never on the short domain itself (a link to it would
 * loop). Every way a target enters (API, UI forms, WordPress permalinks, Bitly imports, backfill, reconciliation,
 * retargets) applies it, and the redirect path re-applies it to stored records (ADR 0017).
 *
 * targetRuleProblem is the call on the hot path: an already canonical URL of the usual shape is recognised by one regular-expression test and compared with
 * the policy in place, without allocating.
 */

import {
  type CanonicalTarget,
  canonicalizeHost,
  canonicalizeTarget,
  DEFAULT_PORTS,
  findCanonicalHostEnd,
  TARGET_PROBLEMS,
} from './canonical_url.ts';

/** Where targets may point: canonical host names, from createCanonicalTargetPolicy. */
export interface CanonicalTargetPolicy {
  /** Canonical host names; a target must be one of them or a subdomain. Empty: any host. */
  readonly allowedHosts: readonly string[];
  /** The short domain's canonical host name: a link to it would loop. */
  readonly shortHost: string;
  /** The short domain's port, explicit or its scheme's default ('443', '80', '8080'). */
  readonly shortPort: string;
  /** The other short domains' canonical host names (SHORT_DOMAINS after the first, ADR 0078): on any port, ours. */
  readonly otherShortHosts?: readonly string[];
}

/** True when url[hostStart, hostEnd) is one of `hosts` (no copy of the host is made). */
function isOneOf(url: string, hostStart: number, hostEnd: number, hosts: readonly string[]): boolean {
  for (let i = 0; i < hosts.length; i++) {
    const host = hosts[i]!;
    if (host.length === hostEnd - hostStart && url.startsWith(host, hostStart)) return true;
  }
  return false;
}

/**
 * Why `url` may not be stored or sent as a redirect target under `policy`, or null: it must already be
 * canonical (canonicalizeTarget's output), not on the short domain, and on an allowed host or a subdomain of
 * one. Allocates nothing for an allowed canonical ASCII URL.
 */
export function targetRuleProblem(url: string, policy: CanonicalTargetPolicy): string | null {
  const hostEnd = findCanonicalHostEnd(url);
  if (hostEnd < 0) {
    const canonical = canonicalizeTarget(url);
    if (!canonical.ok) return canonical.problem;
    if (canonical.url !== url) return TARGET_PROBLEMS.notCanonical;
    return hostRuleProblem(canonical.host, policy);
  }
  const hostStart = url.charCodeAt(4) === 115 ? 8 : 7;
  const length = hostEnd - hostStart;
  // No explicit port here: a default port on the short host name is the short domain.
  if (length === policy.shortHost.length && url.startsWith(policy.shortHost, hostStart)) {
    return TARGET_PROBLEMS.ownHost;
  }
  const others = policy.otherShortHosts;
  if (others !== undefined && others.length > 0 && isOneOf(url, hostStart, hostEnd, others)) {
    return TARGET_PROBLEMS.ownHost;
  }
  const allowed = policy.allowedHosts;
  if (allowed.length === 0) return null;
  for (let i = 0; i < allowed.length; i++) {
    const pattern = allowed[i]!;
    const start = hostEnd - pattern.length;
    if (start < hostStart || !url.startsWith(pattern, start)) continue;
    if (start === hostStart || url.charCodeAt(start - 1) === 46 /* . */) return null;
  }
  return notAllowedProblem(url.slice(hostStart, hostEnd));
}

/** canonicalizeTarget, then targetRuleProblem on the result: what every way in calls. */
export function checkTarget(value: string, policy: CanonicalTargetPolicy): CanonicalTarget {
  const canonical = canonicalizeTarget(value);
  if (!canonical.ok) return canonical;
  const problem = hostRuleProblem(canonical.host, policy);
  return problem === null ? canonical : refuse(problem);
}

/** Builds the policy from configuration, canonicalising every host; throws on a host that has no canonical form. */
export function createCanonicalTargetPolicy(config: {
  allowedTargetHosts: readonly string[];
  shortBaseUrl: string;
  shortDomains?: readonly string[];
}): CanonicalTargetPolicy {
  const allowedHosts = config.allowedTargetHosts.map((host) => {
    const canonical = canonicalizeHost(host);
    if (canonical === null) throw new Error(`ALLOWED_TARGET_HOSTS: ${host} is not a host name`);
    return canonical;
  });
  const short = readShortBase(config.shortBaseUrl);
  if (short === null) throw new Error(`SHORT_BASE_URL: ${config.shortBaseUrl} is not an http(s) URL`);
  const otherShortHosts = (config.shortDomains ?? [])
    .slice(1)
    .map((host) => canonicalizeHost(host))
    .filter((host): host is string => host !== null && host !== short.hostname);
  return Object.freeze({
    allowedHosts: Object.freeze([...new Set(allowedHosts)]),
    shortHost: short.hostname,
    shortPort: short.port,
    otherShortHosts: Object.freeze(otherShortHosts),
  });
}

/**
 * True when `hostname` is `allowed` (one host name or a list) or a subdomain of it, compared in canonical form:
 * case, a trailing dot and IDN spelling do not matter; a host name without a canonical form matches nothing.
 */
export function hostMatches(hostname: string, allowed: string | readonly string[]): boolean {
  const host = canonicalizeHost(hostname);
  if (host === null) return false;
  const patterns = typeof allowed === 'string' ? [allowed] : allowed;
  for (const entry of patterns) {
    const pattern = canonicalizeHost(entry);
    if (pattern === null) continue;
    if (host === pattern) return true;
    if (
      host.length > pattern.length &&
      host.endsWith(pattern) &&
      host.charCodeAt(host.length - pattern.length - 1) === 46
    ) {
      return true;
    }
  }
  return false;
}

let lastShortBase: { url: string; hostname: string; port: string } | null = null;

/**
 * True when a canonical target host (`host` of canonicalizeTarget: name plus any non-default port) is the
 * short domain of `shortBaseUrl`: the same name, on a default port or on the short domain's own port. So
 * `https://sho.rt.:443/x` and `http://SHO.RT/x` are ours; `https://sho.rt:8443/x` is another service.
 */
export function isOwnShortHost(canonicalHost: string, shortBaseUrl: string): boolean {
  if (typeof canonicalHost !== 'string' || typeof shortBaseUrl !== 'string') return false;
  let short = lastShortBase;
  if (short === null || short.url !== shortBaseUrl) {
    const read = readShortBase(shortBaseUrl);
    if (read === null) return false;
    short = { url: shortBaseUrl, ...read };
    lastShortBase = short;
  }
  const { hostname, port } = splitHostPort(canonicalHost);
  const name = canonicalizeHost(hostname);
  return name === short.hostname && (port === '' || port === short.port);
}

function hostRuleProblem(host: string, policy: CanonicalTargetPolicy): string | null {
  const { hostname, port } = splitHostPort(host);
  if (hostname === policy.shortHost && (port === '' || port === policy.shortPort))
    return TARGET_PROBLEMS.ownHost;
  if (policy.otherShortHosts?.includes(hostname)) return TARGET_PROBLEMS.ownHost;
  const allowed = policy.allowedHosts;
  if (allowed.length === 0) return null;
  for (const pattern of allowed) {
    if (hostname === pattern) return null;
    if (
      hostname.length > pattern.length &&
      hostname.endsWith(pattern) &&
      hostname.charCodeAt(hostname.length - pattern.length - 1) === 46
    ) {
      return null;
    }
  }
  return notAllowedProblem(hostname);
}

function notAllowedProblem(hostname: string): string {
  return `host ${hostname} is not in ALLOWED_TARGET_HOSTS`;
}

function readShortBase(shortBaseUrl: string): { hostname: string; port: string } | null {
  let url: URL;
  try {
    url = new URL(shortBaseUrl);
  } catch {
    return null;
  }
  const defaultPort = DEFAULT_PORTS[url.protocol];
  if (defaultPort === undefined) return null;
  const hostname = canonicalizeHost(url.hostname);
  return hostname === null ? null : { hostname, port: url.port === '' ? defaultPort : url.port };
}

function splitHostPort(host: string): { hostname: string; port: string } {
  const colon = host.lastIndexOf(':');
  if (colon < 0 || host.indexOf(']', colon) >= 0) return { hostname: host, port: '' };
  return { hostname: host.slice(0, colon), port: host.slice(colon + 1) };
}

function refuse(problem: string): CanonicalTarget {
  return { ok: false, problem };
}
