import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { type EntryProcess, harnessEntryEnv, startEntry } from '../../devkit/harness/entry_process.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { activitySteps, PUBLISH_STEPS_WITH_BITLY } from '../../devkit/harness/temporal.ts';
import {
  waitForPostLink,
  waitForPostWorkflow,
  wordpressEvent,
} from '../../devkit/harness/wordpress_events.ts';

// The production worker entry (`npm run worker`) in its own process, SIGKILLed while a publish workflow is
// in the middle of its Bitly call; a new worker then finishes the workflow with exactly one link.

let fake: BitlyFake;
let h: Harness;
const children: EntryProcess[] = [];
before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({ env: fake.env() });
});
after(async () => {
  for (const child of children) child.kill();
  await h.close();
  await fake.stop();
});

/**
 * Starts a new worker after a kill and waits for the post's workflow to finish: the post has exactly one link,
 * active, and the workflow's result names it.
 */
async function resumeWithNewWorker(postId: number) {
  const killedAt = Date.now();
  const worker = await startWorkerProcess();
  const link = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active', { timeoutMs: 90_000 });
  const result = await waitForPostWorkflow(h, 'news', postId);
  // Stopped here, so the next test's worker is the only one polling the task queue (a worker left running could
  // take the next test's workflow task in place of the one that test kills).
  worker.child.kill('SIGTERM');
  await worker.exited;
  assert.equal(result.code, link.code);
  process.stderr.write(
    `  resumed and completed ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill\n`,
  );
  const rows = await h.db.sql`SELECT code FROM links WHERE site = 'news' AND post_id = ${postId}`;
  assert.equal(rows.length, 1, 'one link for the post');
  return link;
}

/** Starts `workers/main.ts` against this test's database, task queue and Bitly fake. */
async function startWorkerProcess(): Promise<EntryProcess> {
  const child = startEntry('workers/main.ts', {
    env: {
      ...harnessEntryEnv(h),
      // Any free port for the worker's probes and metrics: test workers run side by side.
      WORKER_HEALTH_PORT: '0',
      ...fake.env(),
    },
  });
  children.push(child);
  await child.waitForOutput('worker running', { timeoutMs: 90_000, what: 'the worker process to start' });
  return child;
}

describe('publish survives a worker killed mid-workflow', () => {
  test('SIGKILL during the Bitly create; a new worker completes it with exactly one link', async () => {
    const first = await startWorkerProcess();
    const postId = 777;
    // Bitly takes 4 s to answer the create: the worker dies while the request is in flight (Bitly still
    // makes the link; nobody hears the answer).
    fake.failNext({ method: 'POST', path: '/bitlinks', delayMs: 4_000 });
    const res = await h.webhook(wordpressEvent('post.published', { postId }));
    assert.equal(res.status, 202);
    await eventually(
      async () =>
        fake.arrivals.some((a) => a.method === 'POST' && a.path === '/bitlinks') ? true : undefined,
      {
        timeoutMs: 60_000,
        what: 'the Bitly create to be in flight',
      },
    );
    first.child.kill('SIGKILL');
    await first.exited;
    const pending = await h.db.sql<{ status: string }[]>`SELECT status FROM links WHERE post_id = ${postId}`;
    assert.deepEqual(
      pending.map((r) => r.status),
      ['pending'],
      'killed after mintCode, before markActive',
    );

    const link = await resumeWithNewWorker(postId);

    // Exactly one bitlink: the retry adopted the one Bitly made.
    assert.equal(link.vendors[0]?.state, 'synced');
    assert.equal(fake.listLinks().length, 1);
    assert.equal(fake.linkByKeyword(link.code)?.longUrl, link.url);
    const minted = await h.db.sql`SELECT 1 FROM audit_log WHERE action = 'link.minted'`;
    assert.equal(minted.length, 1);
  });

  test('SIGKILL while a local step waits in Postgres; a new worker runs the lost workflow task and its steps again', async () => {
    // The short steps are local activities (ADR 0094): they live inside a workflow task, so a worker that dies
    // during one loses the task, and the next worker runs the task and its steps again.
    const postId = 778;
    const holder = await h.db.sql.reserve();
    // mintCode serialises on the article's advisory lock; holding it parks the step inside Postgres.
    await holder`SELECT pg_advisory_lock(hashtextextended(${`post|news|${postId}`}, 0))`;
    try {
      const first = await startWorkerProcess();
      const res = await h.webhook(wordpressEvent('post.published', { postId }));
      assert.equal(res.status, 202);
      await eventually(
        async () => {
          const [waiting] = await h.db.sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'
              AND query LIKE '%pg_advisory_xact_lock%'`;
          return waiting!.n > 0 ? true : undefined;
        },
        { timeoutMs: 60_000, what: 'mintCode to wait on the post lock' },
      );
      first.child.kill('SIGKILL');
      await first.exited;
    } finally {
      await holder`SELECT pg_advisory_unlock_all()`;
      holder.release();
    }
    const orphaned = await h.db.sql`SELECT 1 FROM links WHERE site = 'news' AND post_id = ${postId}`;
    assert.equal(orphaned.length, 0, 'the dead worker committed nothing');

    const link = await resumeWithNewWorker(postId);
    const minted = await h.db
      .sql`SELECT 1 FROM audit_log WHERE action = 'link.minted' AND code = ${link.code}`;
    assert.equal(minted.length, 1);
    const history = await h.temporal.client.workflow.getHandle(`publish:news:${postId}`).fetchHistory();
    // The dead worker's steps left no marker: the history holds each step once, from the worker that finished.
    assert.deepEqual(activitySteps(history.events), PUBLISH_STEPS_WITH_BITLY);
  });
});
