// Start-up and memory of the web tier and the worker, from source (`npm run web` / `worker`: tsx compiles
// TypeScript as it loads, the worker bundles workflows/) against the build (`npm run start:web` / `start:worker`:
// Node on dist/). Each start is timed from spawn to /readyz 200, then the resident memory of its process tree
// (tsx runs the entry in a child of its own CLI process) is read from /proc after it has settled. The variants
// alternate, ROUNDS times each, on one migrated database, so the numbers compare as ratios within a run.
//
//   npx tsx bench/start_up.ts                 # builds dist/ first, 3 rounds
//   BENCH_ROUNDS=5 npx tsx bench/start_up.ts
//
// Uses the local Postgres (127.0.0.1:5432) and Redis (6379); starts its own Temporal dev server unless
// LIFELINE_TEST_TEMPORAL_ADDRESS is set.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { migrateDatabase } from '../lib/stores/migrate.ts';
import { buildDist } from '../scripts/build.ts';
import { getFreePort, startDevServer } from '../scripts/dev_server.ts';
import { ensureTemporalCli, ROOT } from '../scripts/temporal_cli.ts';
import { webNodeFlags } from '../scripts/web_node_flags.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SETTLE_MS = 3_000;
const ADMIN_URL =
  process.env.LIFELINE_TEST_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const say = (msg: string) => process.stderr.write(`[start_up] ${msg}\n`);

type Role = 'web' | 'worker';
type Form = 'source' | 'built';

/** The command each form runs, as its npm script does. */
function commandOf(role: Role, form: Form): [string, string[]] {
  if (form === 'built') return ['sh', [join(ROOT, 'scripts', 'lifeline.sh'), role]];
  const tsx = join(ROOT, 'node_modules', '.bin', 'tsx');
  return role === 'web' ? [tsx, [...webNodeFlags(ROOT), 'main.ts']] : [tsx, ['workers/main.ts']];
}

/** Resident memory (kB) of `pid` and every descendant. */
function treeRssKb(pid: number): number {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(name)]);
    } catch {}
  }
  let total = 0;
  const visit = (p: number) => {
    try {
      const status = readFileSync(`/proc/${p}/status`, 'utf8');
      total += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    } catch {}
    for (const child of children.get(p) ?? []) visit(child);
  };
  visit(pid);
  return total;
}

async function ready(url: string, child: ChildProcess, output: () => string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}:\n${output().slice(-2000)}`);
    try {
      const response = await fetch(url);
      await response.body?.cancel();
      if (response.status === 200) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function startOnce(
  role: Role,
  form: Form,
  env: Record<string, string>,
): Promise<{ readyMs: number; rssMb: number }> {
  const port = await getFreePort();
  const [command, args] = commandOf(role, form);
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME ?? '/root',
      ...env,
      ...(role === 'web'
        ? { PORT: String(port), HOST: '127.0.0.1', SHUTDOWN_DELAY_MS: '0' }
        : { WORKER_HEALTH_PORT: String(port), WORKER_HEALTH_HOST: '127.0.0.1' }),
    },
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => {
    output += c;
  });
  child.stderr!.on('data', (c: Buffer) => {
    output += c;
  });
  try {
    await ready(`http://127.0.0.1:${port}/readyz`, child, () => output);
    const readyMs = performance.now() - started;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    return { readyMs, rssMb: treeRssKb(child.pid!) / 1024 };
  } finally {
    const exited = new Promise((r) => child.once('close', r));
    child.kill('SIGTERM');
    await exited;
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main() {
  say('building dist/ ...');
  await buildDist({ log: say });
  const name = `lifeline_bench_startup_${process.pid}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  await migrateDatabase(url.toString());
  let address = process.env.LIFELINE_TEST_TEMPORAL_ADDRESS;
  let stopServer: (() => Promise<void>) | undefined;
  if (!address) {
    const server = await startDevServer({
      cli: await ensureTemporalCli(say),
      port: await getFreePort(),
      log: () => {},
    });
    address = server.address;
    stopServer = () => server.stop();
  }
  const env = {
    DATABASE_URL: url.toString(),
    TEMPORAL_ADDRESS: address,
    TEMPORAL_TASK_QUEUE: `bench-startup-${process.pid}`,
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: `bench-startup-${process.pid}:`,
    BOOTSTRAP_API_KEY: 'll_bench_startup_0000000000000000000000000000',
    WORDPRESS_WEBHOOK_SECRET: 'whsec_bench_startup_000000000000000000000000',
    ADMIN_EMAIL: 'admin@example.test',
    ADMIN_PASSWORD: 'correct horse battery',
    LOG_LEVEL: 'warn',
  };
  const results = new Map<string, { readyMs: number[]; rssMb: number[] }>();
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const role of ['web', 'worker'] as const) {
        for (const form of (round % 2 ? ['source', 'built'] : ['built', 'source']) as Form[]) {
          const sample = await startOnce(role, form, env);
          const key = `${role} ${form}`;
          const entry = results.get(key) ?? { readyMs: [], rssMb: [] };
          entry.readyMs.push(sample.readyMs);
          entry.rssMb.push(sample.rssMb);
          results.set(key, entry);
          say(
            `round ${round}: ${key}: ready in ${sample.readyMs.toFixed(0)} ms, RSS ${sample.rssMb.toFixed(0)} MB`,
          );
        }
      }
    }
  } finally {
    await stopServer?.();
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`\n${new Date().toISOString()}, Node ${process.version}, ${ROUNDS} rounds, load ${load}\n`);
  console.log('| process | to /readyz 200 (median) | RSS after 3 s (median) | built / source |');
  console.log('| --- | --- | --- | --- |');
  for (const role of ['web', 'worker'] as const) {
    const source = results.get(`${role} source`)!;
    const built = results.get(`${role} built`)!;
    for (const [form, r] of [
      ['source', source],
      ['built', built],
    ] as const) {
      const ratio =
        form === 'built'
          ? `time ${(median(built.readyMs) / median(source.readyMs)).toFixed(2)}×, RSS ${(median(built.rssMb) / median(source.rssMb)).toFixed(2)}×`
          : '';
      console.log(
        `| ${role} ${form} | ${median(r.readyMs).toFixed(0)} ms | ${median(r.rssMb).toFixed(0)} MB | ${ratio} |`,
      );
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
