import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, eventually, type Harness } from '../../../devkit/harness/harness.ts';
import {
  RESCAN_AFTER_RESTORE_SETTING,
  requestRescanAfterRestore,
  startRequestedRescan,
} from '../../../lib/safety/rescan_after_restore.ts';
import { getSetting } from '../../../lib/stores/settings_store.ts';
import { ensureSchedules, triggerRescanNow } from '../../../lib/temporal/schedules.ts';
import { getRescanScheduleId } from '../../../workflows/contract.ts';

// A restore loads links whose safety no row can vouch for: it marks them due and asks for a re-scan, which the
// worker starts at its next start through the re-scan Schedule (what workers/main.ts does), once.
let h: Harness;
before(async () => {
  h = await createHarness();
  await h.startWorker();
});
after(async () => {
  await h.temporal.client.schedule
    .getHandle(getRescanScheduleId(h.taskQueue))
    .delete()
    .catch(() => {});
  await h.close();
});

describe('the re-scan a restore asks for', () => {
  test('the next worker start runs it through the Schedule and forgets the request', async () => {
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, safety_reason, origin, owner)
      VALUES ('restored1', 'https://news.example/restored', 'active', 'unknown', 'restored', 'api', 't')`;
    await requestRescanAfterRestore(h.db.sql, {
      requestedAt: new Date().toISOString(),
      links: 1,
      source: 'test',
    });
    await ensureSchedules(h.temporal.client, { taskQueue: h.taskQueue, rescanInterval: '12h' }, h.logger);
    const start = () => triggerRescanNow(h.temporal.client, h.taskQueue);
    const served = await startRequestedRescan({ sql: h.db.sql, logger: h.logger }, start);
    assert.equal(served?.links, 1);
    assert.equal(await getSetting(h.db.sql, RESCAN_AFTER_RESTORE_SETTING), null);
    // The restored link is scanned now, not at the next interval.
    await eventually(
      async () => {
        const [row] = await h.db.sql`SELECT safety_checked_at FROM links WHERE code = 'restored1'`;
        return row?.safety_checked_at ? true : undefined;
      },
      { timeoutMs: 60_000, what: 'the restored link scanned' },
    );
    // Asked once, served once.
    assert.equal(await startRequestedRescan({ sql: h.db.sql, logger: h.logger }, start), null);
  });
});
