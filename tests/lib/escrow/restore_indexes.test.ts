import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { IndexBuildQueue, longestFirst } from '../../../lib/escrow/restore_indexes.ts';

// The order a restore starts its index builds in: the one that takes longest first, or two cores sit with one
// build left at the end (at ten million links the URL's trigram index is about eight minutes of one core).
describe('index build order', () => {
  const index = (name: string, definition: string) => ({ name, definition });
  const indexes = [
    index(
      'links_code_lower_trgm_idx',
      'CREATE INDEX links_code_lower_trgm_idx ON public.links USING gin (lower(code) gin_trgm_ops)',
    ),
    index(
      'links_created_idx',
      'CREATE INDEX links_created_idx ON public.links USING btree (created_at DESC)',
    ),
    index(
      'links_search_text_trgm_idx',
      'CREATE INDEX links_search_text_trgm_idx ON public.links USING gin (search_text gin_trgm_ops)',
    ),
    index(
      'links_url_trgm_idx',
      'CREATE INDEX links_url_trgm_idx ON public.links USING gin (target_url gin_trgm_ops)',
    ),
  ];

  test('trigram builds first, the widest column first among them', () => {
    const widths = new Map([
      ['code', 8],
      ['created_at', 8],
      ['search_text', 83],
      ['target_url', 131],
      // A column whose name is part of another's must not lend it its width.
      ['url', 400],
    ]);
    assert.deepEqual(
      longestFirst(indexes, widths).map((i) => i.name),
      ['links_url_trgm_idx', 'links_search_text_trgm_idx', 'links_code_lower_trgm_idx', 'links_created_idx'],
    );
  });

  test('without statistics, trigram builds still come first', () => {
    assert.deepEqual(
      longestFirst(indexes)
        .map((i) => i.name)
        .slice(-1),
      ['links_created_idx'],
    );
  });
});

describe('index build queue', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
    await db.sql`CREATE TABLE queue_probe (a int, b text)`;
    await db.sql`INSERT INTO queue_probe SELECT n, n::text FROM generate_series(1, 1000) AS n`;
  });
  after(async () => {
    await db.drop();
  });
  const names = async () =>
    (
      await db.sql<{ name: string }[]>`
        SELECT indexname AS name FROM pg_indexes WHERE tablename = 'queue_probe' ORDER BY indexname`
    ).map((r) => r.name);

  test('indexes queued while it works are built; each batch resolves when its own are', async () => {
    const queue = new IndexBuildQueue(db.sql, { jobs: 2 });
    await queue.add([{ name: 'queue_probe_a', definition: 'CREATE INDEX queue_probe_a ON queue_probe (a)' }]);
    const later = queue.add([
      { name: 'queue_probe_b', definition: 'CREATE INDEX queue_probe_b ON queue_probe (b)' },
      { name: 'queue_probe_ab', definition: 'CREATE INDEX queue_probe_ab ON queue_probe (a, b)' },
    ]);
    queue.close();
    await later;
    assert.equal(await queue.finished(), 3);
    assert.deepEqual(await names(), ['queue_probe_a', 'queue_probe_ab', 'queue_probe_b']);
  });

  test('a build that fails fails its batch and what is still queued; finished throws it', async () => {
    const queue = new IndexBuildQueue(db.sql, { jobs: 1 });
    const batch = queue.add([
      { name: 'queue_probe_bad', definition: 'CREATE UNIQUE INDEX queue_probe_bad ON queue_probe ((a % 2))' },
      { name: 'queue_probe_never', definition: 'CREATE INDEX queue_probe_never ON queue_probe (b, a)' },
    ]);
    await assert.rejects(batch, /could not create unique index "queue_probe_bad"/);
    queue.close();
    await assert.rejects(queue.finished(), /could not create unique index/);
    assert.ok(!(await names()).includes('queue_probe_never'));
  });

  test('once stopped, nothing more starts and the queue ends', async () => {
    const stop = new AbortController();
    const queue = new IndexBuildQueue(db.sql, { jobs: 1, signal: stop.signal });
    stop.abort();
    await new Promise((resolve) => setImmediate(resolve)); // its jobs have seen it and stopped
    const batch = queue.add([
      { name: 'queue_probe_c', definition: 'CREATE INDEX queue_probe_c ON queue_probe (b DESC)' },
    ]);
    await assert.rejects(batch, /index builds stopped/);
    assert.equal(await queue.finished(), 0);
    assert.ok(!(await names()).includes('queue_probe_c'));
  });
});
