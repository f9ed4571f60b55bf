// The sync queue survives a worker SIGKILLed mid-drain (ADR 0024): the real worker entry in a child process is
// killed while a batch is on its way to the Bitly fake; a new one takes over (the queue's rows leave only after
// their sync is done) and every link ends synced exactly once: one bitlink per link, one successful create per
// code, nothing left in the queue.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { startWorkerProcess } from '../../devkit/harness/worker_process.ts';

const PREFIX = `${uniqueId('lifeline-syncq-crash')}:`;
const LINKS = 400;
let fake: BitlyFake;
let h: Harness;
let env: Record<string, string>;
let child: ReturnType<typeof startWorkerProcess> | undefined;

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  env = { ...fake.env(), REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: PREFIX };
  h = await createHarness({ env });
});
after(async () => {
  child?.process.kill('SIGKILL');
  await h.close();
  await fake.stop();
});

async function startWorker() {
  const started = startWorkerProcess({ h, env: { ...env, LOG_LEVEL: 'info', SYNC_BATCH_SIZE: '100' } });
  await eventually(async () => (started.ready ? true : undefined), {
    timeoutMs: 120_000,
    what: 'the worker process',
  });
  return started;
}

describe('the sync queue and a worker killed mid-drain', () => {
  test(`${LINKS} links: SIGKILL while a batch is at Bitly, a new worker finishes, every link synced once`, async () => {
    // Slow enough that the drain is still going when the worker dies.
    fake.latencyMs = 25;
    child = await startWorker();
    const items = Array.from({ length: LINKS }, (_, i) => ({ url: `https://example.com/crash/${i}` }));
    const res = await h.api('/api/v1/links/batch', { method: 'POST', json: { links: items } });
    assert.equal(res.status, 200);
    const links = ((await res.json()) as { results: { link: { code: string; url: string } }[] }).results.map(
      (r) => r.link,
    );
    // At least one batch done (its rows gone), the next one on its way to Bitly: kill the worker then.
    const depth = async () =>
      (await h.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM link_sync_queue`)[0]!.n;
    await eventually(async () => ((await depth()) < LINKS ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 10,
      what: 'the drain to be under way',
    });
    child.process.kill('SIGKILL');
    await new Promise((r) => child!.process.once('exit', r));
    const left = await depth();
    assert.ok(left > 0 && left < LINKS, `killed mid-drain: ${left} of ${LINKS} still queued`);

    child = await startWorker();
    await eventually(
      async () => {
        const [row] = await h.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM link_sync_queue`;
        return row!.n === 0 ? true : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 200, what: 'the new worker to drain the queue' },
    );

    for (const link of links) {
      assert.equal(fake.linkByKeyword(link.code)?.longUrl, link.url, `${link.code} is on Bitly`);
      const made = fake
        .requestsTo('POST', '/bitlinks')
        .filter(
          (r) =>
            (r.status === 200 || r.status === 201) && (r.body as { keyword?: string }).keyword === link.code,
        );
      assert.equal(made.length, 1, `${link.code} was created on Bitly exactly once`);
    }
    const live = fake
      .listLinks()
      .filter((l) => !l.archived && l.longUrl.startsWith('https://example.com/crash/'));
    assert.equal(live.length, LINKS, 'one live bitlink per link, no strays');
    const [synced] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM vendor_links
      WHERE code = ANY(${links.map((l) => l.code)}) AND vendor = 'bitly' AND state = 'synced'`;
    assert.equal(synced!.n, LINKS);
  });
});
