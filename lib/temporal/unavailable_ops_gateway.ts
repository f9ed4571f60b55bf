import { UnavailableError } from '../shared/errors.ts';
import type { OpsGateway } from './ops_gateway.ts';

/** An ops gateway that refuses everything: used where no Temporal client can be loaded (503 + Retry-After). */
export function createUnavailableOpsGateway(reason: string): OpsGateway {
  const fail = async (): Promise<never> => {
    throw new UnavailableError(`Workflows are unavailable here: ${reason}`, 30);
  };
  return {
    startRescan: fail,
    startReconcile: fail,
    startFrontChange: fail,
    signalDnsChanged: fail,
    describeFrontChange: fail,
    close: async () => {},
  };
}
