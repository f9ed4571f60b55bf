import type { Front } from './active_front.ts';

/**
 * Points the short domain's DNS at a front. Optional: without one, a failover waits for the operator's
 * `dnsChanged` signal (POST /api/v1/ops/front/dns-changed) after they changed DNS by hand.
 */
export interface DnsAdapter {
  pointShortDomainAt(front: Front, context: { workflowId: string }): Promise<void>;
}

/**
 * A DNS adapter that asks the newsroom's own automation (a webhook in front of Cloudflare, Route 53, …) to
 * make the change: `POST <url>` with `{ front, workflowId }` and a bearer token; any 2xx means done. The
 * call is idempotent on the receiver's side (pointing at the same front twice is a no-op there too).
 */
export function createWebhookDnsAdapter(options: {
  url: string;
  token?: string | undefined;
  timeoutMs?: number;
  fetch?: typeof fetch;
}): DnsAdapter {
  const doFetch = options.fetch ?? fetch;
  return {
    async pointShortDomainAt(front, context) {
      const response = await doFetch(options.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
        },
        body: JSON.stringify({ front, workflowId: context.workflowId }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`the DNS adapter answered ${response.status}`);
    },
  };
}
