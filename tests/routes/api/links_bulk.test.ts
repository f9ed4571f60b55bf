// Bulk changes of links (ADR 0086) on real Postgres, Redis and Temporal with the Bitly fake: tag, untag, expire,
// block and delete, by codes and by filter, through the workflow `bulk:{id}` in batches; one audit entry per
// link changed; the sync queue carries every change to the serving store and Bitly; WordPress articles' links
// skipped for a key without the admin scope; bad requests answered with problem+json naming the field; a
// selection of thousands answered at once and applied in the background.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';
import { type BitlyFake, startBitlyFake } from '../../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../../devkit/harness/harness.ts';
import { recordHistory } from '../../../devkit/harness/histories.ts';
import { uniqueId } from '../../../devkit/harness/temporal.ts';
import { decodeServingRecord } from '../../../lib/redirect/serving_store.ts';

const PREFIX = `${uniqueId('lifeline-bulk')}:`;
let fake: BitlyFake;
let h: Harness;
let redis: ReturnType<typeof createClient>;
let writerKey: string;

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({
    env: { ...fake.env(), REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: PREFIX },
  });
  await h.startWorker({
    vendors: { bitly: { timeoutMs: 2_000, rateLimitRetryMs: 200 }, retryBaseMs: 50, retryMaxMs: 400 },
    syncQueue: { retryBaseMs: 50, retryMaxMs: 200 },
  });
  redis = createClient({ url: 'redis://127.0.0.1:6379' });
  await redis.connect();
  const res = await h.api('/api/v1/keys', {
    method: 'POST',
    json: { name: 'bulk writer', scopes: ['links:read', 'links:write'] },
  });
  assert.equal(res.status, 201, await res.clone().text());
  writerKey = ((await res.json()) as { key: string }).key;
});
after(async () => {
  await redis?.close();
  await h?.close();
  await fake?.stop();
});

interface BulkRun {
  id: string;
  status: string;
  total: number;
  applied: number;
  skipped: number;
  skippedSample?: { code: string; problem: string | null }[];
}

/** Creates links through the batch API and waits until the drainer has them on Bitly. */
async function createLinks(links: Record<string, unknown>[]): Promise<string[]> {
  const res = await h.api('/api/v1/links/batch', { method: 'POST', json: { links } });
  assert.equal(res.status, 200, await res.clone().text());
  const { results } = (await res.json()) as { results: { status: number; link?: { code: string } }[] };
  assert.ok(
    results.every((r) => r.status === 201),
    JSON.stringify(results),
  );
  const codes = results.map((r) => r.link!.code);
  await queueDrained();
  for (const code of codes) assert.ok(fake.linkByKeyword(code), `${code} on Bitly before the change`);
  return codes;
}

async function queueDrained() {
  await eventually(
    async () => {
      const [row] = await h.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM link_sync_queue`;
      return row!.n === 0 ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: 'the sync queue to drain' },
  );
}

async function bulk(body: unknown, key?: string): Promise<Response> {
  return h.api('/api/v1/links/bulk', {
    method: 'POST',
    json: body,
    ...(key ? { headers: { Authorization: `Bearer ${key}` } } : {}),
  });
}

async function runToEnd(body: unknown, key?: string): Promise<BulkRun> {
  const res = await bulk(body, key);
  assert.equal(res.status, 202, await res.clone().text());
  const { id } = (await res.json()) as BulkRun;
  assert.equal(res.headers.get('Location'), `/api/v1/links/bulk/${id}`);
  const run = await eventually(
    async () => {
      const got = (await (await h.api(`/api/v1/links/bulk/${id}`)).json()) as BulkRun;
      return got.status === 'finished' || got.status === 'failed' ? got : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 100, what: `bulk change ${id} to finish` },
  );
  assert.equal(run.status, 'finished');
  await queueDrained();
  return run;
}

async function rows(codes: string[]) {
  const found = await h.db.sql<
    { code: string; tags: string[]; status: string; expiresAt: Date | null; deletedAt: Date | null }[]
  >`
    SELECT code, tags, status, expires_at AS "expiresAt", deleted_at AS "deletedAt"
    FROM links WHERE code = ANY(${h.db.sql.array(codes)}::text[]) ORDER BY code`;
  return new Map(found.map((r) => [r.code, r]));
}

async function audits(runId: string) {
  return h.db.sql<{ code: string; action: string; actor: string; before: unknown; after: unknown }[]>`
    SELECT code, action, actor, before, after FROM audit_log
    WHERE reason LIKE ${`bulk change ${runId}%`} ORDER BY code`;
}

async function served(code: string) {
  return decodeServingRecord(code, await redis.get(`${PREFIX}link:${code}`));
}

describe('bulk changes of links', () => {
  test('tag and untag by codes and by filter: one audit entry per link, nothing else touched', async () => {
    const codes = await createLinks(
      Array.from({ length: 6 }, (_, i) => ({ url: `https://bulk.example/tag/${i}`, tags: ['desk'] })),
    );
    const others = await createLinks([{ url: 'https://bulk.example/tag/other', tags: ['desk'] }]);
    const added = await runToEnd({ action: 'tag_add', tag: 'election', codes });
    assert.deepEqual([added.total, added.applied, added.skipped], [6, 6, 0]);
    for (const r of (await rows(codes)).values()) assert.deepEqual(r.tags, ['desk', 'election']);
    assert.deepEqual((await rows(others)).get(others[0]!)!.tags, ['desk']);
    const entries = await audits(added.id);
    assert.equal(entries.length, 6, 'one audit entry per link');
    assert.deepEqual(entries[0]!.before, { tags: ['desk'] });
    assert.deepEqual(entries[0]!.after, { tags: ['desk', 'election'] });
    assert.equal(entries[0]!.action, 'link.updated');
    assert.match(entries[0]!.actor, /^apikey:/);
    const [requested] = await h.db.sql<{ after: { run: string; selection: unknown } }[]>`
      SELECT after FROM audit_log WHERE action = 'links.bulk_requested' AND after->>'run' = ${added.id}`;
    assert.deepEqual(requested!.after.selection, { codes });

    // Again: every link already has it, so each is skipped as unchanged (and nothing is audited).
    const again = await runToEnd({ action: 'tag_add', tag: 'election', codes: codes.slice(0, 2) });
    assert.deepEqual([again.applied, again.skipped], [0, 2]);
    assert.deepEqual(
      again.skippedSample?.map((s) => s.problem),
      ['unchanged', 'unchanged'],
    );
    assert.equal((await audits(again.id)).length, 0);

    // By filter: every link tagged "election" loses it.
    const removed = await runToEnd({ action: 'tag_remove', tag: 'election', filter: { tag: 'election' } });
    assert.deepEqual([removed.total, removed.applied], [6, 6]);
    for (const r of (await rows(codes)).values()) assert.deepEqual(r.tags, ['desk']);
  });

  test('expire, block and delete reach the serving store and Bitly through the sync queue', async () => {
    const codes = await createLinks(
      Array.from({ length: 4 }, (_, i) => ({ url: `https://bulk.example/state/${i}` })),
    );
    const [a, b, c, d] = codes as [string, string, string, string];
    const syncWorkflowsBefore = await countSyncWorkflows();

    const at = new Date(Date.now() + 7 * 86_400_000);
    at.setUTCMilliseconds(0);
    const expired = await runToEnd({ action: 'expire', expiresAt: at.toISOString(), codes: [a, b] });
    assert.equal(expired.applied, 2);
    assert.equal((await rows([a])).get(a)!.expiresAt?.toISOString(), at.toISOString());
    assert.equal((await served(a))?.expiresAt, at.getTime(), 'the serving store has the expiry');
    const expiryAudit = (await audits(expired.id))[0]!;
    assert.deepEqual(expiryAudit.after, { expiresAt: at.toISOString() });

    const blocked = await runToEnd({ action: 'block', reason: 'phishing wave', codes: [b, c] });
    assert.equal(blocked.applied, 2);
    assert.equal((await rows([c])).get(c)!.status, 'blocked');
    assert.equal((await h.app.request(`/${c}`)).status, 451);
    assert.equal((await served(c))?.status, 'blocked');
    await eventually(async () => (fake.linkByKeyword(c)?.archived ? true : undefined), {
      what: 'Bitly to archive the blocked link',
    });
    assert.equal(fake.linkByKeyword(c)?.longUrl, `${h.config.shortBaseUrl}/${c}+`);
    const blockAudit = await audits(blocked.id);
    assert.deepEqual(
      blockAudit.map((e) => [e.action, e.after]),
      [
        ['link.status_changed', { status: 'blocked' }],
        ['link.status_changed', { status: 'blocked' }],
      ],
    );
    const [reason] = await h.db.sql<{ reason: string }[]>`
      SELECT reason FROM audit_log WHERE code = ${c} AND action = 'link.status_changed'`;
    assert.equal(reason!.reason, `bulk change ${blocked.id}: phishing wave`);

    const deleted = await runToEnd({ action: 'delete', codes: [d, c] });
    assert.equal(deleted.applied, 2);
    assert.ok((await rows([d])).get(d)!.deletedAt, 'deleted_at set');
    assert.equal((await h.app.request(`/${d}`)).status, 410);
    await eventually(async () => (fake.linkByKeyword(d)?.archived ? true : undefined), {
      what: 'Bitly to archive the deleted link',
    });
    assert.equal(fake.linkByKeyword(d)?.longUrl, `${h.config.shortBaseUrl}/${d}+`);
    // A deleted link is never listed, so a second run by codes finds nothing to select.
    const gone = await runToEnd({ action: 'block', reason: 'again', codes: [d] });
    assert.equal(gone.total, 0);
    // The changes went by the queue's drainer, not one `sync:{code}` workflow per link.
    assert.equal(await countSyncWorkflows(), syncWorkflowsBefore);
  });

  test('webhook subscribers hear of each link a bulk change touched, as for a change by hand', async () => {
    const [hook] = await h.db.sql<{ id: number }[]>`
      INSERT INTO webhook_endpoints (url, event_types, secret, created_by)
      VALUES ('https://hooks.example.test/bulk', ARRAY['link.updated', 'link.deleted'], 'whsec_c2VjcmV0', 'test')
      RETURNING id::int`;
    const codes = await createLinks(
      Array.from({ length: 3 }, (_, i) => ({ url: `https://bulk.example/hooks/${i}`, title: `hook ${i}` })),
    );
    await runToEnd({ action: 'tag_add', tag: 'hooked', codes: codes.slice(0, 2) });
    await runToEnd({ action: 'block', codes: [codes[0]], reason: 'spam' });
    await runToEnd({ action: 'delete', codes: [codes[2]], reason: 'duplicate' });
    const messages = await h.db.sql<{ type: string; payload: Record<string, unknown> }[]>`
      SELECT event_type AS type, payload FROM webhook_messages WHERE endpoint_id = ${hook!.id}
      ORDER BY created_at, payload->>'code'`;
    const seen = messages.map((m) => [m.type, m.payload.code, m.payload.changed ?? m.payload.url]);
    assert.deepEqual(seen, [
      ['link.updated', codes.slice(0, 2).sort()[0], ['tags']],
      ['link.updated', codes.slice(0, 2).sort()[1], ['tags']],
      ['link.updated', codes[0], ['status']],
      ['link.deleted', codes[2], 'https://bulk.example/hooks/2'],
    ]);
    const blocked = messages.find((m) => m.payload.changed && m.payload.status === 'blocked');
    assert.equal(blocked?.payload.code, codes[0], 'the blocked link’s event carries its new status');
    const [row] = await h.db.sql<
      { version: number }[]
    >`SELECT version::int FROM links WHERE code = ${codes[0]!}`;
    assert.equal(blocked?.payload.version, row!.version, 'and the version the link now has');
    await h.db.sql`DELETE FROM webhook_endpoints WHERE id = ${hook!.id}`;
  });

  test('a key without the admin scope skips WordPress articles’ links, with the reason', async () => {
    const res = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://bulk.example/article', site: 'bulk-site', postId: 8601 },
    });
    assert.equal(res.status, 201, await res.clone().text());
    const article = ((await res.json()) as { code: string }).code;
    const [plain] = await createLinks([{ url: 'https://bulk.example/plain' }]);
    await queueDrained();
    const run = await runToEnd({ action: 'delete', codes: [article, plain] }, writerKey);
    assert.deepEqual([run.applied, run.skipped], [1, 1]);
    assert.equal(run.skippedSample?.[0]?.code, article);
    assert.match(run.skippedSample?.[0]?.problem ?? '', /WordPress post/);
    assert.equal((await rows([article])).get(article)!.deletedAt, null);
    // Tags stay open to them.
    const tagged = await runToEnd({ action: 'tag_add', tag: 'archive', codes: [article] }, writerKey);
    assert.equal(tagged.applied, 1);
  });

  test('bad requests: problem+json naming the field, and nothing recorded', async () => {
    const before = await countRuns();
    const cases: [unknown, string][] = [
      [{ action: 'tag_add', codes: ['x'] }, 'tag'],
      [{ action: 'expire', codes: ['x'] }, 'expiresAt'],
      [{ action: 'expire', expiresAt: '2001-01-01T00:00:00Z', codes: ['x'] }, 'expiresAt'],
      [{ action: 'block', codes: ['x'] }, 'reason'],
      [{ action: 'delete' }, 'codes'],
      [{ action: 'delete', codes: ['x'], filter: { tag: 'y' } }, 'codes'],
      [{ action: 'delete', codes: Array.from({ length: 1001 }, (_, i) => `c${i}`) }, 'codes'],
      [{ action: 'explode', codes: ['x'] }, 'action'],
      [{ action: 'delete', filter: { status: 'sideways' } }, 'filter.status'],
      [{ action: 'delete', codes: ['x'], extra: 1 }, ''],
    ];
    for (const [body, field] of cases) {
      const res = await bulk(body);
      assert.equal(res.status, 422, `${JSON.stringify(body).slice(0, 80)}: ${await res.clone().text()}`);
      assert.match(res.headers.get('Content-Type') ?? '', /application\/problem\+json/);
      const problem = (await res.json()) as { errors?: { path: string }[] };
      if (field)
        assert.ok(
          problem.errors?.some((e) => e.path === field),
          JSON.stringify(problem),
        );
    }
    const notJson = await h.app.request('/api/v1/links/bulk', {
      method: 'POST',
      headers: { Authorization: `Bearer ${h.apiKey}`, 'Content-Type': 'application/json' },
      body: '{"action":',
    });
    assert.equal(notJson.status, 400);
    const readOnly = await h.api('/api/v1/keys', {
      method: 'POST',
      json: { name: 'reader', scopes: ['links:read'] },
    });
    const reader = ((await readOnly.json()) as { key: string }).key;
    assert.equal((await bulk({ action: 'delete', codes: ['x'] }, reader)).status, 403);
    assert.equal(await countRuns(), before, 'no run recorded for a refused request');
    assert.equal((await h.api('/api/v1/links/bulk/bk_nothing')).status, 404);
  });

  test('thousands of links by filter: answered at once, applied in batches by the workflow', async () => {
    const n = 3_000;
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner, tags)
      SELECT 'many' || i, 'https://bulk.example/many/' || i || '/', 'active', 'clean', 'api', 'test',
             ARRAY['wave']
      FROM generate_series(1, ${n}) AS i`;
    const started = Date.now();
    const res = await bulk({ action: 'tag_add', tag: 'wave-2', filter: { tag: 'wave' } });
    assert.equal(res.status, 202);
    const accepted = (await res.json()) as BulkRun;
    // The answer does not wait for the links: the selection is fixed by the workflow.
    assert.ok(['selecting', 'running'].includes(accepted.status), accepted.status);
    assert.ok(Date.now() - started < 30_000);
    const run = await eventually(
      async () => {
        const got = (await (await h.api(`/api/v1/links/bulk/${accepted.id}`)).json()) as BulkRun;
        return got.status === 'finished' ? got : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200, what: 'the large bulk change to finish' },
    );
    assert.deepEqual([run.total, run.applied, run.skipped], [n, n, 0]);
    const [counted] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM links WHERE tags @> ARRAY['wave', 'wave-2']`;
    assert.equal(counted!.n, n);
    assert.equal((await audits(run.id)).length, n);
    // Three batches of 1,000, each one activity (and one transaction).
    const history = await h.temporal.client.workflow.getHandle(`bulk:${run.id}`).fetchHistory();
    const batches = (history.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'applyBulkChangeBatch',
    );
    assert.equal(batches.length, 4, 'three full batches and the empty one that ends the run');
    await recordHistory('bulkChangeLinksWorkflow-by-filter', `bulk:${run.id}`);
  });
});

async function countRuns(): Promise<number> {
  const [row] = await h.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM bulk_changes`;
  return row!.n;
}

async function countSyncWorkflows(): Promise<number> {
  let n = 0;
  for await (const execution of h.temporal.client.workflow.list({
    query: `WorkflowType = "syncLinkWorkflow" AND TaskQueue = "${h.taskQueue}"`,
  }))
    if (execution.workflowId.startsWith('sync:')) n++;
  return n;
}
