import type { DomainFactName } from '../lib/domains/domain_facts.ts';
import {
  readDomainRegistration,
  readDomainReputation,
  readTlsCertificate,
  recordDomainWatchFailure,
} from '../lib/domains/read_domain_facts.ts';
import type { ActivityDeps } from './deps.ts';
import { runStep } from './task_context.ts';

/** The domain watch (lib/domains): our own domains' registration, certificates and reputation. */
export function createDomainWatchActivities(deps: ActivityDeps) {
  return {
    readDomainRegistration: (input: { domain: string }) => runStep(() => readDomainRegistration(deps, input)),
    readTlsCertificate: (input: { host: string }) => runStep(() => readTlsCertificate(deps, input)),
    readDomainReputation: (input: { hosts: string[] }) => runStep(() => readDomainReputation(deps, input)),
    recordDomainWatchFailure: (input: { subject: string; facts: DomainFactName[]; error: string }) =>
      runStep(() => recordDomainWatchFailure(deps, input)),
  };
}
