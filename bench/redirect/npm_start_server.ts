// The `npm start` row: the embedded default (scripts/start.ts: Temporal dev server, PGlite, migrations, the
// worker and the web server in one process) with its .data pointed at a temp dir (LIFELINE_DATA_DIR), free
// ports, and its links created through the public API before the rounds, as a newsroom would create them.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { listChildPids } from '../../devkit/harness/process_tree.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import {
  BENCH_METRICS_TOKEN,
  type BenchServer,
  httpGet,
  readCpuMicros,
  stopChild,
  waitForRedirect,
} from './bench_server.ts';
import { CODE_PREFIX, NPM_START_SETTLE_SECONDS, ROOT, say, sleep, toTargetUrl } from './bench_settings.ts';

/** Most links one batch request takes (API.md: POST /links/batch, up to 1000). */
const BATCH_SIZE = 1000;

async function waitForHealth(url: string, child: ChildProcess, stderr: () => string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`npm start exited (${child.exitCode ?? child.signalCode}): ${stderr()}`);
    const status = await httpGet(`${url}/healthz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await sleep(500);
  }
  throw new Error(`npm start was not healthy within ${timeoutMs / 1000} s: ${stderr()}`);
}

/** POSTs JSON with the API key; returns status and parsed body. */
async function postJson(
  url: string,
  apiKey: string,
  body: unknown,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json().catch(() => null) };
}

/** Creates codes 1..`codes` (alias `<prefix><n>`, the seeded targets) through POST /api/v1/links/batch. */
export async function createLinks(url: string, apiKey: string, codes: number): Promise<void> {
  const started = Date.now();
  for (let from = 1; from <= codes; from += BATCH_SIZE) {
    const links = [];
    for (let n = from; n < Math.min(codes + 1, from + BATCH_SIZE); n++)
      links.push({ url: toTargetUrl(n), alias: `${CODE_PREFIX}${n}` });
    const { status, body } = await postJson(`${url}/api/v1/links/batch`, apiKey, { links });
    const results = (body as { results?: { status: number; error?: { detail?: string } }[] } | null)?.results;
    const failed = results?.filter((r) => r.status !== 201) ?? [];
    if (status !== 200 || !results || failed.length > 0)
      throw new Error(
        `creating links ${from}..${from + links.length - 1} answered ${status}` +
          `${failed.length > 0 ? `, ${failed.length} failed (first: ${failed[0]!.status} ${failed[0]!.error?.detail ?? ''})` : ''}`,
      );
  }
  say(
    `created ${codes.toLocaleString('en')} links through the API in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

/**
 * npm start's processes (ADR 0022): the supervisor and what it spawned (the Temporal dev server, PGlite, the
 * worker and the web process), plus the dev server's pid from its pid file.
 */
function npmStartPids(supervisor: number, devPid: number | undefined): number[] {
  return [...new Set([supervisor, ...listChildPids(supervisor), ...(devPid ? [devPid] : [])])];
}

/** npm start's web process (`main.ts`, not `workers/main.ts`): the one that answers redirects. */
function npmStartWebPids(supervisor: number): number[] {
  return listChildPids(supervisor).filter((pid) => {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return args.some((a) => (a === 'main.ts' || a.endsWith('/main.ts')) && !a.endsWith('/workers/main.ts'));
    } catch {
      return false;
    }
  });
}

/** CPU (µs) used so far by the processes `npm start` runs (npmStartPids). */
function readTreeCpu(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const cpu = readCpuMicros(pid);
      total += cpu.user + cpu.system;
    } catch {}
  }
  return total;
}

/**
 * Waits until the new links' sync workflows (one `sync:{code}` per link, run by npm start's own worker against
 * its dev server and PGlite) are done: none running, their number steady and the CPU quiet over two polls in a
 * row. They would otherwise run during every server's rounds. Not every link gets one before the rounds: when
 * Temporal misses a start deadline, the API's background sync defers the rest of the batch to reconciliation
 * (lib/propagation/sync_after_change.ts), which the report shows. Returns the seconds waited and the number started.
 */
async function waitForSyncWorkflows(
  temporalAddress: string,
  pids: number[],
): Promise<{ seconds: number; syncWorkflows: number }> {
  const started = Date.now();
  const deadline = started + NPM_START_SETTLE_SECONDS * 1000;
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    const client = new Client({ connection });
    let lastSaid = 0;
    let cpuBefore = readTreeCpu(pids);
    let previous = -1;
    let calmPolls = 0;
    while (Date.now() < deadline) {
      await sleep(3_000);
      const all = (await client.workflow.count("WorkflowType = 'syncLinkWorkflow'")).count;
      const running = (
        await client.workflow.count("WorkflowType = 'syncLinkWorkflow' AND ExecutionStatus = 'Running'")
      ).count;
      const cpuNow = readTreeCpu(pids);
      // Below 10% of one core over the 3 s: the dev server's and worker's idle polling, nothing more.
      const cpuShare = (cpuNow - cpuBefore) / 3_000_000;
      const quiet = cpuShare < 0.1;
      cpuBefore = cpuNow;
      calmPolls = running === 0 && all === previous && quiet ? calmPolls + 1 : 0;
      previous = all;
      if (calmPolls >= 2) return { seconds: (Date.now() - started) / 1000, syncWorkflows: all };
      if (Date.now() - lastSaid > 30_000) {
        lastSaid = Date.now();
        say(
          `npm start: ${all} sync workflows started, ${running} running, ${Math.round(cpuShare * 100)}% of a core ` +
            'busy; waiting until none runs and it is quiet',
        );
      }
    }
  } finally {
    await connection.close();
  }
  throw new Error(
    `npm start: its links' sync workflows were still running after ${NPM_START_SETTLE_SECONDS} s ` +
      '(BENCH_NPM_START_SETTLE_SECONDS); its rounds would measure them too',
  );
}

/** Links whose sync the API deferred to reconciliation, from npm start's log (pino JSON lines on stdout). */
function countDeferredSyncs(log: string): number {
  let deferred = 0;
  for (const line of log.split('\n')) {
    if (!line.includes('batch sync deferred to reconciliation')) continue;
    try {
      // Each child's lines carry its name first (`[web] {...}`, scripts/supervised_process.ts).
      const json = line.replace(/^\[\w+\] /, '');
      deferred += Number((JSON.parse(json) as { deferred?: number }).deferred ?? 0);
    } catch {}
  }
  return deferred;
}

/**
 * Starts `node --import tsx scripts/start.ts` (what `npm start` runs, without npm's and tsx's wrapper
 * processes) with `env` (the path's resolver settings), creates `codes` links and waits until it is quiet.
 */
export async function startNpmStart(options: {
  dataDir: string;
  env: Record<string, string>;
  codes: number;
  /** As a newcomer runs it: without the bench's NODE_ENV=production and LOG_LEVEL=warn (the outside mode). */
  asUser?: boolean;
}): Promise<BenchServer & { settleSeconds: number; syncWorkflows: number; deferredSyncs: number }> {
  const [port, temporalPort, temporalUiPort] = [
    await getFreePort(),
    await getFreePort(),
    await getFreePort(),
  ];
  // Set, so that nothing is generated and printed (first-run credentials would land in our stderr buffer).
  const apiKey = `ll_bench_${randomBytes(24).toString('hex')}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: ROOT,
    detached: false,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...(process.env.TEMPORAL_CLI ? { TEMPORAL_CLI: process.env.TEMPORAL_CLI } : {}),
      ...(options.asUser ? {} : { NODE_ENV: 'production', LOG_LEVEL: 'warn' }),
      HOST: '127.0.0.1',
      PORT: String(port),
      LIFELINE_DATA_DIR: options.dataDir,
      TEMPORAL_DEV_SERVER_PORT: String(temporalPort),
      TEMPORAL_DEV_SERVER_UI_PORT: String(temporalUiPort),
      BOOTSTRAP_API_KEY: apiKey,
      ADMIN_EMAIL: 'bench@example.test',
      ADMIN_PASSWORD: randomBytes(16).toString('hex'),
      WORDPRESS_WEBHOOK_SECRET: randomBytes(24).toString('hex'),
      // Ten batches of 1,000 within a minute would hit the default budget (2,000 a minute per key).
      RATE_LIMIT_CREATE_PER_MINUTE: '1000000',
      // /metrics is served only with a token: the paths mode reads which layer answered from it, as for ours.
      METRICS_TOKEN: BENCH_METRICS_TOKEN,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  // Its structured log (warn and above; never secrets) goes to stdout: kept for the deferred-sync count.
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-1_000_000);
  });
  const explain = () => `${stderr}${log.slice(-2000)}`;
  const url = `http://127.0.0.1:${port}`;
  const devServerPid = () => {
    const file = join(options.dataDir, 'temporal.pid');
    return existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : undefined;
  };
  const stop = async () => {
    const devPid = devServerPid();
    // Its own shutdown drains the worker and stops PGlite and the dev server; 30 s before the hard way.
    const exit = await stopChild(child, 30_000);
    // Its shutdown removes the pid file; a file left behind means the dev server may still run.
    if (devPid && existsSync(join(options.dataDir, 'temporal.pid'))) {
      try {
        process.kill(-devPid, 'SIGKILL');
      } catch {}
    }
    return exit;
  };
  try {
    say('npm start: starting (Temporal dev server, PGlite, migrations, worker, web)');
    const started = Date.now();
    await waitForHealth(url, child, explain, 180_000);
    say(`npm start: healthy after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await createLinks(url, apiKey, options.codes);
    const devPid = devServerPid();
    const settled = await waitForSyncWorkflows(`127.0.0.1:${temporalPort}`, npmStartPids(child.pid!, devPid));
    const deferredSyncs = countDeferredSyncs(log);
    const refused = log.split('\n').find((line) => line.includes('Temporal did not accept the work'));
    if (refused) say(`npm start logged: ${refused.slice(0, 600)}`);
    say(
      `npm start: ${settled.syncWorkflows} sync workflows done ${settled.seconds.toFixed(0)} s after the links ` +
        `were created; ${deferredSyncs} links' syncs deferred to reconciliation by the API`,
    );
    await waitForRedirect('npm start', url, child, explain, 30_000);
    return {
      name: 'npm-start',
      port,
      url,
      pid: child.pid!,
      what: 'scripts/start.ts (Temporal dev server, PGlite, worker and web in their own processes; CPU and RSS: the web process)',
      servingPids: () => npmStartWebPids(child.pid!),
      fillsCache: true,
      ours: true,
      settleSeconds: settled.seconds,
      syncWorkflows: settled.syncWorkflows,
      deferredSyncs,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
