// The sampler that splits a reconciliation leg's time by process: a stretch of busy work shows as CPU of the
// process that did it and nowhere else, a counter's growth between two moments is what it grew by then, and
// Postgres's counters are read from a real server.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { machineCounters, postgresCounters, startResourceSampler } from '../../bench/resource_sampler.ts';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a busy stretch is this process’s CPU, and a counter grows by what it grew between the two moments', async () => {
  let ticks = 0;
  const sampler = startResourceSampler({
    intervalMs: 50,
    groups: () => ({ self: [process.pid], none: [] }),
    counters: async () => ({ ticks, ...machineCounters() }),
  });
  await sleep(400);
  const from = Date.now();
  const cpuFrom = process.cpuUsage();
  const until = from + 600;
  // Busy, in slices short enough for the sampler's timer to run between them.
  while (Date.now() < until) {
    const slice = Date.now() + 20;
    while (Date.now() < slice) ticks += 0;
    ticks++;
    await sleep(0);
  }
  const to = Date.now();
  const used = process.cpuUsage(cpuFrom);
  const cpuSeconds = (used.user + used.system) / 1e6;
  await sleep(200);
  const grownBy = ticks;
  await sampler.stop();
  const d = sampler.between(from, to);
  assert.ok(d, 'two samples or more');
  assert.ok(d.seconds > 0.45 && d.seconds < 0.75, `the stretch is about 0.6 s, got ${d.seconds}`);
  // What the process says it used over the stretch, whatever else the machine was doing (samples are 50 ms
  // apart, CPU time counts in 10 ms ticks).
  assert.ok(cpuSeconds >= 0.1, `the stretch kept this process busy (${cpuSeconds} s)`);
  assert.ok(
    Math.abs((d.cpu.self ?? 0) - cpuSeconds) <= 0.12,
    `the sampler read ${d.cpu.self} s of CPU, the process says ${cpuSeconds} s`,
  );
  assert.equal(d.cpu.none, 0);
  // Samples are 50 ms apart: the nearest ones hold all but a couple of slices' ticks.
  assert.ok(
    (d.counters.ticks ?? 0) >= grownBy - 6 && (d.counters.ticks ?? 0) <= grownBy,
    `${d.counters.ticks} of ${grownBy}`,
  );
  // The machine's cores spent at least this process's CPU outside idle, and the whole stretch in some state.
  const c = (k: string) => d.counters[k] ?? 0;
  assert.ok(c('machineUser') + c('machineSystem') >= cpuSeconds - 0.12, JSON.stringify(d.counters));
  const accounted = c('machineUser') + c('machineSystem') + c('machineIdle') + c('machineIowait');
  assert.ok(accounted > d.seconds * 0.8, `every core's time accounted for: ${accounted} s of ${d.seconds} s`);
  // Before the stretch: no ticks yet, and nearly idle.
  const idle = sampler.between(from - 300, from - 100);
  assert.equal(idle?.counters.ticks, 0);
});

test('a process that exits between two samples is left out of its group, never subtracted from it', async () => {
  const child = spawn(process.execPath, [
    '-e',
    'const t = Date.now() + 300; while (Date.now() < t); setTimeout(() => {}, 400);',
  ]);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const sampler = startResourceSampler({
    intervalMs: 50,
    groups: () => ({ kids: child.exitCode === null && child.pid ? [child.pid] : [] }),
  });
  // While it waits, after its busy start: it has used CPU, and is in the group.
  await sleep(500);
  const during = Date.now();
  await exited;
  await sleep(200);
  const after = Date.now();
  await sampler.stop();
  const d = sampler.between(during, after);
  assert.ok(d);
  assert.ok((d.cpu.kids ?? 0) >= 0 && (d.cpu.kids ?? 0) < 0.05, `the exited process: ${d.cpu.kids} s`);
  const whole = sampler.between(during - 450, during);
  assert.ok((whole?.cpu.kids ?? 0) >= 0, `its busy start: ${whole?.cpu.kids} s`);
});

test('Postgres’s counters come from the database connected to, and reads and rows show up in them', async () => {
  const before = await postgresCounters(h.db.sql);
  for (const key of [
    'blks_read',
    'blks_hit',
    'blk_read_time',
    'tup_inserted',
    'buffers_backend',
    'wal_bytes',
  ])
    assert.equal(typeof before[key], 'number', key);
  await h.db.sql`CREATE TABLE sampler_probe (n int)`;
  await h.db.sql`INSERT INTO sampler_probe SELECT generate_series(1, 5000)`;
  await h.db.sql`SELECT count(*) FROM sampler_probe`;
  // A backend reports its counters at most about once a second, and when idle.
  let now = before;
  for (let i = 0; i < 40 && (now.tup_inserted ?? 0) - (before.tup_inserted ?? 0) < 5000; i++) {
    await sleep(250);
    now = await postgresCounters(h.db.sql);
  }
  assert.ok((now.tup_inserted ?? 0) - (before.tup_inserted ?? 0) >= 5000, 'the inserted rows');
  assert.ok((now.wal_bytes ?? 0) > (before.wal_bytes ?? 0), 'their WAL');
  assert.ok((now.blks_hit ?? 0) > (before.blks_hit ?? 0), 'the blocks read');
});
