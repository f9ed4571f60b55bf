// `npm test` after typecheck and lint: real Postgres, real Redis and one real Temporal dev server shared by
// the whole run (each test uses its own task queue and workflow IDs), node:test over every tests/**/*.test.ts*.
//
//   tsx scripts/test.ts [filter...]     only files whose path contains one of the filters
//   TEST_CONCURRENCY=1 tsx scripts/test.ts
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import postgres from 'postgres';
import { migrateDatabase } from '../lib/stores/migrate.ts';
import { WORKFLOWS_PATH } from '../workers/create_worker.ts';
import { getFreePort, startDevServer } from './dev_server.ts';
import { ensureTemporalCli, ROOT } from './temporal_cli.ts';
import { ensureTestServices } from './test_services.ts';

const say = (msg: string) => process.stderr.write(`[test] ${msg}\n`);
const started = Date.now();

function findTests(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'helpers' && name !== 'histories') out.push(...findTests(path));
    } else if (/\.test\.tsx?$/.test(name)) {
      out.push(path);
    }
  }
  return out.sort();
}

async function main() {
  const filters = process.argv.slice(2);
  const files = findTests(join(ROOT, 'tests')).filter(
    (f) => filters.length === 0 || filters.some((x) => relative(ROOT, f).includes(x)),
  );
  if (files.length === 0) throw new Error(`no test files match ${filters.join(' ')}`);

  say(`Node ${process.version} (${process.execPath})`);
  const services = await ensureTestServices(say);
  const cli = await ensureTemporalCli(say);
  const runId = `${process.pid}_${Date.now().toString(36)}`;

  // One migrated template database; each test file clones it (CREATE DATABASE ... TEMPLATE) in ~100 ms.
  const template = `lifeline_tpl_${runId}`;
  const admin = postgres(services.postgresAdminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE "${template}"`);
  const templateUrl = new URL(services.postgresAdminUrl);
  templateUrl.pathname = `/${template}`;
  await migrateDatabase(templateUrl.toString());

  const port = await getFreePort();
  say('starting the shared Temporal dev server...');
  const devServer = await startDevServer({ cli, port, log: say });

  say('bundling workflows once for every test worker...');
  mkdirSync(join(ROOT, '.cache'), { recursive: true });
  const bundlePath = join(ROOT, '.cache', `workflow-bundle-${runId}.js`);
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger });
  writeFileSync(bundlePath, code);

  say(`running ${files.length} test file(s) (setup took ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  const concurrency = process.env.TEST_CONCURRENCY ?? '2';
  const exitCode = await new Promise<number>((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        // Every report frame reaches this process before a child's forced exit (the file says why).
        '--import',
        './scripts/test_report_flush.mjs',
        '--test',
        `--test-concurrency=${concurrency}`,
        '--test-reporter=spec',
        '--test-force-exit',
        ...files.map((f) => relative(ROOT, f)),
      ],
      {
        cwd: ROOT,
        stdio: 'inherit',
        env: {
          ...process.env,
          LIFELINE_TEST_RUN_ID: runId,
          LIFELINE_TEST_POSTGRES_ADMIN_URL: services.postgresAdminUrl,
          LIFELINE_TEST_DATABASE_TEMPLATE: template,
          LIFELINE_TEST_REDIS_URL: services.redisUrl,
          LIFELINE_TEST_TEMPORAL_ADDRESS: devServer.address,
          LIFELINE_TEST_WORKFLOW_BUNDLE: bundlePath,
          TEMPORAL_CLI: cli,
        },
      },
    );
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });

  await devServer.stop();
  // Drop the template and any database a crashed test file left behind.
  const leftovers = await admin<{ datname: string }[]>`
    SELECT datname FROM pg_database WHERE datname LIKE ${`lifeline_t_${runId}_%`} OR datname = ${template}`;
  for (const { datname } of leftovers)
    await admin.unsafe(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  await admin.end();
  say(`done in ${((Date.now() - started) / 1000).toFixed(1)} s, exit ${exitCode}`);
  process.exit(exitCode);
}

const quietLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string) => say(`bundler: ${message}`),
  error: (message: string) => say(`bundler: ${message}`),
};

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
