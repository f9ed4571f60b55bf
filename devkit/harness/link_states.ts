// Links in every state the short host answers differently, seeded straight into Postgres (fast enough for a
// million), and a standalone answerer that says what Lifeline answers for each code: the escrow drill, the
// escrow restore test and the static-snapshot test compare through these.
import { createHash } from 'node:crypto';
import type { ClickRecorder } from '../../lib/clicks/click_buffer.ts';
import { createRedirectAnswerer, type RedirectAnswerer } from '../../lib/redirect/answer_redirect.ts';
import { createLayeredResolver } from '../../lib/redirect/layered_resolver.ts';
import { forEachConcurrently } from '../../lib/shared/concurrency.ts';
import type { Config } from '../../lib/shared/config.ts';
import { createMetrics } from '../../lib/shared/metrics.ts';
import type { Sql } from '../../lib/stores/sql.ts';
import { createCanonicalTargetPolicy } from '../../lib/targets/target_rule.ts';
import { redirectPages } from '../../routes/redirect.tsx';

/** How many variants `seedLinkStates` cycles through (code i gets variant i % LINK_STATE_VARIANTS). */
export const LINK_STATE_VARIANTS = 24;

/**
 * Inserts `count` links `<prefix><i>` (i from 1), cycling through every state: active with each redirect status,
 * non-ASCII paths and an IDN host (in the canonical form every way in stores: percent-encoded, punycode),
 * lowercase percent-encoded permalinks, canonical targets full of characters nginx's configuration syntax gives a
 * meaning to (`$ { } ; # '`), an existing utm_source; expired by status or by time,
 * with and without a fallback; expiring tomorrow; gone, deleted, blocked by status or verdict, warn, pending;
 * WordPress, imported and tagged links. With `extras`, also routing rules, vendor mappings, reader reports, audit
 * entries and click aggregates for some of them.
 */
export async function seedLinkStates(
  sql: Sql,
  options: { count: number; prefix: string; extras?: boolean },
): Promise<void> {
  const { count, prefix } = options;
  const step = 100_000;
  for (let from = 1; from <= count; from += step) {
    const to = Math.min(count, from + step - 1);
    await sql`
      INSERT INTO links (code, target_url, status, safety, safety_reason, origin, site, post_id, title, owner,
                         expires_at, expired_url, redirect_status, tags, deleted_at, created_at, updated_at, version)
      SELECT ${prefix} || i,
        CASE v
          WHEN 4 THEN 'https://news.example/%C3%BCn%C3%AF/%E4%B8%AD%E6%96%87/' || i
          WHEN 5 THEN 'https://xn--bcher-kva.example/kapitel/' || i
          WHEN 6 THEN 'https://news.example/%d8%a7%d9%84%d8%b9/' || i || '/'
          WHEN 7 THEN 'https://news.example/q;x=''$1''?a=$1&d={z};e=%27f%27#frag;''$-' || i
          WHEN 8 THEN 'https://news.example/p?utm_source=keep&i=' || i
          ELSE 'https://news.example/story/' || i || '?ref=home'
        END,
        CASE WHEN v IN (9, 10) THEN 'expired' WHEN v IN (14, 15) THEN 'gone' WHEN v = 16 THEN 'blocked'
             WHEN v = 19 THEN 'pending' ELSE 'active' END,
        CASE v WHEN 17 THEN 'blocked' WHEN 18 THEN 'warn' WHEN 16 THEN 'blocked' WHEN 23 THEN 'unknown' ELSE 'clean' END,
        CASE WHEN v IN (16, 17) THEN 'malware (test)' WHEN v = 18 THEN 'three reader reports' END,
        CASE v WHEN 14 THEN 'wordpress' WHEN 20 THEN 'wordpress' WHEN 21 THEN 'import' WHEN 22 THEN 'ui' ELSE 'api' END,
        CASE WHEN v IN (14, 20) THEN 'site-' || (i % 7) END,
        CASE WHEN v IN (14, 20) THEN i END,
        CASE WHEN v IN (14, 20, 21) THEN 'Títle «' || i || '»' END,
        CASE v WHEN 22 THEN 'editor@newsroom.example' WHEN 21 THEN 'import:bitly' ELSE 'apikey:1' END,
        CASE WHEN v IN (11, 12) THEN now() - interval '1 day' WHEN v = 13 THEN now() + interval '2 days' END,
        CASE WHEN v IN (9, 11) THEN 'https://news.example/archive/%C3%BC/' || i END,
        CASE v WHEN 1 THEN 302 WHEN 2 THEN 307 WHEN 3 THEN 308 END,
        CASE WHEN v = 22 THEN ARRAY['politics', 'é"t', 'x' || (i % 5)] ELSE '{}'::text[] END,
        CASE WHEN v = 15 THEN now() - interval '3 hours' END,
        now() - (i % 1000) * interval '1 minute', now() - (i % 500) * interval '1 second', 1 + i % 3
      FROM (SELECT i, i % ${LINK_STATE_VARIANTS} AS v FROM generate_series(${from}::int, ${to}::int) AS i) AS s`;
    if (!options.extras) continue;
    // Routing rules (ADR 0080) on some active links: Arabic readers and readers in Egypt or Saudi Arabia go
    // elsewhere; a request without those headers gets the link's own answer.
    await sql`
      UPDATE links SET routing_rules = jsonb_build_array(
        jsonb_build_object('kind', 'language', 'values', jsonb_build_array('ar'),
                           'target', 'https://news.example/ar/' || code),
        jsonb_build_object('kind', 'country', 'values', jsonb_build_array('EG', 'SA'),
                           'target', 'https://news.example/mena/' || code))
      WHERE code = ANY(SELECT ${prefix} || i FROM generate_series(${from}::int, ${to}::int) AS i
                       WHERE i % ${LINK_STATE_VARIANTS * 2} = 0)`;
    await sql`
      INSERT INTO vendor_links (code, vendor, vendor_id, state, synced_url, attempts, synced_at)
      SELECT code, 'bitly', 'sho.rt/' || code, 'synced', target_url, 1, now() FROM links
      WHERE code = ANY(SELECT ${prefix} || i FROM generate_series(${from}::int, ${to}::int, 3) AS i)`;
    await sql`
      INSERT INTO reports (code, reporter_hash, reason)
      SELECT ${prefix} || i, 'r' || n, 'looks like phishing' FROM generate_series(${from}::int, ${to}::int) AS i,
        generate_series(1, 3) AS n WHERE i % ${LINK_STATE_VARIANTS} = 18`;
    await sql`
      INSERT INTO audit_log (code, actor, action, after, reason)
      SELECT ${prefix} || i, 'apikey:1', 'link.created', jsonb_build_object('url', 'https://news.example/' || i), NULL
      FROM generate_series(${from}::int, ${to}::int) AS i`;
    await sql`
      INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks)
      SELECT ${prefix} || i, date_trunc('hour', now()) - interval '1 hour', 'human', 'DE', 't.co', i % 50 + 1
      FROM generate_series(${from}::int, ${to}::int, 2) AS i`;
  }
}

const noClicks: ClickRecorder = {
  record() {},
  cell: () => ({}) as never,
  recordInCell() {},
  flush: async () => {},
  pendingKeys: 0,
  close: async () => {},
};

/**
 * Lifeline's own answerer on `sql` with `config`'s redirect settings and target rule (as the service applies it):
 * the LRU off, every lookup from Postgres.
 */
export function createStandaloneAnswerer(config: Config, sql: Sql): RedirectAnswerer {
  const resolver = createLayeredResolver({
    sql,
    metrics: undefined,
    logger: undefined,
    store: undefined,
    bus: undefined,
    subscribe: false,
    cacheMax: 0,
    cacheTtlMs: 1,
    negativeTtlMs: 0,
    storeTimeoutMs: 50,
    postgresConcurrency: 8,
    // A reference answer, not a latency check: a loaded test machine must not turn a slow lookup into a 503.
    postgresTimeoutMs: 30_000,
    targetPolicy: createCanonicalTargetPolicy(config),
  });
  return createRedirectAnswerer({
    resolver,
    config: {
      shortBaseUrl: config.shortBaseUrl,
      shortDomains: config.shortDomains,
      unknownHost: config.unknownHost,
      redirect: config.redirect,
      resolver: { cacheMax: 0 },
    },
    metrics: createMetrics(),
    clicks: noClicks,
    pages: redirectPages,
  });
}

/** One answer as a comparable line: `code status Location|-`, plus a hash of the page for 200s (warn pages). */
export async function describeAnswers(
  answerer: RedirectAnswerer,
  codes: string[],
  concurrency = 16,
): Promise<string[]> {
  const out: string[] = new Array(codes.length);
  const indexed = codes.map((code, index) => ({ code, index }));
  await forEachConcurrently(indexed, concurrency, async ({ code, index }) => {
    const answer = await answerer.answer({ method: 'GET', code, query: '', header: () => undefined });
    const page =
      answer.status === 200
        ? ` ${createHash('sha1')
            .update(answer.body ?? '')
            .digest('hex')}`
        : '';
    out[index] = `${code} ${answer.status} ${answer.headers.Location ?? '-'}${page}`;
  });
  return out;
}
