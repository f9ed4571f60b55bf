import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { syncQueueBatches } from '../../devkit/harness/temporal.ts';
import { waitForPostLink, wordpressEvent } from '../../devkit/harness/wordpress_events.ts';
import {
  getDrainerTaskQueue,
  getExpirySweepWorkflowId,
  getSyncQueueWorkflowId,
} from '../../workflows/contract.ts';

// The workflows that serve everyone's changes run on a task queue of their own, polled by a second worker in the
// worker process (ADR 0099), so they do not wait for the main queue's line. The extreme of a long line is a main
// queue nobody serves: here the process's main worker is stopped with publishes waiting on it, and a bulk change
// still reaches Bitly and the expiry sweeper still expires a due link. A worker started afterwards finishes the
// publishes: nothing waited on the drainers' side, and nothing was lost on the main one.

const POST_IDS = [6101, 6102, 6103];

let fake: BitlyFake;
let h: Harness;
before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({ env: fake.env() });
});
after(async () => {
  await h.close();
  await fake.stop();
});

describe('the drainers’ own task queue', () => {
  test('with the main queue unserved, a bulk change syncs and a due link expires; the publishes wait and then finish', async () => {
    const first = await h.startWorker();
    first.worker.main.shutdown();
    await eventually(async () => (first.worker.main.getState() === 'STOPPED' ? true : undefined), {
      what: 'the main worker to stop',
    });
    assert.equal(first.worker.drainers.getState(), 'RUNNING');

    for (const postId of POST_IDS) {
      const res = await h.webhook(wordpressEvent('post.published', { postId }));
      assert.equal(res.status, 202);
    }
    const res = await h.api('/api/v1/links/batch', {
      method: 'POST',
      json: {
        links: [
          { url: 'https://example.com/while-unserved', alias: 'while-unserved' },
          {
            url: 'https://example.com/due-soon',
            alias: 'due-soon',
            expiresAt: new Date(Date.now() + 3_000).toISOString(),
          },
        ],
      },
    });
    assert.equal(res.status, 200, await res.clone().text());

    await eventually(async () => (fake.linkByKeyword('while-unserved') ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the batch link on Bitly with the main queue unserved',
    });
    await eventually(
      async () => {
        const [row] = await h.db.sql<{ status: string }[]>`SELECT status FROM links WHERE code = 'due-soon'`;
        return row?.status === 'expired' ? true : undefined;
      },
      {
        timeoutMs: 30_000,
        what: 'the due link expired with the main queue unserved',
      },
    );
    for (const id of [getSyncQueueWorkflowId(h.taskQueue), getExpirySweepWorkflowId(h.taskQueue)]) {
      const description = await h.temporal.client.workflow.getHandle(id).describe();
      assert.equal(description.taskQueue, getDrainerTaskQueue(h.taskQueue), id);
    }
    const batches = await syncQueueBatches(h.temporal.client, getSyncQueueWorkflowId(h.taskQueue));
    assert.ok(batches.flat().includes('while-unserved'));
    // The publishes waited on the main queue meanwhile.
    const minted = await h.db.sql`SELECT 1 FROM links WHERE site = 'news' AND post_id = ANY(${POST_IDS})`;
    assert.equal(minted.length, 0);

    await first.stop();
    await h.startWorker();
    for (const postId of POST_IDS) {
      await waitForPostLink(h, 'news', postId, (l) => l.status === 'active', { timeoutMs: 60_000 });
    }
  });
});
