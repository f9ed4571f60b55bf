import { UnavailableError } from '../shared/errors.ts';
import type { AdoptionGateway } from './adoption_gateway.ts';

/** An adoption gateway that refuses everything (503), for a web tier where no Temporal client can be loaded. */
export function createUnavailableAdoptionGateway(reason: string): AdoptionGateway {
  const fail = async (): Promise<never> => {
    throw new UnavailableError(`Workflows are unavailable here: ${reason}`, 30);
  };
  return {
    signalBackfill: fail,
    requestWordPressReconcile: fail,
    requestWordPressPostReconcile: fail,
    decideWordPressBreaker: fail,
    startRetarget: fail,
    signalRetarget: fail,
    describeRetarget: fail,
    startBulkChange: fail,
  };
}
