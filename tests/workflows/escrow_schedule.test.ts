import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ScheduleNotFoundError } from '@temporalio/client';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { seedLinkStates } from '../../devkit/harness/link_states.ts';
import { createUser } from '../../lib/auth/manage_users.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { ensureSchedules } from '../../lib/temporal/schedules.ts';
import { getEscrowScheduleId, getSnapshotScheduleId } from '../../workflows/contract.ts';
import { createUiClient, type UiClient } from '../helpers/ui_client.ts';

// The escrow and snapshot Schedules run their workflows on a real worker into ESCROW_DIR / SNAPSHOT_DIR, keep
// the last N, and are removed when their interval is unset; admins start them and download the latest export
// (a tar whose SHA256SUMS check out) from the operations page.
let h: Harness;
let work: string;
let admin: UiClient;
const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };
const quiet = createLogger({ level: 'silent' });

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'lifeline-escrow-schedule-'));
  h = await createHarness({
    env: {
      ESCROW_INTERVAL: '1d',
      ESCROW_DIR: join(work, 'escrow'),
      ESCROW_KEEP: '2',
      SNAPSHOT_INTERVAL: '1d',
      SNAPSHOT_DIR: join(work, 'snapshots'),
      SNAPSHOT_FORMATS: 'nginx,json',
    },
  });
  await seedLinkStates(h.db.sql, { count: 480, prefix: 'w', extras: true });
  await h.startWorker();
  admin = createUiClient(h.app as never);
  assert.equal((await admin.login(ADMIN.email, ADMIN.password)).status, 303);
});
after(async () => {
  await h.close();
  rmSync(work, { recursive: true, force: true });
});

const settings = (intervals: { escrow?: string; snapshot?: string }) => ({
  taskQueue: h.taskQueue,
  rescanInterval: '12h',
  escrowInterval: intervals.escrow,
  snapshotInterval: intervals.snapshot,
});

async function finishedRuns(kind: 'export' | 'snapshot'): Promise<{ status: string; workflowId: string }[]> {
  return h.db.sql<{ status: string; workflowId: string }[]>`
    SELECT status, workflow_id AS "workflowId" FROM escrow_runs WHERE kind = ${kind} AND status <> 'running' ORDER BY id`;
}

describe('escrow and snapshot Schedules', () => {
  test('registered like the others, each run writes a verified export, the last ESCROW_KEEP are kept', async () => {
    await ensureSchedules(h.temporal.client, settings({ escrow: '1d', snapshot: '1d' }), quiet);
    const escrow = await h.temporal.client.schedule.getHandle(getEscrowScheduleId(h.taskQueue)).describe();
    assert.equal(escrow.action.type, 'startWorkflow');
    assert.equal(
      escrow.action.type === 'startWorkflow' && escrow.action.workflowType,
      'escrowExportWorkflow',
    );
    assert.equal(Number(escrow.spec.intervals?.[0]?.every), 86_400_000);
    for (let run = 1; run <= 3; run++) {
      await h.temporal.client.schedule.getHandle(getEscrowScheduleId(h.taskQueue)).trigger();
      await eventually(async () => ((await finishedRuns('export')).length >= run ? true : undefined), {
        timeoutMs: 60_000,
        what: `export run ${run}`,
      });
      // Folder names are to the second: the next run gets a new one.
      await new Promise((r) => setTimeout(r, 1_100));
    }
    const runs = await finishedRuns('export');
    assert.deepEqual(
      runs.map((r) => r.status),
      ['succeeded', 'succeeded', 'succeeded'],
    );
    const folders = readdirSync(join(work, 'escrow')).sort();
    assert.equal(folders.length, 2, `ESCROW_KEEP=2 keeps two: ${folders}`);
    for (const folder of folders) {
      assert.match(folder, /^lifeline-escrow-\d{8}T\d{6}Z$/);
      execFileSync('sha256sum', ['--quiet', '-c', 'SHA256SUMS'], { cwd: join(work, 'escrow', folder) });
    }
    await recordHistory('escrowExportWorkflow-scheduled', runs.at(-1)!.workflowId);
  });

  test('the snapshot Schedule writes a snapshot and points current at it', async () => {
    await h.temporal.client.schedule.getHandle(getSnapshotScheduleId(h.taskQueue)).trigger();
    await eventually(async () => ((await finishedRuns('snapshot')).length >= 1 ? true : undefined), {
      timeoutMs: 60_000,
      what: 'the snapshot run',
    });
    const [run] = await finishedRuns('snapshot');
    assert.equal(run?.status, 'succeeded');
    const current = readlinkSync(join(work, 'snapshots', 'current'));
    assert.match(current, /^snapshot-\d{8}T\d{6}Z$/);
    assert.ok(existsSync(join(work, 'snapshots', 'current', 'nginx', 'lifeline_map_entries.conf')));
    assert.ok(existsSync(join(work, 'snapshots', 'current', 'json', 'kv-0001.json')));
    assert.ok(!existsSync(join(work, 'snapshots', 'current', 'redirects')), 'only SNAPSHOT_FORMATS');
    // nginx's configuration names paths through `current`, so a reload follows the next snapshot.
    assert.match(
      execFileSync('cat', [join(work, 'snapshots', 'current', 'nginx', 'nginx.conf')], { encoding: 'utf8' }),
      new RegExp(`include ${join(work, 'snapshots', 'current', 'nginx', 'lifeline_http.conf')};`),
    );
    await recordHistory('staticSnapshotWorkflow-scheduled', run!.workflowId);
  });

  test('admins download the latest export from the operations page; others cannot', async () => {
    const page = await (await admin.get('/ui/ops')).text();
    assert.match(page, /Escrow and static snapshot/);
    assert.match(page, /Download the latest export \(\.tar/);
    const download = await admin.get('/ui/ops/escrow/latest.tar');
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('Content-Type'), 'application/x-tar');
    assert.equal(download.headers.get('Cache-Control'), 'no-store');
    const latest = readdirSync(join(work, 'escrow')).sort().at(-1)!;
    assert.equal(download.headers.get('Content-Disposition'), `attachment; filename="${latest}.tar"`);
    const bytes = Buffer.from(await download.arrayBuffer());
    assert.equal(bytes.length, Number(download.headers.get('Content-Length')));
    const unpacked = join(work, 'unpacked');
    mkdirSync(unpacked);
    writeFileSync(join(work, 'latest.tar'), bytes);
    execFileSync('tar', ['-xf', join(work, 'latest.tar'), '-C', unpacked]);
    execFileSync('sha256sum', ['--quiet', '-c', 'SHA256SUMS'], { cwd: join(unpacked, latest) });
    const [audit] = await h.db.sql`SELECT actor, after FROM audit_log WHERE action = 'escrow.downloaded'`;
    assert.equal(audit?.actor, `user:${ADMIN.email}`);

    const password = 'editor password long';
    await createUser(
      h.db.sql,
      { email: 'editor@example.test', name: null, password, role: 'editor' },
      'test',
    );
    const editor = createUiClient(h.app as never);
    assert.equal((await editor.login('editor@example.test', password)).status, 303);
    assert.equal((await editor.get('/ui/ops/escrow/latest.tar')).status, 403);
    const anonymous = await createUiClient(h.app as never).get('/ui/ops/escrow/latest.tar');
    assert.equal(anonymous.status, 303);
    assert.match(anonymous.headers.get('Location') ?? '', /^\/ui\/login/);
  });

  test('"Export now" starts a run (CSRF-checked); unsetting the intervals removes the Schedules', async () => {
    await admin.get('/ui/ops');
    assert.equal((await admin.post('/ui/ops/escrow/export', {}, { csrf: null })).status, 403);
    const before = (await finishedRuns('export')).length;
    await admin.get('/ui/ops');
    const started = await admin.post('/ui/ops/escrow/export', {});
    assert.equal(started.status, 303);
    assert.equal(started.headers.get('Location'), '/ui/ops?done=escrow#actions');
    await eventually(async () => ((await finishedRuns('export')).length > before ? true : undefined), {
      timeoutMs: 60_000,
      what: 'the manual export',
    });
    assert.match(
      (await finishedRuns('export')).at(-1)!.workflowId,
      new RegExp(`^escrow:manual:${h.taskQueue}$`),
    );

    await ensureSchedules(h.temporal.client, settings({}), quiet);
    for (const id of [getEscrowScheduleId(h.taskQueue), getSnapshotScheduleId(h.taskQueue)]) {
      await assert.rejects(h.temporal.client.schedule.getHandle(id).describe(), ScheduleNotFoundError);
    }
  });
});
