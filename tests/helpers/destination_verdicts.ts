// A verdict written as the destination checks write it (ensureDestinationRow, then recordDestinationChecks), for
// tests of what acts on a verdict without running a check against a site.
import {
  type ChainHop,
  type DestinationOutcome,
  type DestinationVerdict,
  ensureDestinationRow,
  getDestinationState,
  recordDestinationChecks,
} from '../../lib/stores/destination_state_store.ts';
import type { Db } from '../../lib/stores/sql.ts';

export async function writeDestinationVerdict(
  db: Db,
  input: {
    code: string;
    url: string;
    host: string;
    outcome: DestinationOutcome;
    verdict: DestinationVerdict;
    httpStatus?: number | null;
    finalUrl?: string | null;
    chain?: ChainHop[];
  },
): Promise<void> {
  await ensureDestinationRow(db, { code: input.code, url: input.url, host: input.host });
  const before = await getDestinationState(db, input.code);
  const now = new Date();
  await recordDestinationChecks(db, [
    {
      code: input.code,
      url: input.url,
      outcome: input.outcome,
      verdict: input.verdict,
      verdictChanged: before?.verdict !== input.verdict,
      httpStatus: input.httpStatus ?? null,
      finalUrl: input.finalUrl ?? null,
      chain: input.chain ?? [],
      tls: null,
      error: null,
      pageTitle: null,
      counted: true,
      failures: input.outcome === 'ok' ? 0 : 2,
      firstFailedAt: input.outcome === 'ok' ? null : new Date(now.getTime() - 86_400_000),
      checkedAt: now,
      nextCheckAt: new Date(now.getTime() + 7 * 86_400_000),
    },
  ]);
}
