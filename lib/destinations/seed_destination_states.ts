// Gives every active link a destination_states row and resets the rows of retargeted links (the first step of
// every scheduled run, so a new link is due within one Schedule period).
import { seedDestinationStates as seedRows } from '../stores/destination_state_store.ts';
import type { DestinationCheckDeps } from './destination_check_deps.ts';

const SEED_CHUNK = 5_000;

export async function seedDestinationStates(
  deps: Pick<DestinationCheckDeps, 'sql' | 'settings'>,
  input: { maxLinks?: number } = {},
): Promise<{ seeded: number }> {
  let seeded = 0;
  const max = input.maxLinks ?? 200_000;
  while (seeded < max) {
    const n = await seedRows(deps.sql, {
      limit: Math.min(SEED_CHUNK, max - seeded),
      spreadMs: deps.settings.intervalMs,
    });
    seeded += n;
    if (n === 0) break;
  }
  return { seeded };
}
