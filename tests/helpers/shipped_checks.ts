// What the tests of the shipped forms (dist/ on Node, the container image) ask of a running web tier and worker:
// ready, a redirect, a signed WordPress publish that the worker turns into a link.
import assert from 'node:assert/strict';
import { eventually } from '../../devkit/harness/harness.ts';
import { signWebhook } from '../../lib/auth/webhook_signature.ts';
import { randomToken } from '../../lib/shared/crypto.ts';

export interface ShippedSecrets {
  apiKey: string;
  webhookSecret: string;
}

export function shippedSecrets(): ShippedSecrets {
  return { apiKey: `ll_test_${randomToken(32)}`, webhookSecret: `whsec_test_${randomToken(32)}` };
}

/** /readyz answers 200 at `url`; a failure shows the tail of the process's `output`. */
export async function waitReady(url: string, output: () => string, timeoutMs = 120_000): Promise<void> {
  try {
    await eventually(
      async () => {
        try {
          const response = await fetch(url);
          await response.body?.cancel();
          return response.status === 200 ? true : undefined;
        } catch {
          return undefined;
        }
      },
      { timeoutMs, intervalMs: 250, what: `${url} to answer 200` },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${output().slice(-3000)}`);
  }
}

const HUMAN = { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/124.0 Safari/537.36' };

/** GET base/code answers 301 to `target`. */
export async function assertRedirect(base: string, code: string, target: string): Promise<void> {
  const response = await fetch(`${base}/${code}`, { redirect: 'manual', headers: HUMAN });
  assert.equal(response.status, 301, `${base}/${code}`);
  assert.equal(response.headers.get('location'), target);
}

/**
 * A signed post.published for `postId` is accepted (202); the worker's publish workflow mints its link, which
 * the API then finds by post and the short host redirects to the permalink. Returns the code.
 */
export async function assertSignedPublish(
  base: string,
  secrets: ShippedSecrets,
  post: { site: string; postId: number; permalink: string },
): Promise<string> {
  const body = JSON.stringify({
    id: `delivery-${post.site}-${post.postId}`,
    event: 'post.published',
    site: post.site,
    postId: post.postId,
    permalink: post.permalink,
    title: 'Shipped',
    occurredAt: new Date().toISOString(),
  });
  const accepted = await fetch(`${base}/api/v1/hooks/wordpress`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Lifeline-Signature': await signWebhook(secrets.webhookSecret, body, Date.now() / 1000),
    },
    body,
  });
  assert.equal(accepted.status, 202, await accepted.text());
  const link = await eventually(
    async () => {
      const response = await fetch(`${base}/api/v1/links/by-post/${post.site}/${post.postId}`, {
        headers: { Authorization: `Bearer ${secrets.apiKey}` },
      });
      if (response.status !== 200) {
        await response.body?.cancel();
        return undefined;
      }
      const found = (await response.json()) as { code: string; status: string };
      return found.status === 'active' ? found : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250, what: `the link of post ${post.site}/${post.postId}` },
  );
  await assertRedirect(base, link.code, post.permalink);
  return link.code;
}
