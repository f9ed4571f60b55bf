// The watch's reads, one per source, each writing what it read to domain_watch_facts (the activities of
// workflows/watch_domains.ts call these). A source that cannot answer now throws a TransientFailure (the
// workflow retries it); once retries are spent the workflow records the failure, and what was read before stays.
import { PermanentFailure } from '../shared/errors.ts';
import {
  type DomainFactName,
  recordDomainFactErrors,
  upsertDomainFactRead,
} from '../stores/domain_watch_store.ts';
import type { Db } from '../stores/sql.ts';
import { judgeCertificate, judgeRegistration } from './domain_facts.ts';
import type { DomainWatchDeps } from './domain_watch_deps.ts';
import { readServedCertificate } from './tls_certificate.ts';

export interface DomainWatchStepDeps {
  sql: Db;
  domainWatch?: DomainWatchDeps | undefined;
}

function watchDeps(deps: DomainWatchStepDeps): DomainWatchDeps {
  if (!deps.domainWatch) throw new PermanentFailure('the domain watch is not configured in this worker');
  return deps.domainWatch;
}

/** The RDAP facts of one registered domain: registration (expiry, statuses), DNSSEC, registrar lock. */
export async function readDomainRegistration(
  deps: DomainWatchStepDeps,
  input: { domain: string },
): Promise<{ domain: string; found: boolean; expiresAt: string | null }> {
  const watch = watchDeps(deps);
  const answer = await watch.rdap.lookupDomain(input.domain);
  const now = (watch.now ?? Date.now)();
  const facts = judgeRegistration(answer, now);
  for (const f of facts) await upsertDomainFactRead(deps.sql, { subject: input.domain, ...f });
  const expiresAt = answer.kind === 'found' ? (answer.domain.expiresAt?.toISOString() ?? null) : null;
  return { domain: input.domain, found: answer.kind === 'found', expiresAt };
}

/** The certificate one host serves on DOMAIN_WATCH_TLS_PORT. */
export async function readTlsCertificate(
  deps: DomainWatchStepDeps,
  input: { host: string },
): Promise<{ host: string; ok: boolean | null; expiresAt: string }> {
  const watch = watchDeps(deps);
  const read = await readServedCertificate({ host: input.host, ...watch.tls });
  const judged = judgeCertificate(read, (watch.now ?? Date.now)());
  await upsertDomainFactRead(deps.sql, { subject: input.host, ...judged });
  return { host: input.host, ok: judged.ok, expiresAt: read.validTo.toISOString() };
}

/**
 * Whether Safe Browsing lists our own hosts (what a reader's browser would warn about): `https://{host}/`, which
 * Safe Browsing matches on the host and every parent domain. Without a key nothing is read; when Safe Browsing
 * cannot be asked (its client backs off on its own), the attempt is recorded and the last answer stays.
 */
export async function readDomainReputation(
  deps: DomainWatchStepDeps,
  input: { hosts: string[] },
): Promise<{ flagged: string[]; unavailable: string[]; skipped: boolean }> {
  const watch = watchDeps(deps);
  if (!watch.safeBrowsing) return { flagged: [], unavailable: [], skipped: true };
  const urlOf = (host: string) => `https://${host}/`;
  const answer = await watch.safeBrowsing.lookup(input.hosts.map(urlOf));
  const flagged: string[] = [];
  const unavailable: string[] = [];
  for (const host of input.hosts) {
    if (answer.unavailable.has(urlOf(host))) {
      unavailable.push(host);
      await recordDomainFactErrors(deps.sql, host, ['reputation'], 'Safe Browsing could not be asked');
      continue;
    }
    const threats = answer.threats.get(urlOf(host)) ?? [];
    if (threats.length > 0) flagged.push(host);
    await upsertDomainFactRead(deps.sql, {
      subject: host,
      fact: 'reputation',
      ok: threats.length === 0,
      expiresAt: null,
      detail: { threats },
    });
  }
  return { flagged, unavailable, skipped: false };
}

/** A read that failed for good this run: its facts keep what was read before, with the error and the time. */
export async function recordDomainWatchFailure(
  deps: DomainWatchStepDeps,
  input: { subject: string; facts: DomainFactName[]; error: string },
): Promise<void> {
  await recordDomainFactErrors(deps.sql, input.subject, input.facts, input.error);
}
