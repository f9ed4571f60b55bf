import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { type CdnWebhookFake, startCdnWebhookFake } from '../../devkit/fakes/cdn_webhook_fake.ts';
import { type CloudflareFake, startCloudflareFake } from '../../devkit/fakes/cloudflare_fake.ts';
import { type CloudFrontFake, startCloudFrontFake } from '../../devkit/fakes/cloudfront_fake.ts';
import { createHarness, createLinkCode, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { waitForPostLink, wordpressEvent } from '../../devkit/harness/wordpress_events.ts';

// Every change to a link (edit, expiry, block, unpublish, delete) purges exactly that link's paths (`/code` and
// `/code+`) from the CDN, through the real app and a real worker (the link's sync workflow), for each purger:
// the generic webhook, Cloudflare's purge API and CloudFront invalidations, each an HTTP fake of its contract.
const SHORT = 'https://sho.rt';

interface Provider {
  name: string;
  env: Record<string, string>;
  /** One entry per purge request: the paths it named. */
  calls(): string[][];
  /** When each purge request arrived (epoch ms), in order. */
  times(): number[];
  reset(): void;
  stop(): Promise<void>;
}

async function webhookProvider(): Promise<Provider & { fake: CdnWebhookFake }> {
  const fake = await startCdnWebhookFake({ shortBaseUrl: SHORT });
  return {
    name: 'webhook',
    fake,
    env: {
      CDN_PURGE_PROVIDER: 'webhook',
      CDN_PURGE_WEBHOOK_URL: fake.url,
      CDN_PURGE_WEBHOOK_SECRET: fake.secret,
    },
    calls: () => fake.purges.filter((p) => p.kind === 'paths').map((p) => p.items),
    times: () => fake.requests.filter((r) => r.status === 200).map((r) => r.at),
    reset: () => fake.reset(),
    stop: () => fake.stop(),
  };
}

async function cloudflareProvider(): Promise<Provider & { fake: CloudflareFake }> {
  const fake = await startCloudflareFake({ plan: 'enterprise' });
  return {
    name: 'cloudflare',
    fake,
    env: {
      CDN_PURGE_PROVIDER: 'cloudflare',
      CDN_PURGE_CLOUDFLARE_ZONE_ID: fake.zoneId,
      CDN_PURGE_CLOUDFLARE_API_TOKEN: fake.token,
      CDN_PURGE_CLOUDFLARE_API_BASE_URL: fake.apiBaseUrl,
    },
    calls: () =>
      fake.purges.filter((p) => p.kind === 'files').map((p) => p.items.map((url) => url.slice(SHORT.length))),
    times: () => fake.requests.filter((r) => r.status === 200).map((r) => r.at),
    reset: () => fake.reset(),
    stop: () => fake.stop(),
  };
}

async function cloudfrontProvider(): Promise<Provider & { fake: CloudFrontFake }> {
  const fake = await startCloudFrontFake({ completeAfterMs: 1_000 });
  return {
    name: 'cloudfront',
    fake,
    env: {
      CDN_PURGE_PROVIDER: 'cloudfront',
      CDN_PURGE_CLOUDFRONT_DISTRIBUTION_ID: fake.distributionId,
      CDN_PURGE_AWS_ACCESS_KEY_ID: fake.accessKeyId,
      CDN_PURGE_AWS_SECRET_ACCESS_KEY: fake.secretAccessKey,
      CDN_PURGE_CLOUDFRONT_API_BASE_URL: fake.apiBaseUrl,
    },
    calls: () => fake.invalidations.map((i) => i.paths),
    times: () => fake.requests.filter((r) => r.status === 201).map((r) => r.at),
    reset: () => fake.reset(),
    stop: () => fake.stop(),
  };
}

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function setUp(make: () => Promise<Provider>): Promise<{ h: Harness; cdn: Provider }> {
  const cdn = await make();
  const h = await createHarness({
    env: {
      ...cdn.env,
      SHORT_BASE_URL: SHORT,
      APP_BASE_URL: SHORT,
      REDIRECT_CACHE_CONTROL: 'public, max-age=60, s-maxage=86400',
    },
  });
  cleanups.push(async () => {
    await h.close();
    await cdn.stop();
  });
  await h.startWorker();
  return { h, cdn };
}

/**
 * The codes whose paths were purged, each call checked to be whole links' pairs `[/code, /code+, …]`: a link's own
 * sync purges one link, the sync queue's drainer a batch's changed links in one call.
 */
function purgedCodes(cdn: Provider): string[] {
  return cdn.calls().flatMap((paths) => {
    assert.ok(paths.length > 0 && paths.length % 2 === 0, `whole links per purge: ${paths}`);
    const codes: string[] = [];
    for (let i = 0; i < paths.length; i += 2) {
      const code = paths[i]!.slice(1);
      assert.deepEqual(paths.slice(i, i + 2), [`/${code}`, `/${code}+`], `whole links per purge: ${paths}`);
      codes.push(code);
    }
    return codes;
  });
}

async function waitForPurges(cdn: Provider, codes: string[], what: string): Promise<void> {
  await eventually(
    async () => {
      const purged = purgedCodes(cdn);
      return codes.every((c) => purged.includes(c)) ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 50, what },
  );
}

async function patch(h: Harness, code: string, json: Record<string, unknown>): Promise<number> {
  const res = await h.api(`/api/v1/links/${code}`, { method: 'PATCH', json });
  assert.equal(res.status, 200, await res.clone().text());
  return Date.now();
}

describe('CDN purge on every change to a link', () => {
  for (const make of [webhookProvider, cloudflareProvider, cloudfrontProvider]) {
    test(`${make.name.replace('Provider', '')}: edit, expiry, block, unpublish and delete purge exactly the changed link's paths`, async () => {
      const { h, cdn } = await setUp(make);
      const edited = await createLinkCode(h, { url: 'https://news.example/edit-me' });
      const untouched = await createLinkCode(h, { url: 'https://news.example/leave-me' });
      const blocked = await createLinkCode(h, { url: 'https://bad-actor.example/page' });
      const deleted = await createLinkCode(h, { url: 'https://news.example/delete-me' });
      assert.equal((await h.webhook(wordpressEvent('post.published', { postId: 41 }))).status, 202);
      const post = await waitForPostLink(h, 'news', 41, (l) => l.status === 'active');
      // A new link is not purged: nothing but a short-lived 404 can be cached under a code that did not exist.
      for (const code of [edited, untouched, blocked, deleted]) {
        await h.temporal.client.workflow.getHandle(`sync:${code}`).result();
      }
      assert.deepEqual(purgedCodes(cdn), [], 'creations purge nothing');

      const changes: { code: string; atMs: number }[] = [];
      changes.push({ code: edited, atMs: await patch(h, edited, { url: 'https://news.example/edited' }) });
      // Expiry: a link expiring in two seconds is purged once the expiry sweeper has expired it (ADR 0091).
      const expiring = await createLinkCode(h, {
        url: 'https://news.example/expiring',
        expiresAt: new Date(Date.now() + 2_000).toISOString(),
      });
      changes.push({ code: expiring, atMs: Date.now() });
      // Block: a blocklist entry re-scans the destinations it matches; the verdict change purges.
      const listed = await h.api('/api/v1/blocklist', {
        method: 'POST',
        json: { pattern: 'bad-actor.example', reason: 'phishing (test)' },
      });
      assert.equal(listed.status, 201, await listed.clone().text());
      changes.push({ code: blocked, atMs: Date.now() });
      assert.equal((await h.webhook(wordpressEvent('post.unpublished', { postId: 41 }))).status, 202);
      changes.push({ code: post.code, atMs: Date.now() });
      assert.equal((await h.api(`/api/v1/links/${deleted}`, { method: 'DELETE' })).status, 204);
      changes.push({ code: deleted, atMs: Date.now() });

      await eventually(
        async () => {
          const link = await (await h.api(`/api/v1/links/${expiring}`)).json();
          return link.status === 'expired' ? true : undefined;
        },
        { timeoutMs: 30_000, what: 'the expiry' },
      );
      await waitForPurges(cdn, [edited, blocked, post.code, deleted, expiring], 'every change purged');
      // Settle: anything else queued would show up now.
      await new Promise((r) => setTimeout(r, 1_500));
      const purged = purgedCodes(cdn);
      assert.ok(!purged.includes(untouched), 'a link nobody changed is never purged');
      assert.deepEqual(
        [...new Set(purged)].sort(),
        [edited, expiring, blocked, post.code, deleted].sort(),
        `${cdn.name}: exactly the changed links`,
      );
      const blockedNow = await (await h.api(`/api/v1/links/${blocked}`)).json();
      assert.equal(blockedNow.safety, 'blocked');
      if (cdn.name === 'webhook') await recordHistory('syncLinkWorkflow-cdn-purge', `sync:${edited}`);
    });
  }

  test('a CDN that fails is retried durably until it takes the purge', async () => {
    const { h, cdn } = await setUp(webhookProvider);
    const code = await createLinkCode(h, { url: 'https://news.example/flaky' });
    await h.temporal.client.workflow.getHandle(`sync:${code}`).result();
    const webhook = (cdn as Awaited<ReturnType<typeof webhookProvider>>).fake;
    // More failures than one activity attempt retries (4 requests): the activity fails and is retried.
    webhook.failNext({ times: 6, answer: { status: 503, body: 'down for maintenance' } });
    await patch(h, code, { url: 'https://news.example/flaky-2' });
    await waitForPurges(cdn, [code], 'the purge after the outage');
    assert.ok(webhook.requests.filter((r) => r.status === 503).length >= 6);
    assert.deepEqual(purgedCodes(cdn), [code]);
  });
});

// Several short domains (ADR 0078): each link's URL is built on its own domain, and Cloudflare purges it in that
// domain's zone (CDN_PURGE_CLOUDFLARE_ZONE_IDS); a domain without a zone of its own uses the default's.
describe('CDN purge per short domain', () => {
  test('cloudflare: a link on each domain is purged on its own domain, in its own zone', async () => {
    const HOME = 'sho.rt';
    const TWO = 'two.short.test';
    const THREE = 'three.short.test';
    const twoZone = 'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0';
    const fake = await startCloudflareFake({ plan: 'enterprise', otherZoneIds: [twoZone] });
    const h = await createHarness({
      env: {
        CDN_PURGE_PROVIDER: 'cloudflare',
        CDN_PURGE_CLOUDFLARE_ZONE_ID: fake.zoneId,
        CDN_PURGE_CLOUDFLARE_ZONE_IDS: `${TWO}=${twoZone}`,
        CDN_PURGE_CLOUDFLARE_API_TOKEN: fake.token,
        CDN_PURGE_CLOUDFLARE_API_BASE_URL: fake.apiBaseUrl,
        SHORT_BASE_URL: SHORT,
        SHORT_DOMAINS: `${HOME},${TWO},${THREE}`,
        APP_BASE_URL: SHORT,
        REDIRECT_CACHE_CONTROL: 'public, max-age=60, s-maxage=86400',
      },
    });
    cleanups.push(async () => {
      await h.close();
      await fake.stop();
    });
    await h.startWorker();
    // The same alias on three domains: three links, three URLs to purge.
    for (const domain of [HOME, TWO, THREE]) {
      const made = await h.api('/api/v1/links', {
        method: 'POST',
        json: { url: `https://news.example/${domain}`, alias: 'per-domain', domain },
      });
      assert.equal(made.status, 201, await made.clone().text());
    }
    for (const key of ['per-domain', `${TWO}/per-domain`, `${THREE}/per-domain`])
      await h.temporal.client.workflow.getHandle(`sync:${key}`).result();
    assert.deepEqual(fake.purgedFiles(), [], 'creations purge nothing');
    for (const domain of [HOME, TWO, THREE]) {
      const res = await h.api(`/api/v1/links/per-domain?domain=${domain}`, {
        method: 'PATCH',
        json: { url: `https://news.example/${domain}-edited` },
      });
      assert.equal(res.status, 200, await res.clone().text());
    }
    await eventually(async () => (fake.purgedFiles().length >= 6 ? true : undefined), {
      timeoutMs: 60_000,
      what: 'three links purged',
    });
    const byZone = (zone: string) =>
      fake.purges
        .filter((p) => p.kind === 'files' && p.zone === zone)
        .flatMap((p) => p.items)
        .sort();
    assert.deepEqual(byZone(twoZone), [`https://${TWO}/per-domain`, `https://${TWO}/per-domain+`]);
    assert.deepEqual(
      byZone(fake.zoneId),
      [
        `${SHORT}/per-domain`,
        `${SHORT}/per-domain+`,
        `https://${THREE}/per-domain`,
        `https://${THREE}/per-domain+`,
      ].sort(),
    );
  });
});
