import { createOutgoingFetch, type OutgoingRule } from '../shared/outgoing_request.ts';
import type { Front } from './active_front.ts';

/**
 * Which run asks, and for which short domain: `domain` is the host name of a short domain other than the default
 * (ADR 0073); absent, the default short domain, as every request before fronts were per domain.
 */
export interface DnsContext {
  workflowId: string;
  domain?: string;
}

/**
 * Points a short domain's DNS at a front. Optional: without one, a failover waits for the operator's
 * `dnsChanged` signal (POST /api/v1/ops/front/dns-changed) after they changed DNS by hand.
 */
export interface DnsAdapter {
  pointShortDomainAt(front: Front, context: DnsContext): Promise<void>;
  /**
   * Sets the TTL of the short domain's records; resolves to the TTL they had before (null when the automation
   * does not say), or `unsupported` when it cannot change TTLs. A planned switch lowers the TTL first, waits out
   * the old one, switches, then sets it back.
   */
  setTtl(
    ttlSeconds: number,
    context: DnsContext,
  ): Promise<{ previousTtlSeconds: number | null } | 'unsupported'>;
}

/**
 * A DNS adapter that asks the newsroom's own automation (a webhook in front of Cloudflare, Route 53, …) to
 * make the change: `POST <url>` with `{ front, workflowId }` (and `domain`, the host name, for a short domain other
 * than the default) and a bearer token; any 2xx means done. The
 * call is idempotent on the receiver's side (pointing at the same front twice is a no-op there too).
 * TTL changes are `POST <url>` with `{ action: "setTtl", ttlSeconds, workflowId }`, answered 2xx with
 * `{ "previousTtlSeconds": n }` (the TTL before the change), or 501 by automation that cannot set TTLs.
 */
export function createWebhookDnsAdapter(options: {
  url: string;
  token?: string | undefined;
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** The outgoing-request rule the default fetch obeys (docs/adr/0058-outgoing-requests-rule.md). */
  outgoing?: OutgoingRule;
}): DnsAdapter {
  const doFetch = options.fetch ?? createOutgoingFetch(options.outgoing);
  return {
    async pointShortDomainAt(front, context) {
      const response = await doFetch(options.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
        },
        body: JSON.stringify({ front, workflowId: context.workflowId, ...domainOf(context) }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`the DNS adapter answered ${response.status}`);
    },
    async setTtl(ttlSeconds, context) {
      const response = await doFetch(options.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
        },
        body: JSON.stringify({
          action: 'setTtl',
          ttlSeconds,
          workflowId: context.workflowId,
          ...domainOf(context),
        }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
      });
      const text = await response.text();
      if (response.status === 501) return 'unsupported';
      if (!response.ok) throw new Error(`the DNS adapter answered ${response.status} to a TTL change`);
      let previous: unknown = null;
      try {
        previous = text ? (JSON.parse(text) as { previousTtlSeconds?: unknown }).previousTtlSeconds : null;
      } catch {
        previous = null;
      }
      return {
        previousTtlSeconds:
          typeof previous === 'number' && Number.isInteger(previous) && previous >= 0 ? previous : null,
      };
    },
  };
}

const domainOf = (context: DnsContext) => (context.domain ? { domain: context.domain } : {});
