import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { createWebhookPurger } from '../../lib/cdn/webhook_purger.ts';
import { createWebhookDnsAdapter } from '../../lib/failover/dns_adapter.ts';
import { reconcileWordPressSite } from '../../lib/reconcile/reconcile_wordpress.ts';
import { fetchListingPage } from '../../lib/reconcile/wordpress_listing.ts';
import { getRestUrl, listWordPressSites } from '../../lib/reconcile/wordpress_sites.ts';
import { notifyReport, type ReportNotification } from '../../lib/safety/notify_report.ts';
import { PermanentFailure } from '../../lib/shared/errors.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import {
  createOutgoingFetch,
  getOutgoingUrlProblem,
  type OutgoingLookup,
  STRICT_OUTGOING_RULE,
} from '../../lib/shared/outgoing_request.ts';
import { runOnce } from '../../lib/shared/task_context.ts';
import { getWordPressSite } from '../../lib/stores/wordpress_site_store.ts';
import { createWorkerDeps } from '../../workers/worker_deps.ts';
import { getWordPressReconcileWorkflowId } from '../../workflows/contract.ts';
import { HOSTILE_TARGETS, hostArbitrary } from '../helpers/hostile_inputs.ts';

// The restUrl a signed event or backfill batch carries, and every webhook URL an operator configures, lead the
// worker to make requests: none of them may reach a loopback, private, link-local or metadata address, by any
// spelling (literal, decimal, hex, IPv4-mapped IPv6) or through a name that resolves there. A loopback
// listener counts connections: it must see none. With WORDPRESS_REST_URLS set, only the sites and URLs it
// lists are read. The harness allows no private address here (OUTGOING_ALLOWED_PRIVATE is empty), so the
// rule is on as in production. Counts go to the test output.

const SEED = Number(process.env.HOSTILE_SEED ?? 13_2026);
const RUNS = Math.max(50, Number(process.env.HOSTILE_E2E_RUNS ?? 150));

/** A loopback TCP listener that counts connections and answers each with a 404 (so nothing hangs). */
class ConnectionCounter {
  connections = 0;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async start(): Promise<this> {
    this.server = createServer((socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => {});
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found');
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** A test resolver: every name is 127.0.0.1, the listener's address (what a hostile DNS answer would be). */
const toLoopback: OutgoingLookup = (_hostname, _options, callback) =>
  callback(null, [{ address: '127.0.0.1', family: 4 }]);

let h: Harness;
let listener: ConnectionCounter;
const silent = createLogger({ level: 'silent', name: 'test' });

before(async () => {
  listener = await new ConnectionCounter().start();
  h = await createHarness({ env: { OUTGOING_ALLOWED_PRIVATE: '' } });
  await h.startWorker();
});
after(async () => {
  await h?.close();
  await listener?.stop();
});

/** Forms of the listener's own address a restUrl may take. */
function loopbackForms(port: number): string[] {
  return [
    `http://127.0.0.1:${port}/wp-json/lifeline/v1/`,
    `https://127.0.0.1:${port}/wp-json/lifeline/v1/`,
    `https://localhost:${port}/wp-json/lifeline/v1/`,
    `https://LOCALHOST.:${port}/`,
    `https://2130706433:${port}/`,
    `https://0x7f.0.0.1:${port}/`,
    `https://0177.0.0.1:${port}/`,
    `https://127.1:${port}/`,
    `https://[::ffff:127.0.0.1]:${port}/`,
    `https://[::ffff:7f00:1]:${port}/`,
    `https://user:pass@127.0.0.1:${port}/`,
    `http://127.0.0.1:${port}/?rest_route=/lifeline/v1/#`,
  ];
}

const METADATA_URLS = [
  'http://169.254.169.254/latest/meta-data/#',
  'https://169.254.169.254/latest/meta-data/',
  'https://[fd00:ec2::254]/latest/meta-data/',
  'https://metadata.google.internal/computeMetadata/v1/',
  'https://100.100.100.200/latest/meta-data/',
  'https://169.254.170.2/v2/credentials/',
  'https://[::ffff:169.254.169.254]/',
  'https://[64:ff9b::a9fe:a9fe]/',
];

async function listingRefused(restUrl: string, lookup?: OutgoingLookup): Promise<string> {
  const error = await fetchListingPage(
    {
      getSecret: async () => h.webhookSecret,
      restUrls: {},
      outgoing: STRICT_OUTGOING_RULE,
      timeoutMs: 2_000,
      ...(lookup ? { fetch: createOutgoingFetch(STRICT_OUTGOING_RULE, { lookup }) } : {}),
    },
    { site: 'intruder', restUrl, page: 1 },
  ).then(
    () => assert.fail(`${restUrl} was read`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof PermanentFailure, `${restUrl}: ${String(error)}`);
  assert.equal(error.kind, 'ListingAddressRefused', `${restUrl}: ${error.message}`);
  return error.message;
}

describe('restUrls and configured webhook URLs never reach a private address', () => {
  test('the listing of a restUrl at loopback, in any spelling, or at a metadata address is refused before connecting', async (t) => {
    const before = listener.connections;
    for (const restUrl of loopbackForms(listener.port)) await listingRefused(restUrl);
    for (const restUrl of METADATA_URLS) await listingRefused(restUrl, toLoopback);
    assert.equal(listener.connections - before, 0, 'the loopback listener was connected to');
    t.diagnostic(
      `loopback spellings ${loopbackForms(0).length}, metadata URLs ${METADATA_URLS.length}: all refused, 0 connections`,
    );
  });

  test('a name that resolves to loopback (or rebinds to it) is refused at connect time', async () => {
    const before = listener.connections;
    const message = await listingRefused(
      `https://wp.rebind.test:${listener.port}/wp-json/lifeline/v1/`,
      toLoopback,
    );
    assert.match(message, /wp\.rebind\.test was not connected to: 127\.0\.0\.1 is a loopback address/);
    // First a public address, then loopback: each connection looks up again, and the loopback answer is dropped.
    let lookups = 0;
    const rebinding: OutgoingLookup = (_hostname, _options, callback) => {
      lookups++;
      callback(null, [
        { address: '127.0.0.1', family: 4 },
        { address: '10.1.2.3', family: 4 },
      ]);
    };
    await listingRefused(`https://rebind.example:${listener.port}/`, rebinding);
    assert.equal(lookups, 1);
    assert.equal(listener.connections - before, 0);
  });

  test('generated restUrls: every host a test resolver points at loopback, and every private literal, is refused', async (t) => {
    const before = listener.connections;
    const tally = { cases: 0, refused: 0, publicLiterals: 0, notUrls: 0 };
    const hosts = [
      ...HOSTILE_TARGETS.map((target) => target.input),
      ...fc.sample(hostArbitrary(), { numRuns: RUNS, seed: SEED }).map((host) => `https://${host}/`),
    ];
    for (const input of hosts) {
      tally.cases++;
      let url: URL;
      try {
        url = new URL(input);
        url.port = String(listener.port);
      } catch {
        tally.notUrls++;
        continue;
      }
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (
        url.protocol === 'https:' &&
        url.username === '' &&
        url.password === '' &&
        ipaddr.isValid(host) &&
        ipaddr.process(host).range() === 'unicast'
      ) {
        // A public literal is the one thing the rule lets through; it is not dialled from a test.
        assert.equal(getOutgoingUrlProblem(url, STRICT_OUTGOING_RULE), null, input);
        tally.publicLiterals++;
        continue;
      }
      const error = await fetchListingPage(
        {
          getSecret: async () => h.webhookSecret,
          restUrls: {},
          timeoutMs: 2_000,
          fetch: createOutgoingFetch(STRICT_OUTGOING_RULE, { lookup: toLoopback }),
        },
        { site: 'intruder', restUrl: url.href, page: 1 },
      ).then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(
        error instanceof PermanentFailure && error.kind === 'ListingAddressRefused',
        `${url.href}: ${String(error)}`,
      );
      tally.refused++;
    }
    assert.equal(listener.connections - before, 0, 'the loopback listener was connected to');
    t.diagnostic(
      `restUrls ${tally.cases}: refused ${tally.refused}, public literals (allowed, not dialled) ${tally.publicLiterals}, not URLs ${tally.notUrls}; connections 0`,
    );
  });

  test('a signed site.permalinks_changed for a new site makes the worker connect nowhere private', async () => {
    const before = listener.connections;
    for (const [i, restUrl] of [
      `http://127.0.0.1:${listener.port}/wp-json/lifeline/v1/`,
      `https://localhost:${listener.port}/wp-json/lifeline/v1/`,
      'http://169.254.169.254/latest/meta-data/#',
    ].entries()) {
      const site = `intruder${i}`;
      const res = await h.webhook({
        id: randomUUID(),
        event: 'site.permalinks_changed',
        site,
        occurredAt: new Date().toISOString(),
        restUrl,
        reason: 'home',
      });
      assert.equal(res.status, 202, await res.clone().text());
      const handle = h.temporal.client.workflow.getHandle(getWordPressReconcileWorkflowId(h.taskQueue, site));
      const failure = await handle.result().then(
        () => assert.fail(`the listing of ${restUrl} was read`),
        (e: unknown) => e as Error & { cause?: Error },
      );
      // The workflow's failure wraps the activity's, which wraps the listing's own message.
      const messages: string[] = [];
      for (let e: (Error & { cause?: unknown }) | undefined = failure; e; e = e.cause as typeof e)
        messages.push(e.message);
      assert.match(messages.join(' / '), /not connected to|only https|not https|loopback name/, restUrl);
    }
    assert.equal(listener.connections - before, 0, 'the worker connected to the loopback listener');
  });

  test('the report, CDN and DNS webhooks obey the same rule; an explicit allowance lets a private one through', async () => {
    const before = listener.connections;
    const url = `http://127.0.0.1:${listener.port}/hook`;
    const notification = {
      event: 'link.reported',
      code: 'abc',
      reason: 'x',
      text: 'x',
    } as ReportNotification;
    // Best effort: a refused notification is logged, never thrown at the reader's request.
    await notifyReport({ logger: silent, webhook: { url, secret: undefined } }, notification);
    await notifyReport(
      { logger: silent, webhook: { url: `https://localhost:${listener.port}/hook`, secret: undefined } },
      notification,
    );

    const purger = createWebhookPurger({
      url: `https://localhost:${listener.port}/purge`,
      secret: 'a-purge-secret-of-16+',
      shortBaseUrl: 'https://sho.rt',
      logger: silent,
      retry: { maxAttempts: 1 },
    });
    const purge = await purger.purgePaths(['/abc']);
    assert.deepEqual(purge.purged, []);

    const dns = createWebhookDnsAdapter({ url });
    await assert.rejects(dns.pointShortDomainAt('inhouse', { workflowId: 'w' }), /only https/);
    const dnsByName = createWebhookDnsAdapter({ url: `https://localhost:${listener.port}/dns` });
    await assert.rejects(dnsByName.setTtl(60, { workflowId: 'w' }), /localhost is a loopback name/);
    assert.equal(listener.connections - before, 0, 'a webhook connected to the loopback listener');

    // The operator's allowance: the same DNS webhook on a private address, allowed by name.
    const allowed = createWebhookDnsAdapter({ url, outgoing: { allowPrivate: ['127.0.0.1'] } });
    await assert.rejects(allowed.pointShortDomainAt('inhouse', { workflowId: 'w' }), /answered 404/);
    assert.equal(listener.connections - before, 1);
  });
});

describe('WORDPRESS_REST_URLS: only the sites and URLs it lists are read', () => {
  test('a restUrl from a signed event for an unlisted site, or another URL for a listed one, is never fetched', async () => {
    const listed = 'https://news.example/wp-json/lifeline/v1/';
    const config = {
      ...h.config,
      wordpressRestUrls: { news: listed },
      outgoing: { allowPrivate: ['127.0.0.1'] },
    };
    const deps = {
      ...createWorkerDeps(config, { sql: h.db.sql, logger: silent, resolver: h.deps.resolver }),
      queue: { kickSyncQueue: async () => undefined },
    };
    const other = `http://127.0.0.1:${listener.port}/wp-json/lifeline/v1/`;
    for (const site of ['news', 'stranger']) {
      const res = await h.webhook({
        id: randomUUID(),
        event: 'post.published',
        site,
        postId: 1,
        permalink: 'https://news.example/a/',
        title: 'A',
        occurredAt: new Date().toISOString(),
        restUrl: other,
      });
      assert.ok(res.status < 500, await res.clone().text());
    }
    assert.equal(await getRestUrl(deps, 'news'), listed);
    assert.equal(await getRestUrl(deps, 'stranger'), null);
    assert.deepEqual(await listWordPressSites(deps), ['news']);
    const before = listener.connections;
    const result = await reconcileWordPressSite(
      deps,
      { runId: 'r1', site: 'stranger', repair: true, startedAtMs: Date.now() },
      runOnce(),
    );
    assert.match(result.error ?? '', /not in WORDPRESS_REST_URLS/);
    assert.equal(listener.connections - before, 0);
  });

  test('the newest restUrl is the newest received, whatever occurredAt the sender claims', async () => {
    const site = 'clockwise';
    // Post events (they start no listing read): the first claims to come from 2099.
    const send = (postId: number, restUrl: string, occurredAt: string) =>
      h.webhook({
        id: randomUUID(),
        event: 'post.updated',
        site,
        postId,
        permalink: `https://news.example/${postId}/`,
        occurredAt,
        restUrl,
      });
    assert.equal(
      (await send(1, 'https://a.example/wp-json/lifeline/v1/', '2099-01-01T00:00:00Z')).status,
      202,
    );
    assert.equal(
      (await send(2, 'https://b.example/wp-json/lifeline/v1/', new Date().toISOString())).status,
      202,
    );
    assert.equal((await getWordPressSite(h.db.sql, site))?.restUrl, 'https://b.example/wp-json/lifeline/v1/');
  });
});
