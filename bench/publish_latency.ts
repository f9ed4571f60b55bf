// Publish-to-active latency: signed post.published webhooks through the real app, the real worker, real
// Postgres and a real Temporal dev server, with Bitly as the HTTP fake. Two runs in one process, so the
// numbers compare as a ratio: the in-house front alone (baseline: no Bitly configured), then with Bitly.
//
//   npx tsx bench/publish_latency.ts                         # 100 publishes each, one at a time
//   BENCH_PUBLISHES=200 BENCH_CONCURRENCY=10 BENCH_BITLY_LATENCY_MS=80 npx tsx bench/publish_latency.ts
//
// "Active" is measured twice: when the link's activation committed in Postgres (the audit entry's time: what a
// reader sees) and when the client saw the workflow complete. Uses the local Postgres (127.0.0.1:5432) and
// starts its own Temporal dev server unless LIFELINE_TEST_TEMPORAL_ADDRESS is set.
import { type BitlyFake, startBitlyFake } from '../devkit/fakes/bitly_fake.ts';
import { createHarness, type Harness } from '../devkit/harness/harness.ts';
import { wordpressEvent } from '../devkit/harness/wordpress_events.ts';

const PUBLISHES = Number(process.env.BENCH_PUBLISHES ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1);
const BITLY_LATENCY_MS = Number(process.env.BENCH_BITLY_LATENCY_MS ?? 0);
const WARMUP = 5;

interface Sample {
  toActiveMs: number;
  toCompletedMs: number;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function publishOnce(h: Harness, postId: number): Promise<Sample> {
  const event = wordpressEvent('post.published', { postId, title: 'عاجل' });
  const sentAt = Date.now();
  const res = await h.webhook(event);
  if (res.status !== 202) throw new Error(`webhook answered ${res.status}: ${await res.text()}`);
  await h.temporal.client.workflow.getHandle(`publish:news:${postId}`).result();
  const completedAt = Date.now();
  const [row] = await h.db.sql<{ at: Date }[]>`
    SELECT a.created_at AS at FROM audit_log a JOIN links l ON l.code = a.code
    WHERE l.site = 'news' AND l.post_id = ${postId} AND a.action = 'link.status_changed'
      AND a.after->>'status' = 'active'`;
  if (!row) throw new Error(`post ${postId} never became active`);
  return { toActiveMs: row.at.getTime() - sentAt, toCompletedMs: completedAt - sentAt };
}

async function run(label: string, h: Harness, firstPostId: number) {
  for (let i = 0; i < WARMUP; i++) await publishOnce(h, firstPostId - 1000 + i);
  const samples: Sample[] = [];
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < PUBLISHES) {
        const postId = firstPostId + next++;
        samples.push(await publishOnce(h, postId));
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  const active = samples.map((s) => s.toActiveMs);
  const completed = samples.map((s) => s.toCompletedMs);
  const result = {
    label,
    publishes: samples.length,
    concurrency: CONCURRENCY,
    activeP50: percentile(active, 50),
    activeP95: percentile(active, 95),
    completedP50: percentile(completed, 50),
    completedP95: percentile(completed, 95),
    perSecond: samples.length / seconds,
  };
  console.log(
    `${label.padEnd(26)} publish→active p50 ${result.activeP50} ms  p95 ${result.activeP95} ms  | ` +
      `workflow done p50 ${result.completedP50} ms  p95 ${result.completedP95} ms  | ${result.perSecond.toFixed(1)} publishes/s`,
  );
  return result;
}

async function main() {
  process.env.LOG_LEVEL ??= 'silent';
  const fake: BitlyFake = await startBitlyFake({ domains: ['sho.rt'] });
  fake.latencyMs = BITLY_LATENCY_MS;
  console.log(
    `publish latency: ${PUBLISHES} publishes per run, ${CONCURRENCY} in flight, Bitly fake latency ${BITLY_LATENCY_MS} ms`,
  );

  const baseline = await createHarness();
  await baseline.startWorker();
  const inhouse = await run('in-house only (baseline)', baseline, 10_000);
  await baseline.close();

  const withBitly = await createHarness({ env: fake.env() });
  await withBitly.startWorker();
  const bitly = await run('with Bitly sync', withBitly, 20_000);
  const bitlyCalls = fake.requests.length;
  await withBitly.close();
  await fake.stop();

  console.log(
    `ratio with/without Bitly: p50 ${(bitly.activeP50 / inhouse.activeP50).toFixed(2)}×, ` +
      `p95 ${(bitly.activeP95 / inhouse.activeP95).toFixed(2)}× (${bitlyCalls} Bitly calls)`,
  );
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
