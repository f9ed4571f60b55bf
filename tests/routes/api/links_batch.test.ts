import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { createHarness, eventually, type Harness } from '../../../devkit/harness/harness.ts';
import { createLinksBatch } from '../../../lib/links/create_links_batch.ts';
import type { Link } from '../../../lib/links/link.ts';
import type { Sql } from '../../../lib/stores/sql.ts';
import { expectFieldProblem, type Problem } from '../../helpers/problem.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

type Result = { index: number; status: number; link?: Link; error?: Problem };
async function batch(links: unknown[]): Promise<Result[]> {
  const res = await h.api('/api/v1/links/batch', { method: 'POST', json: { links } });
  assert.equal(res.status, 200, await res.clone().text());
  const created = links.length > 0;
  if (created) assert.match(res.headers.get('Lifeline-Sync') ?? 'queued', /^(queued)$/);
  return ((await res.json()) as { results: Result[] }).results;
}

describe('POST /api/v1/links/batch', () => {
  test('per-item results in input order: created, deduped, conflicts and invalid items side by side', async () => {
    assert.equal(
      (await h.api('/api/v1/links', { method: 'POST', json: { url: 'https://example.com/existing' } }))
        .status,
      201,
    );
    assert.equal(
      (
        await h.api('/api/v1/links', {
          method: 'POST',
          json: { url: 'https://example.com/a', alias: 'batch-taken' },
        })
      ).status,
      201,
    );
    const results = await batch([
      { url: 'https://example.com/b1', tags: ['batch'] }, // 0 created
      { url: 'https://example.com/existing' }, // 1 the caller's existing link (dedupe)
      { url: 'https://example.com/b2', alias: 'batch-taken' }, // 2 alias taken
      { url: 'javascript:alert(1)' }, // 3 invalid
      { url: 'https://example.com/b3', alias: 'batch-new' }, // 4 created with its alias
      { url: 'https://example.com/b3', alias: 'batch-new' }, // 5 same alias again in this batch
      { url: 'https://example.com/b1', tags: ['batch'] }, // 6 same as item 0 (dedupe within the batch)
      { url: 'https://example.com/post', site: 'news', postId: 1 }, // 7 created for the article
      { url: 'https://example.com/post-2', site: 'news', postId: 1 }, // 8 the article twice
      { url: 'https://example.com/b4', expiresAt: '2001-01-01T00:00:00Z' }, // 9 past expiry
      'not an object', // 10
      { url: 'https://example.com/b5', colour: 'red' }, // 11 unknown field
    ]);
    assert.deepEqual(
      results.map((r) => [r.index, r.status]),
      [
        [0, 201],
        [1, 200],
        [2, 409],
        [3, 422],
        [4, 201],
        [5, 409],
        [6, 200],
        [7, 201],
        [8, 409],
        [9, 422],
        [10, 422],
        [11, 422],
      ],
    );
    assert.equal(results[4]!.link!.code, 'batch-new');
    assert.equal(results[6]!.link!.code, results[0]!.link!.code);
    assert.equal(results[2]!.error!.errors![0]!.path, 'alias');
    assert.equal(results[3]!.error!.errors![0]!.path, 'url');
    assert.equal(results[9]!.error!.errors![0]!.path, 'expiresAt');
    assert.equal(results[11]!.error!.errors![0]!.path, 'colour');
    assert.equal(results[3]!.error!.type, 'urn:lifeline:problem:validation');
    assert.deepEqual(results[0]!.link!.tags, ['batch']);
    // Queued for the sync-queue drainer with the rows (ADR 0024), which is woken after the response.
    const queued = await h.db.sql<{ code: string }[]>`SELECT code FROM link_sync_queue ORDER BY code`;
    assert.deepEqual(
      queued.map((r) => r.code),
      [results[0]!.link!.code, 'batch-new', results[7]!.link!.code].sort(),
    );
    await eventually(async () => {
      const d = await h.temporal.client.workflow.getHandle(`sync-queue:${h.taskQueue}`).describe();
      return d.type === 'syncQueueWorkflow' ? true : undefined;
    });
    // Created links redirect, and each has its audit entry.
    assert.equal((await h.app.request('/batch-new')).headers.get('Location'), 'https://example.com/b3');
    const audited = await h.db.sql`
      SELECT code FROM audit_log WHERE action = 'link.created' AND code = ANY(${[results[0]!.link!.code, 'batch-new', results[7]!.link!.code]})`;
    assert.equal(audited.length, 3);
  });

  test('1,000 links go to Postgres in ONE insert statement (audit included), all created and unique', async () => {
    const statements: string[] = [];
    const debugSql = createTracedSql(h.db.url, (query) => statements.push(query));
    try {
      const items = Array.from({ length: 1000 }, (_, i) => ({
        url: `https://example.com/bulk/${i}`,
        tags: ['bulk'],
      }));
      const started = performance.now();
      const results = await createLinksBatch(
        { sql: debugSql, codeLength: h.config.codeLength, targetPolicy: h.deps.targetPolicy },
        items,
        { owner: 'test:bulk', actor: 'test:bulk', origin: 'api' },
      );
      const ms = performance.now() - started;
      assert.equal(results.length, 1000);
      assert.ok(results.every((r) => r.status === 201));
      assert.equal(new Set(results.map((r) => ('link' in r ? r.link.code : ''))).size, 1000);
      const inserts = statements.filter((q) => /INSERT INTO links/i.test(q));
      assert.equal(inserts.length, 1, `expected one insert statement, saw ${inserts.length}`);
      const count = await h.db.sql`SELECT count(*)::int AS n FROM links WHERE owner = 'test:bulk'`;
      assert.equal(count[0]!.n, 1000);
      const audits = await h.db.sql`SELECT count(*)::int AS n FROM audit_log WHERE actor = 'test:bulk'`;
      assert.equal(audits[0]!.n, 1000);
      process.stderr.write(`[batch] 1,000 links in ${ms.toFixed(0)} ms, ${statements.length} statements\n`);
    } finally {
      await debugSql.end();
    }
  });

  test('over 1,000 links, none, or not a batch at all is a 400 and writes nothing', async () => {
    const before = await h.db.sql`SELECT count(*)::int AS n FROM links`;
    const tooMany = Array.from({ length: 1001 }, (_, i) => ({ url: `https://example.com/over/${i}` }));
    await expectFieldProblem(
      await h.api('/api/v1/links/batch', { method: 'POST', json: { links: tooMany } }),
      400,
      'links',
    );
    await expectFieldProblem(
      await h.api('/api/v1/links/batch', { method: 'POST', json: { links: [] } }),
      400,
      'links',
    );
    await expectFieldProblem(
      await h.api('/api/v1/links/batch', { method: 'POST', json: [{ url: 'https://example.com/' }] }),
      400,
      '(body)',
    );
    const afterCount = await h.db.sql`SELECT count(*)::int AS n FROM links`;
    assert.equal(afterCount[0]!.n, before[0]!.n);
  });

  test('two concurrent batches with the same links create each link once', async () => {
    const items = Array.from({ length: 50 }, (_, i) => ({ url: `https://example.com/race/${i}` }));
    const [a, b] = await Promise.all([batch(items), batch(items)]);
    for (let i = 0; i < 50; i++) {
      assert.equal(a[i]!.link!.code, b[i]!.link!.code);
      assert.deepEqual([a[i]!.status, b[i]!.status].sort(), [200, 201]);
    }
  });
});

/** A pool that reports every statement it sends (postgres.js `debug`), to count round trips. */
function createTracedSql(url: string, onQuery: (query: string) => void): Sql {
  return postgres(url, {
    max: 2,
    onnotice: () => {},
    debug: (_connection, query) => onQuery(query),
    types: {
      bigint: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) },
    },
  }) as unknown as Sql;
}
