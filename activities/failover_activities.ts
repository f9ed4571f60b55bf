import type { Front } from '../lib/failover/active_front.ts';
import { setDnsTtl } from '../lib/failover/dns_ttl.ts';
import { reserveScheduledDrill } from '../lib/failover/scheduled_drill.ts';
import {
  pointDnsAt,
  switchFront,
  type VerifyProgress,
  verifyInhouseAnswers,
  verifyPublicFront,
} from '../lib/failover/verify_fronts.ts';
import type { ActivityDeps } from './deps.ts';
import { currentTaskContext, runStep } from './task_context.ts';

/** Failover (lib/failover): verification, the switch of the active front, DNS, and the public check. */
export function createFailoverActivities(deps: ActivityDeps) {
  return {
    verifyInhouseAnswers: (input: { progress: VerifyProgress; budget: number; domain?: string }) =>
      runStep(() => verifyInhouseAnswers(deps, input, currentTaskContext())),
    switchFront: (input: { to: Front; workflowId: string; domain?: string }) =>
      runStep(() => switchFront(deps, input)),
    pointDnsAt: (input: { to: Front; workflowId: string; domain?: string }) =>
      runStep(() => pointDnsAt(deps, input)),
    verifyPublicFront: (input: { to: Front; sample: number; domain?: string }) =>
      runStep(() => verifyPublicFront(deps, input)),
    setDnsTtl: (input: { ttlSeconds: number; workflowId: string; domain?: string }) =>
      runStep(() => setDnsTtl(deps, input)),
    reserveScheduledDrill: (input: { workflowId: string; to: Front; domain?: string }) =>
      runStep(() => reserveScheduledDrill(deps, input)),
  };
}
