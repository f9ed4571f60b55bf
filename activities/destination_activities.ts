import { type CheckDueInput, checkDueDestinations } from '../lib/destinations/check_due_destinations.ts';
import { seedDestinationStates } from '../lib/destinations/seed_destination_states.ts';
import type { ActivityDeps } from './deps.ts';
import { currentTaskContext, runStep } from './task_context.ts';

/** Destination checks (lib/destinations/): seeding the rows, checking what is due. */
export function createDestinationActivities(deps: ActivityDeps) {
  const checks = () => {
    if (!deps.destinations) throw new Error('destination checks are not configured in this worker');
    return deps.destinations;
  };
  return {
    seedDestinationStates: (input: { maxLinks?: number }) =>
      runStep(() => seedDestinationStates(checks(), input)),
    checkDueDestinations: (input: CheckDueInput) =>
      runStep(() => checkDueDestinations(checks(), input, currentTaskContext())),
  };
}
