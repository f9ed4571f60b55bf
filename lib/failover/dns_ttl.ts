// The short domain's DNS TTL around a planned switch (DESIGN.md, "Vendor failover"): lowered before the switch so
// resolvers follow within the lowered TTL, set back after it. Through the DNS adapter; without one, or with one
// that cannot set TTLs, the steps are skipped and the report says why.
import { PermanentFailure } from '../shared/errors.ts';
import type { FrontDeps } from './front_deps.ts';

export type DnsTtlChange =
  | { adapter: true; supported: true; previousTtlSeconds: number | null }
  | { adapter: boolean; supported: false };

/** Sets the short domain's TTL through the DNS adapter; says whether there is one and whether it can. */
export async function setDnsTtl(
  deps: { front?: FrontDeps | undefined },
  input: { ttlSeconds: number; workflowId: string; domain?: string },
): Promise<DnsTtlChange> {
  if (!deps.front) throw new PermanentFailure('failover is not configured on this worker');
  if (!Number.isInteger(input.ttlSeconds) || input.ttlSeconds < 1)
    throw new PermanentFailure(`a TTL of ${input.ttlSeconds} s cannot be set`);
  const adapter = deps.front.dnsAdapter;
  if (!adapter) return { adapter: false, supported: false };
  const result = await adapter.setTtl(input.ttlSeconds, {
    workflowId: input.workflowId,
    ...(input.domain ? { domain: input.domain } : {}),
  });
  if (result === 'unsupported') return { adapter: true, supported: false };
  return { adapter: true, supported: true, previousTtlSeconds: result.previousTtlSeconds };
}
