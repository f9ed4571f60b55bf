// The worker side of bench/destination_checks.ts, in a process of its own so its peak RSS is the checks' alone.
//   MODE=checks: the destination checks as the activity runs them (lib/destinations/check_due_destinations.ts):
//                due rows from Postgres, the politeness gate, classification, the batched writes.
//   MODE=bare:   the baseline: the same two requests per destination (HEAD, HEAD of a sibling path) with
//                node:http at the same concurrency, no gate, no rule, no Postgres writes.
// Prints one JSON line.
import http from 'node:http';
import { checkDueDestinations } from '../lib/destinations/check_due_destinations.ts';
import { createDestinationCheckDeps } from '../lib/destinations/destination_check_deps.ts';
import { forEachConcurrently } from '../lib/shared/concurrency.ts';
import { parseConfig } from '../lib/shared/config.ts';
import { createLogger } from '../lib/shared/logger.ts';
import type { OutgoingLookup } from '../lib/shared/outgoing_request.ts';
import { runOnce } from '../lib/shared/task_context.ts';
import { createSql } from '../lib/stores/sql.ts';

const env = process.env;
const sql = createSql({ url: env.DATABASE_URL!, max: 4 });
const loopback: OutgoingLookup = (_h, _o, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]);
const CONCURRENCY = 64;
const started = performance.now();
let result: Record<string, unknown>;

if (env.MODE === 'bare') {
  const sample = Number(env.SAMPLE);
  const urls = (
    await sql<{ url: string }[]>`SELECT url FROM destination_states ORDER BY code LIMIT ${sample}`
  ).map((r) => r.url);
  const t0 = performance.now();
  const head = (url: URL) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(url, { method: 'HEAD', agent: false, lookup: loopback as never }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
  await forEachConcurrently(urls, CONCURRENCY, async (u) => {
    const url = new URL(u);
    await head(url);
    await head(new URL(`/lifeline-check-${Math.random().toString(36).slice(2)}`, url));
  });
  result = { checks: urls.length, ms: performance.now() - t0 };
} else {
  const config = parseConfig({
    DATABASE_URL: env.DATABASE_URL,
    OUTGOING_ALLOWED_PRIVATE: '127.0.0.0/8',
    DESTINATION_CHECK_HOST_RATE: env.HOST_RATE,
    LOG_LEVEL: 'silent',
  });
  const deps = createDestinationCheckDeps(config, {
    sql,
    logger: createLogger({ level: 'silent', name: 'bench' }),
    lookup: loopback,
    resolveNs: async () => [],
    concurrency: CONCURRENCY,
  });
  const t0 = performance.now();
  let checks = 0;
  const byOutcome: Record<string, number> = {};
  for (;;) {
    const page = await checkDueDestinations(deps, { maxChecks: 2_000 }, runOnce());
    checks += page.counts.checked;
    for (const [k, n] of Object.entries(page.counts.byOutcome)) byOutcome[k] = (byOutcome[k] ?? 0) + n;
    if (!page.more) break;
  }
  result = { checks, ms: performance.now() - t0, byOutcome };
}
await sql.end({ timeout: 5 });
process.stdout.write(
  `${JSON.stringify({ ...result, maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024), totalMs: performance.now() - started })}\n`,
);
