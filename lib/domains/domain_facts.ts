// What the watch decides from what it read: which names it watches, and when each fact is fine.
import type { DomainFactName } from '../stores/domain_watch_store.ts';

export type { DomainFactName };

import { ALARMING_STATUSES, LOCK_STATUSES, type RdapDomain } from './rdap_domain.ts';
import type { TlsCertificateRead } from './tls_certificate.ts';

/** The facts, in the order the operations page and the metrics show them. */
export const DOMAIN_FACTS: readonly DomainFactName[] = [
  'registration',
  'certificate',
  'reputation',
  'dnssec',
  'lock',
];

/** Days left under which a registration or a certificate is no longer fine (the first alert's threshold). */
export const WARN_DAYS = 30;

const DAY_MS = 86_400_000;

/** Days (fractional) from `nowMs` to `at`; negative once past. */
export function daysLeft(at: Date, nowMs: number): number {
  return (at.getTime() - nowMs) / DAY_MS;
}

/** What the watch reads: host names (certificate, reputation) and registered domains (RDAP). */
export interface WatchedNames {
  hosts: string[];
  domains: string[];
}

/** A name the watch can read: not an IP address, not loopback, with at least two labels. */
function isWatchableHost(host: string): boolean {
  if (/^[\d.]+$/.test(host) || host.includes(':')) return false;
  if (host === 'localhost' || host.endsWith('.localhost')) return false;
  return host.includes('.');
}

/**
 * The short host and the app host (once when they are the same), and the registered domains: DOMAIN_WATCH_DOMAINS,
 * or each host's last two labels (a host under a two-label public suffix such as `co.uk` needs the setting).
 */
export function getWatchedNames(config: {
  shortBaseUrl: string;
  appBaseUrl: string;
  domainWatch: { domains: string[] };
}): WatchedNames {
  const hosts = [
    ...new Set(
      [config.shortBaseUrl, config.appBaseUrl].map((u) =>
        new URL(u).hostname.toLowerCase().replace(/\.$/, ''),
      ),
    ),
  ].filter(isWatchableHost);
  const domains =
    config.domainWatch.domains.length > 0
      ? config.domainWatch.domains
      : [...new Set(hosts.map((h) => h.split('.').slice(-2).join('.')))];
  return { hosts, domains };
}

/** The domain watch's Schedule: its interval and names, or none (`off`, or only IP addresses to watch). */
export function getDomainWatchSchedule(
  config: Parameters<typeof getWatchedNames>[0] & { domainWatch: { interval: string | undefined } },
): { interval: string; hosts: string[]; domains: string[] } | undefined {
  const names = getWatchedNames(config);
  const interval = config.domainWatch.interval;
  return interval && names.hosts.length + names.domains.length > 0 ? { interval, ...names } : undefined;
}

/** A fact as judged: fine or not (null: not shown by the source), with what a person needs to see. */
export interface JudgedFact {
  fact: DomainFactName;
  ok: boolean | null;
  expiresAt: Date | null;
  detail: Record<string, unknown>;
}

/** Registration, DNSSEC and lock from one RDAP answer (or from the registry's 404: no such domain). */
export function judgeRegistration(
  answer: { kind: 'found'; domain: RdapDomain; server: string } | { kind: 'not_found'; server: string },
  nowMs: number,
): JudgedFact[] {
  if (answer.kind === 'not_found') {
    const detail = { server: answer.server, notFound: true };
    return [
      { fact: 'registration', ok: false, expiresAt: null, detail },
      { fact: 'dnssec', ok: null, expiresAt: null, detail },
      { fact: 'lock', ok: null, expiresAt: null, detail },
    ];
  }
  const d = answer.domain;
  const alarming = d.statuses.filter((s) => (ALARMING_STATUSES as readonly string[]).includes(s));
  const locks = d.statuses.filter((s) => (LOCK_STATUSES as readonly string[]).includes(s));
  const registrationOk =
    d.expiresAt === null ? null : alarming.length === 0 && daysLeft(d.expiresAt, nowMs) > WARN_DAYS;
  const common = { server: answer.server };
  return [
    {
      fact: 'registration',
      ok: alarming.length > 0 ? false : registrationOk,
      expiresAt: d.expiresAt,
      detail: {
        ...common,
        statuses: d.statuses,
        ...(alarming.length > 0 ? { alarming } : {}),
        registeredAt: d.registeredAt?.toISOString() ?? null,
        lastChangedAt: d.lastChangedAt?.toISOString() ?? null,
        registrar: d.registrar,
      },
    },
    {
      fact: 'dnssec',
      ok: d.delegationSigned,
      expiresAt: null,
      detail: { ...common, signed: d.delegationSigned },
    },
    {
      fact: 'lock',
      // A registry that shows statuses shows the locks among them; one that shows none says nothing of locks.
      ok: d.statuses.length === 0 ? null : locks.some((s) => s.endsWith('transfer prohibited')),
      expiresAt: null,
      detail: { ...common, locks },
    },
  ];
}

/** The certificate is fine when trusted, for the host, and not within WARN_DAYS of its end. */
export function judgeCertificate(read: TlsCertificateRead, nowMs: number): JudgedFact {
  return {
    fact: 'certificate',
    ok: read.trusted && read.nameMatches && daysLeft(read.validTo, nowMs) > WARN_DAYS,
    expiresAt: read.validTo,
    detail: {
      port: read.port,
      issuer: read.issuer,
      names: read.names,
      nameMatches: read.nameMatches,
      trusted: read.trusted,
      ...(read.trustError ? { trustError: read.trustError } : {}),
      validFrom: read.validFrom.toISOString(),
      fingerprint256: read.fingerprint256,
    },
  };
}
