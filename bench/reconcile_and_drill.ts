// Reconciliation throughput (links/s), import throughput, and failover-drill duration, against real Postgres,
// a real Temporal dev server and the Bitly fake.
//
//   npx tsx bench/reconcile_and_drill.ts [links=10000] [bitlyOnly=5000]
//
// Baseline, in the same run: paging through the group's bitlinks alone (the Bitly client over HTTP, no
// Postgres, no Temporal). reconcile/baseline shows what classification, marks and the workflow cost on top.
import { performance } from 'node:perf_hooks';
import { startBitlyFake } from '../devkit/fakes/bitly_fake.ts';
import { createHarness } from '../devkit/harness/harness.ts';
import { uniqueId } from '../devkit/harness/temporal.ts';
import { setActiveFront } from '../lib/failover/active_front.ts';
import { createBitlyProvider } from '../lib/vendors/bitly.ts';
import type { ChangeFrontInput, ChangeFrontReport, ReconcileReport } from '../workflows/contract.ts';

const links = Number(process.argv[2] ?? 10_000);
const bitlyOnly = Number(process.argv[3] ?? 5_000);

const fake = await startBitlyFake({ domains: ['sho.rt'] });
const h = await createHarness({ env: { ...fake.env(), LOG_LEVEL: 'silent' } });
try {
  await h.db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    SELECT 'r' || i, 'https://news.example/r/' || i, 'active', 'clean', 'api', 'bench'
    FROM generate_series(1, ${links}) AS i`;
  const codes: string[] = [];
  const ids: string[] = [];
  const urls: string[] = [];
  for (let i = 1; i <= links; i++) {
    const made = fake.seed({ keyword: `r${i}`, longUrl: `https://news.example/r/${i}` });
    codes.push(`r${i}`);
    ids.push(made.id);
    urls.push(`https://news.example/r/${i}`);
  }
  await h.db.sql`
    INSERT INTO vendor_links (code, vendor, vendor_id, state, synced_url, synced_at)
    SELECT t.c, 'bitly', t.i, 'synced', t.u, now()
    FROM unnest(${h.db.sql.array(codes)}::text[], ${h.db.sql.array(ids)}::text[], ${h.db.sql.array(urls)}::text[])
      AS t(c, i, u)`;
  await h.db.sql`ANALYZE`;

  // Baseline: page through Bitly only.
  const bitly = createBitlyProvider(h.config.bitly!, {});
  const t0 = performance.now();
  let listed = 0;
  for await (const _ of bitly.iterateLinks({ size: 100 })) listed++;
  const baselineMs = performance.now() - t0;

  const worker = await h.startWorker();
  const run = async (args: Record<string, unknown>) => {
    const t = performance.now();
    const report = (await h.temporal.client.workflow.execute('reconcileLinksWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: uniqueId('reconcile:bench'),
      args: [args],
    })) as ReconcileReport;
    return { report, ms: performance.now() - t };
  };
  const check = await run({ repair: false, reason: 'bench check' });

  for (let i = 0; i < bitlyOnly; i++)
    fake.seed({ keyword: `only-${i}`, longUrl: `https://archive.example/${i}` });
  const imported = await run({ reason: 'bench import' });

  await setActiveFront(h.db.sql, { active: 'bitly', since: new Date().toISOString() });
  const t2 = performance.now();
  const drill = (await h.temporal.client.workflow.execute('changeFrontWorkflow', {
    taskQueue: h.taskQueue,
    workflowId: `drill:inhouse:bench-${Date.now()}`,
    args: [
      { to: 'inhouse', drill: true, requestedBy: 'bench', dnsTtlSeconds: 300 } satisfies ChangeFrontInput,
    ],
  })) as ChangeFrontReport;
  const drillMs = performance.now() - t2;
  await worker.stop();

  const rate = (n: number, ms: number) => Math.round((n * 1000) / ms);
  console.log(
    JSON.stringify(
      {
        links,
        baselineListing: {
          links: listed,
          ms: Math.round(baselineMs),
          linksPerSecond: rate(listed, baselineMs),
        },
        reconcileCheck: {
          links: check.report.read,
          ms: Math.round(check.ms),
          linksPerSecond: rate(check.report.read, check.ms),
          drift: check.report.bitly?.drift,
        },
        reconcileToBaseline: Number(
          (rate(check.report.read, check.ms) / rate(listed, baselineMs)).toFixed(2),
        ),
        importRun: {
          bitlyOnly,
          imported: imported.report.bitly?.imported,
          ms: Math.round(imported.ms),
          linksPerSecond: rate(imported.report.read, imported.ms),
        },
        drill: {
          activeLinks: drill.verify.checked,
          ms: Math.round(drillMs),
          steps: drill.steps,
          estimatedFailoverMs: drill.estimatedFailoverMs,
        },
      },
      null,
      2,
    ),
  );
} finally {
  await h.close();
  await fake.stop();
}
