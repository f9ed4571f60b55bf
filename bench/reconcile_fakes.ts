// The vendor fakes of bench/reconcile_scale.ts, in a process of their own: at ten million links they hold
// ~4.6 GB of heap, which in the bench's process every collection of the worker's would scan too. The bench
// forks this script with a heap limit of its own and drives it over the IPC channel:
//
//   node --max-old-space-size=8192 --import tsx bench/reconcile_fakes.ts
//     [--bitly-domain=bit.ly] [--safe-browsing]
//
// It starts the fakes asked for (Bitly on that domain, Safe Browsing), says `ready` with what the bench's
// configuration needs of them, then answers each request (FakesCalls, below) with a reply of the same id, in
// order. The channel uses the advanced serialization (structured clones): the seeds' Dates arrive as Dates. It
// stops every fake and exits on `stop`, or when the bench is gone.
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type BitlyFake, startBitlyFake } from '../devkit/fakes/bitly_fake.ts';
import { type SafeBrowsingFake, startSafeBrowsingFake } from '../devkit/fakes/safe_browsing_fake.ts';
import { type FakePost, WordPressListingFake } from '../devkit/fakes/wordpress_listing_fake.ts';

/** One bitlink to seed: the argument of BitlyFake.seed. */
export type BitlinkSeed = Parameters<BitlyFake['seed']>[0];

/** This process as a whole: its heap after a full collection, its RSS, the Safe Browsing calls answered. */
export interface FakesStats {
  heapMb: number;
  rssMb: number;
  safeBrowsingCalls: number;
}

/** Sent once, when the fakes asked for are serving: what the bench's configuration needs of them. */
export interface FakesReady {
  kind: 'ready';
  /** BitlyFake.env(), or null without Bitly. */
  bitlyEnv: Record<string, string> | null;
  safeBrowsing: { apiKey: string; baseUrl: string } | null;
}

/** What the bench asks, by kind, and what each reply carries. */
export interface FakesCalls {
  /** Seeds each bitlink; replies how many. */
  'bitly-seed': { ask: { links: BitlinkSeed[] }; reply: number };
  /** Starts a site's signed listing; replies its restUrl. */
  'listing-start': { ask: { site: string; secret: string }; reply: string };
  /** Puts each post into its site's listing (started before); replies how many. */
  'listing-posts': { ask: { sites: { site: string; posts: FakePost[] }[] }; reply: number };
  /** Lists each URL as a threat of its type; replies how many. */
  'add-threats': { ask: { threats: { url: string; threat: string }[] }; reply: number };
  stats: { ask: Record<never, never>; reply: FakesStats };
  /** Milliseconds this process's event loop has been busy so far (no collection first: cheap to ask often). */
  busy: { ask: Record<never, never>; reply: number };
  /** Stops every fake; the process exits after the reply. */
  stop: { ask: Record<never, never>; reply: null };
}
export type FakesKind = keyof FakesCalls;
export type FakesRequest = { [K in FakesKind]: { id: number; kind: K } & FakesCalls[K]['ask'] }[FakesKind];
export type FakesReply =
  | { kind: 'reply'; id: number; ok: true; value: unknown }
  | { kind: 'reply'; id: number; ok: false; error: string };

// ---- The fakes. -----------------------------------------------------------------------------------------
// Only as a child: the bench imports the types above, never this.
if (process.send) await main();

async function main() {
  const send = (message: FakesReady | FakesReply, then?: () => void) =>
    process.send?.(message, undefined, undefined, then);
  const bitlyDomain = process.argv
    .find((a) => a.startsWith('--bitly-domain='))
    ?.slice('--bitly-domain='.length);
  const bitly = bitlyDomain ? await startBitlyFake({ domains: [bitlyDomain] }) : undefined;
  const safeBrowsing = process.argv.includes('--safe-browsing') ? await startSafeBrowsingFake() : undefined;
  const listings = new Map<string, WordPressListingFake>();
  const calls = forgetSafeBrowsingRequests(safeBrowsing);
  // A full collection before each heap reading (the fakes' size), without asking for --expose-gc.
  setFlagsFromString('--expose-gc');
  const collect = runInNewContext('gc') as () => void;

  let stopping: Promise<void> | null = null;
  const stopFakes = () => {
    stopping ??= (async () => {
      calls.stop();
      await bitly?.stop();
      await safeBrowsing?.close();
      for (const fake of listings.values()) await fake.stop();
    })();
    return stopping;
  };
  // The bench is gone without a `stop` (killed, say): nobody is left to ask anything.
  process.on('disconnect', () => {
    void stopFakes().finally(() => process.exit(0));
  });
  // Ctrl-C reaches the whole process group: the bench stops this process as it cleans up (or by going away).
  process.on('SIGINT', () => {});

  const handlers: { [K in FakesKind]: (ask: FakesCalls[K]['ask']) => Promise<FakesCalls[K]['reply']> } = {
    'bitly-seed': async ({ links }) => {
      if (!bitly) throw new Error('bitly-seed: no Bitly fake (started without --bitly-domain)');
      for (const link of links) bitly.seed(link);
      return links.length;
    },
    'listing-start': async ({ site, secret }) => {
      if (listings.has(site)) throw new Error(`listing-start: ${site} is started already`);
      const fake = await new WordPressListingFake(site, secret).start();
      listings.set(site, fake);
      return fake.restUrl;
    },
    'listing-posts': async ({ sites }) => {
      let put = 0;
      for (const { site, posts } of sites) {
        const fake = listings.get(site);
        if (!fake) throw new Error(`listing-posts: ${site} has no listing (listing-start first)`);
        for (const post of posts) fake.posts.set(post.postId, post);
        put += posts.length;
      }
      return put;
    },
    'add-threats': async ({ threats }) => {
      if (!safeBrowsing)
        throw new Error('add-threats: no Safe Browsing fake (started without --safe-browsing)');
      for (const { url, threat } of threats) safeBrowsing.addThreat(url, threat);
      return threats.length;
    },
    stats: async () => {
      collect();
      const { heapUsed, rss } = process.memoryUsage();
      return {
        heapMb: heapUsed / 2 ** 20,
        rssMb: rss / 2 ** 20,
        safeBrowsingCalls: calls.count(),
      };
    },
    busy: async () => performance.eventLoopUtilization().active,
    stop: async () => {
      await stopFakes();
      return null;
    },
  };

  // One request at a time, in the order sent (the bench awaits each anyway).
  let queue = Promise.resolve();
  process.on('message', (message) => {
    const request = message as FakesRequest;
    queue = queue.then(async () => {
      const handler = handlers[request.kind] as (ask: FakesRequest) => Promise<unknown>;
      let reply: FakesReply;
      try {
        reply = { kind: 'reply', id: request.id, ok: true, value: await handler(request) };
      } catch (error) {
        reply = { kind: 'reply', id: request.id, ok: false, error: (error as Error).message };
      }
      send(reply, request.kind === 'stop' ? () => process.exit(0) : undefined);
    });
  });

  send({
    kind: 'ready',
    bitlyEnv: bitly?.env() ?? null,
    safeBrowsing: safeBrowsing ? { apiKey: safeBrowsing.apiKey, baseUrl: safeBrowsing.baseUrl } : null,
  });
}

/**
 * The Safe Browsing fake keeps every URL it was asked about (10M a pass): its requests are counted and
 * forgotten every 2 s. `count()` is every call answered so far.
 */
function forgetSafeBrowsingRequests(fake: SafeBrowsingFake | undefined) {
  let forgotten = 0;
  const forget = () => {
    if (!fake) return;
    forgotten += fake.requests.length;
    fake.requests.length = 0;
  };
  const timer = setInterval(forget, 2_000);
  return {
    count: () => {
      forget();
      return forgotten;
    },
    stop: () => clearInterval(timer),
  };
}
