import { UnavailableError } from '../shared/errors.ts';
import type { OpsGateway } from './ops_gateway.ts';
import type { WorkflowGateway } from './workflow_gateway.ts';

// Gateways that refuse everything (503 + Retry-After), for a web tier where no Temporal client can be loaded.
// Nothing here imports the Temporal SDK, so they load where it does not.

function refuse(reason: string) {
  return async (): Promise<never> => {
    throw new UnavailableError(`Workflows are unavailable here: ${reason}`, 30);
  };
}

export function createUnavailableGateway(reason: string): WorkflowGateway {
  const fail = refuse(reason);
  return {
    startPublish: fail,
    sendPostEvent: fail,
    syncLink: fail,
    kickSyncQueue: fail,
    kickWebhooks: fail,
    close: async () => {},
  };
}

export function createUnavailableOpsGateway(reason: string): OpsGateway {
  const fail = refuse(reason);
  return {
    startRescan: fail,
    startReconcile: fail,
    startFrontChange: fail,
    signalDnsChanged: fail,
    describeFrontChange: fail,
    startEscrowRun: fail,
    close: async () => {},
  };
}
