// Re-scan throughput (links/s) against real Postgres, a real Temporal dev server and the Safe Browsing fake.
//
//   npx tsx bench/rescan_throughput.ts [links=20000] [maliciousPercent=1]
//
// Baseline, in the same run: the scanner alone (rules, blocklist query, Safe Browsing call, in chunks of
// 500) over the same URLs, with no Postgres writes and no Temporal. The ratio shows what the durable
// workflow (paging, heartbeats, verdict writes, audit, sync requests) costs on top of the checks themselves.
// `settled` adds the changes' propagation: from the pass's start until no sync-queue row waits and no per-link
// sync workflow runs.
import { performance } from 'node:perf_hooks';
import { startSafeBrowsingFake } from '../devkit/fakes/safe_browsing_fake.ts';
import { createHarness } from '../devkit/harness/harness.ts';
import { uniqueId } from '../devkit/harness/temporal.ts';
import { createSafeBrowsing } from '../lib/safety/safe_browsing.ts';
import { createSafetyScanner } from '../lib/safety/safety_scanner.ts';
import type { RescanReport } from '../workflows/contract.ts';

const links = Number(process.argv[2] ?? 20_000);
const maliciousPercent = Number(process.argv[3] ?? 1);
const HOSTS = 200;

const fake = await startSafeBrowsingFake();
const h = await createHarness({
  env: { SAFE_BROWSING_API_KEY: fake.apiKey, SAFE_BROWSING_API_BASE_URL: fake.baseUrl, LOG_LEVEL: 'silent' },
});
try {
  await h.db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    SELECT 'b' || i, 'https://host' || (i % ${HOSTS}) || '.example/article/' || i, 'active', 'clean', 'api', 'bench'
    FROM generate_series(1, ${links}) AS i`;
  // Two links in three were clicked (link_last_clicks), the rest never.
  await h.db.sql`
    INSERT INTO link_last_clicks (code, last_clicked_at)
    SELECT 'b' || i, now() - (i || ' seconds')::interval FROM generate_series(1, ${links}) AS i WHERE i % 3 <> 0`;
  await h.db.sql`ANALYZE links`;
  const maliciousHosts = Math.round((HOSTS * maliciousPercent) / 100);
  for (let i = 0; i < maliciousHosts; i++) fake.addThreat(`host${i}.example/`, 'MALWARE');
  const urls = (await h.db.sql<{ url: string }[]>`SELECT target_url AS url FROM links ORDER BY code`).map(
    (r) => r.url,
  );

  // Baseline: the checks alone.
  const scanner = createSafetyScanner({
    sql: h.db.sql,
    safeBrowsing: createSafeBrowsing({ apiKey: fake.apiKey, apiBaseUrl: fake.baseUrl }),
  });
  const t0 = performance.now();
  for (let i = 0; i < urls.length; i += 500) await scanner.scanMany(urls.slice(i, i + 500));
  const baselineMs = performance.now() - t0;

  // The durable re-scan.
  const worker = await h.startWorker();
  const t1 = performance.now();
  const report = (await h.temporal.client.workflow.execute('rescanLinksWorkflow', {
    taskQueue: h.taskQueue,
    workflowId: uniqueId('rescan:bench'),
    args: [{ reason: 'bench' }],
  })) as RescanReport;
  const workflowMs = performance.now() - t1;
  let settledMs = 0;
  for (let quiet = 0; quiet < 2; ) {
    const [queued] = await h.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM link_sync_queue`;
    const { count } = await h.temporal.client.workflow.count(
      `WorkflowType = 'syncLinkWorkflow' AND TaskQueue = '${h.taskQueue}' AND ExecutionStatus = 'Running'`,
    );
    // Visibility lags a little behind: twice in a row.
    quiet = queued!.n === 0 && count === 0 ? quiet + 1 : 0;
    if (quiet === 1) settledMs = performance.now() - t1;
    await new Promise((r) => setTimeout(r, 200));
  }
  await worker.stop();

  const baselineRate = (links * 1000) / baselineMs;
  const workflowRate = (links * 1000) / workflowMs;
  const result = {
    links,
    changed: report.changedTo,
    verified: report.verified,
    activityCalls: report.work.calls,
    safeBrowsingCalls: fake.requests.length,
    baseline: { ms: Math.round(baselineMs), linksPerSecond: Math.round(baselineRate) },
    workflow: { ms: Math.round(workflowMs), linksPerSecond: Math.round(workflowRate) },
    settled: { ms: Math.round(settledMs), linksPerSecond: Math.round((links * 1000) / settledMs) },
    workflowToBaseline: Number((workflowRate / baselineRate).toFixed(2)),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  await h.close();
  await fake.close();
}
