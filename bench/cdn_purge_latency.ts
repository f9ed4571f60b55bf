// Edit → CDN purge latency: how long after an edit's API answer the CDN receives the purge of that link's paths,
// through the real app, a real worker (the link's sync workflow and its purge activity), real Postgres and a real
// Temporal dev server, with the generic purge webhook as the HTTP fake (it records when each purge arrives).
//
//   npx tsx bench/cdn_purge_latency.ts                  # 100 edits, one at a time
//   BENCH_EDITS=300 BENCH_CONCURRENCY=10 npx tsx bench/cdn_purge_latency.ts
//
// Uses the local Postgres (127.0.0.1:5432) and starts its own Temporal dev server unless
// LIFELINE_TEST_TEMPORAL_ADDRESS is set. Prints the load average: timings here are shared-machine timings.
import { loadavg } from 'node:os';
import { startCdnWebhookFake } from '../devkit/fakes/cdn_webhook_fake.ts';
import { createHarness, createLinkCode, eventually } from '../devkit/harness/harness.ts';
import { forEachConcurrently } from '../lib/shared/concurrency.ts';

const EDITS = Number(process.env.BENCH_EDITS ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const fake = await startCdnWebhookFake({ shortBaseUrl: 'https://sho.rt' });
const h = await createHarness({
  env: {
    CDN_PURGE_PROVIDER: 'webhook',
    CDN_PURGE_WEBHOOK_URL: fake.url,
    CDN_PURGE_WEBHOOK_SECRET: fake.secret,
    SHORT_BASE_URL: 'https://sho.rt',
    REDIRECT_CACHE_CONTROL: 'public, max-age=60, s-maxage=86400',
  },
});
const worker = await h.startWorker();
try {
  const codes: string[] = [];
  for (let i = 0; i < EDITS; i++)
    codes.push(await createLinkCode(h, { url: `https://news.example/bench/${i}` }));
  // Creations purge nothing; let their sync workflows finish before timing edits.
  for (const code of codes) await h.temporal.client.workflow.getHandle(`sync:${code}`).result();
  fake.reset();
  const load = loadavg()[0]!.toFixed(2);
  const answeredAt = new Map<string, number>();
  const started = Date.now();
  await forEachConcurrently(codes, CONCURRENCY, async (code, i) => {
    const res = await h.api(`/api/v1/links/${code}`, {
      method: 'PATCH',
      json: { url: `https://news.example/bench/${i}/edited` },
    });
    if (res.status !== 200) throw new Error(`PATCH answered ${res.status}`);
    answeredAt.set(code, Date.now());
    await res.body?.cancel();
    await eventually(async () => (fake.purges.some((p) => p.items[0] === `/${code}`) ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 2,
      what: `the purge of ${code}`,
    });
  });
  const arrivals = new Map<string, number>();
  for (const request of fake.requests) {
    if (request.status !== 200) continue;
    const code = (JSON.parse(request.rawBody) as { paths: string[] }).paths[0]!.slice(1);
    if (!arrivals.has(code)) arrivals.set(code, request.at);
  }
  const latencies = codes.map((c) => arrivals.get(c)! - answeredAt.get(c)!);
  console.log(
    JSON.stringify({
      edits: EDITS,
      concurrency: CONCURRENCY,
      loadAverage1m: Number(load),
      loadAverageAfter1m: Number(loadavg()[0]!.toFixed(2)),
      wallMs: Date.now() - started,
      editAnswerToPurgeMs: {
        p50: percentile(latencies, 50),
        p95: percentile(latencies, 95),
        p99: percentile(latencies, 99),
        max: Math.max(...latencies),
        min: Math.min(...latencies),
      },
    }),
  );
} finally {
  await worker.stop();
  await h.close();
  await fake.stop();
}
