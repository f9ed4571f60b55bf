// Destination checks' throughput, memory and politeness against real Postgres and loopback web sites.
//
//   npx tsx bench/destination_checks.ts [destinations=100000] [hosts=200] [hostRate=50]
//
// `destinations` links over `hosts` made-up host names (all answered by one loopback server: one host in twenty
// answers 404, the rest a page per link and a 404 for the soft-404 probe's made-up sibling), checked by a worker
// process running the activity's lib function (lib/destinations/check_due_destinations.ts) until nothing is due.
// Reported: checks per second, the worker's peak RSS, and politeness violations as the server saw them (two
// requests to one host at once; a request sooner than 1/hostRate after the host's previous answer) — must be 0.
// Baseline, in the same run: the same two requests per destination with bare node:http at the same concurrency
// (no gate, no rule, no classification, no Postgres), over a sample; the ratio is what the checks cost on top.
import { spawn } from 'node:child_process';
import { startDestinationSites } from '../devkit/fakes/destination_sites.ts';
import { createTestDatabase } from '../devkit/harness/database.ts';
import { seedDestinationStates } from '../lib/stores/destination_state_store.ts';

const destinations = Number(process.argv[2] ?? 100_000);
const hosts = Number(process.argv[3] ?? 200);
const hostRate = Number(process.argv[4] ?? 50);
const sample = Math.min(destinations, 20_000);

function runWorker(env: Record<string, string>): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/destination_checks_worker.ts'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split('\n').at(-1)!))
        : reject(new Error(`worker exit ${code}`)),
    );
  });
}

const sites = await startDestinationSites({ noLog: true, minGapMs: 1000 / hostRate });
const db = await createTestDatabase();
try {
  for (let i = 0; i < hosts; i++)
    sites.set(
      `h${i}.bench.test`,
      i % 20 === 19 ? { kind: 'status', status: 404 } : { kind: 'page', pattern: /^\/story-\d+$/ },
    );
  await db.sql`
    INSERT INTO links (code, target_url, status, origin, owner)
    SELECT 'd' || i, 'http://h' || (i % ${hosts}) || '.bench.test:' || ${sites.port}::int || '/story-' || i,
           'active', 'api', 'bench'
    FROM generate_series(1, ${destinations}) AS i`;
  let seeded = 0;
  for (;;) {
    const n = await seedDestinationStates(db.sql, { limit: 20_000, spreadMs: 0 });
    if (n === 0) break;
    seeded += n;
  }
  await db.sql`UPDATE destination_states SET next_check_at = now() - interval '1 minute'`;
  await db.sql`ANALYZE destination_states`;

  const checks = await runWorker({ MODE: 'checks', DATABASE_URL: db.url, HOST_RATE: String(hostRate) });
  // Counted now: the baseline after it is impolite by design.
  const politenessViolations = { overlaps: sites.overlaps, tooSoon: sites.gapViolations };
  const bare = await runWorker({ MODE: 'bare', DATABASE_URL: db.url, SAMPLE: String(sample) });
  const bareRate = (bare.checks as number) / ((bare.ms as number) / 1000);
  const checkRate = (checks.checks as number) / ((checks.ms as number) / 1000);
  const [verdicts] = await db.sql`
    SELECT count(*) FILTER (WHERE verdict = 'ok')::int AS ok, count(*) FILTER (WHERE verdict = 'suspect')::int AS suspect,
           count(*) FILTER (WHERE next_check_at <= now())::int AS due
    FROM destination_states`;
  console.log(
    JSON.stringify(
      {
        destinations,
        seeded,
        hosts,
        hostRate,
        checks: checks.checks,
        byOutcome: checks.byOutcome,
        seconds: Math.round(checks.ms as number) / 1000,
        checksPerSecond: Math.round(checkRate),
        workerPeakRssMb: checks.maxRssMb,
        baseline: { sample, checksPerSecond: Math.round(bareRate), peakRssMb: bare.maxRssMb },
        ratioToBaseline: Math.round((checkRate / bareRate) * 1000) / 1000,
        politenessViolations,
        rowsAfter: verdicts,
      },
      null,
      2,
    ),
  );
} finally {
  await db.drop();
  await sites.close();
}
