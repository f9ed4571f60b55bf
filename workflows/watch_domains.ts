import { ActivityFailure, log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { WatchDomainsInput, WatchDomainsReport } from './contract.ts';

// A registry's 429 or outage, a host that does not answer: retried here, after the Retry-After the failure
// carries when it carries one. A refusal that cannot change (a registry refusing us, no RDAP service for the
// TLD) is not retried. Once retries are spent the failure is recorded and the last reading stays.
const { readDomainRegistration, readTlsCertificate } = proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  retry: {
    initialInterval: '10s',
    backoffCoefficient: 2,
    maximumInterval: '10m',
    maximumAttempts: 6,
    nonRetryableErrorTypes: [
      'BadInput',
      'Refused',
      'RdapRefused',
      'RdapNoService',
      'RdapUnreadable',
      'RdapAnswerTooLarge',
    ],
  },
});

const { readDomainReputation, recordDomainWatchFailure } = proxyActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '5s', maximumAttempts: 3, nonRetryableErrorTypes: ['BadInput'] },
});

const messageOf = (error: unknown) =>
  error instanceof ActivityFailure && error.cause ? error.cause.message : String(error);

/**
 * Reads the watched names' facts into domain_watch_facts: each registered domain's RDAP record (registration,
 * DNSSEC, lock), each host's certificate, then our hosts' Safe Browsing reputation in one lookup. Started by the
 * Schedule `domain-watch:{taskQueue}` every DOMAIN_WATCH_INTERVAL (or by hand: `temporal schedule trigger
 * --schedule-id domain-watch:{taskQueue}`). One failed read does not stop the others.
 */
export async function watchDomainsWorkflow(input: WatchDomainsInput): Promise<WatchDomainsReport> {
  const report: WatchDomainsReport = { read: 0, failed: [], flagged: [] };
  const attempt = async (subject: string, facts: string[], read: () => Promise<unknown>) => {
    try {
      await read();
      report.read += facts.length;
    } catch (error) {
      const message = messageOf(error);
      report.failed.push({ subject, facts, error: message });
      log.warn('domain watch could not read', { subject, facts, error: message });
      await recordDomainWatchFailure({ subject, facts: facts as never, error: message });
    }
  };
  for (const domain of input.domains) {
    await attempt(domain, ['registration', 'dnssec', 'lock'], () => readDomainRegistration({ domain }));
  }
  for (const host of input.hosts) {
    await attempt(host, ['certificate'], () => readTlsCertificate({ host }));
  }
  if (input.hosts.length > 0) {
    try {
      const reputation = await readDomainReputation({ hosts: input.hosts });
      report.flagged = reputation.flagged;
      if (!reputation.skipped) report.read += input.hosts.length - reputation.unavailable.length;
    } catch (error) {
      const message = messageOf(error);
      report.failed.push({ subject: input.hosts.join(','), facts: ['reputation'], error: message });
      for (const host of input.hosts)
        await recordDomainWatchFailure({ subject: host, facts: ['reputation'], error: message });
    }
  }
  log.info('domain watch finished', { ...report, reason: input.reason ?? 'schedule' });
  return report;
}
