import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { ConfigError, parseConfig } from '../../lib/shared/config.ts';
import { expectProblem } from '../helpers/problem.ts';
import { createUiClient, type UiClient } from '../helpers/ui_client.ts';

// RETARGET_REQUIRES_SECOND_ADMIN: a mass retarget changes where thousands of links lead at once, so a deployment
// may ask that a second administrator approve it. The one who asked for a run cannot approve it (API or UI);
// each refusal and each approval is in the audit log; the run's page says who asked and who may approve.

let h: Harness;
let admin: UiClient;
let secondKey: string;

before(async () => {
  h = await createHarness({ env: { RETARGET_REQUIRES_SECOND_ADMIN: 'true' } });
  await h.startWorker();
  const issued = await h.api('/api/v1/keys', { method: 'POST', json: { name: 'second', scopes: ['admin'] } });
  assert.equal(issued.status, 201, await issued.clone().text());
  secondKey = ((await issued.json()) as { key: string }).key;
  admin = createUiClient(h.app as never);
  assert.equal((await admin.login('admin@example.test', 'correct horse battery')).status, 303);
});
after(async () => {
  await h?.close();
});

const asSecond = (path: string, init: RequestInit & { json?: unknown } = {}) =>
  h.api(path, { ...init, headers: { Authorization: `Bearer ${secondKey}`, ...(init.headers as object) } });

async function waitStatus(id: string, statuses: string[]) {
  return eventually(
    async () => {
      const run = (await (await h.api(`/api/v1/retargets/${id}`)).json()) as {
        status: string;
        requestedBy: string;
        approvedBy?: string;
      };
      return statuses.includes(run.status) ? run : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `run ${id} to be ${statuses.join(' or ')}` },
  );
}

async function auditOf(runId: string) {
  return h.db.sql<{ actor: string; action: string; after: { runId: string; requestedBy: string } }[]>`
    SELECT actor, action, after FROM audit_log
    WHERE code IS NULL AND action LIKE 'retarget.%' AND after->>'runId' = ${runId} ORDER BY id`;
}

describe('a second administrator approves mass retargets', () => {
  test('the setting is read strictly', () => {
    assert.equal(parseConfig({}).retarget.requiresSecondAdmin, false);
    assert.equal(parseConfig({ RETARGET_REQUIRES_SECOND_ADMIN: 'yes' }).retarget.requiresSecondAdmin, true);
    assert.throws(
      () => parseConfig({ RETARGET_REQUIRES_SECOND_ADMIN: 'sometimes' }),
      (e: unknown) =>
        e instanceof ConfigError && e.problems.some((p) => p.variable === 'RETARGET_REQUIRES_SECOND_ADMIN'),
    );
  });

  test('API: who asked cannot approve (403, audited); another admin key can, and the run records both', async () => {
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      SELECT 'sa' || i, 'https://two.example/old/' || i, 'active', 'clean', 'api', 'test'
      FROM generate_series(1, 5) AS i`;
    const res = await h.api('/api/v1/retargets', {
      method: 'POST',
      json: { rule: { type: 'prefix', from: 'https://two.example/old/', to: 'https://two.example/new/' } },
    });
    assert.equal(res.status, 202, await res.clone().text());
    const { id, requestedBy } = (await res.json()) as { id: string; requestedBy: string };
    await waitStatus(id, ['planned']);

    const self = await expectProblem(await h.api(`/api/v1/retargets/${id}/approve`, { method: 'POST' }), 403);
    assert.match(self.detail, /second administrator/);
    assert.ok(self.detail.includes(requestedBy), self.detail);
    assert.equal((await waitStatus(id, ['planned'])).status, 'planned', 'still waiting');

    const approved = await asSecond(`/api/v1/retargets/${id}/approve`, { method: 'POST' });
    assert.equal(approved.status, 202, await approved.clone().text());
    const done = await waitStatus(id, ['finished']);
    assert.equal(done.requestedBy, requestedBy);
    assert.ok(done.approvedBy && done.approvedBy !== requestedBy, JSON.stringify(done));
    const [moved] = await h.db.sql<{ url: string }[]>`SELECT target_url AS url FROM links WHERE code = 'sa1'`;
    assert.equal(moved!.url, 'https://two.example/new/1');

    const audit = await auditOf(id);
    assert.deepEqual(
      audit.map((a) => [a.action, a.actor === requestedBy, a.after.requestedBy]),
      [
        ['retarget.approval_refused', true, requestedBy],
        ['retarget.approved', false, requestedBy],
      ],
    );
  });

  test('UI: the run says who asked and that another admin must approve; the asker’s own approval is refused', async () => {
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      SELECT 'sb' || i, 'https://three.example/old/' || i, 'active', 'clean', 'api', 'test'
      FROM generate_series(1, 3) AS i`;
    await admin.get('/ui/ops/retarget');
    const planned = await admin.post('/ui/ops/retarget', {
      type: 'prefix',
      from: 'https://three.example/old/',
      to: 'https://three.example/new/',
    });
    assert.equal(planned.status, 303, await planned.clone().text());
    const detail = planned.headers.get('Location')!.split('?')[0]!;
    const id = detail.split('/').at(-1)!;
    await waitStatus(id, ['planned']);
    const page = await (await admin.get(detail)).text();
    assert.match(page, /Asked by admin@example\.test/);
    assert.match(page, /needs the approval of another administrator than admin@example\.test/);

    const self = await admin.post(`${detail}/approve`, {});
    assert.equal(self.status, 403);
    assert.match(await self.text(), /second administrator/);
    assert.equal((await waitStatus(id, ['planned'])).status, 'planned');
    assert.deepEqual(
      (await auditOf(id)).map((a) => [a.action, a.actor]),
      [['retarget.approval_refused', 'user:admin@example.test']],
    );

    // Another administrator (here an admin key) approves it.
    assert.equal((await asSecond(`/api/v1/retargets/${id}/approve`, { method: 'POST' })).status, 202);
    await waitStatus(id, ['finished']);
  });
});
