import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import type { ExpireLinkResult } from '../../workflows/contract.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
  await h.startWorker();
});
after(async () => {
  await h.close();
});

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

async function createLink(json: Record<string, unknown>): Promise<string> {
  const res = await h.api('/api/v1/links', { method: 'POST', json });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { code: string }).code;
}

async function statusOf(code: string): Promise<string> {
  const [row] = await h.db.sql`SELECT status FROM links WHERE code = ${code}`;
  return row!.status as string;
}

/** What an edit of expiresAt does (PATCH /api/v1/links/{code}): write Postgres, then tell the sync workflow. */
async function moveExpiry(code: string, expiresAt: string | null): Promise<void> {
  await h.db.sql`UPDATE links SET expires_at = ${expiresAt}, version = version + 1 WHERE code = ${code}`;
  await h.deps.workflows.syncLink(code, 'expiresAt edited');
}

const expiry = (code: string) => h.temporal.client.workflow.getHandle(`expire:${code}`);

async function queriedExpiry(code: string): Promise<number | null> {
  return (await expiry(code).query<{ expiresAtMs: number | null }>('expiry')).expiresAtMs;
}

describe('expireLinkWorkflow', () => {
  test('a link created with expiresAt gets a durable timer that fires: status expired, audited, synced', async () => {
    const expiresAt = inMs(2_500);
    const code = await createLink({
      url: 'https://example.com/sale',
      expiresAt,
      expiredUrl: 'https://example.com/over',
    });
    const timer = await eventually(async () => (await expiry(code).describe()).status.name, {
      what: 'expire timer',
    });
    assert.equal(timer, 'RUNNING');
    assert.equal(await queriedExpiry(code), Date.parse(expiresAt));
    const attrs = (await expiry(code).describe()).typedSearchAttributes.getAll();
    const ours = attrs.filter((p) => p.key.name.startsWith('Lifeline'));
    assert.deepEqual(ours.map((p) => [p.key.name, p.value]).sort(), [
      ['LifelineCode', code],
      ['LifelineKind', 'expire'],
    ]);
    assert.equal(await statusOf(code), 'active');

    const result = (await expiry(code).result()) as ExpireLinkResult;
    assert.equal(result.outcome, 'expired');
    assert.ok(Date.now() >= Date.parse(expiresAt));
    assert.equal(await statusOf(code), 'expired');
    const redirect = await h.app.request(`/${code}`);
    assert.deepEqual([redirect.status, redirect.headers.get('Location')], [302, 'https://example.com/over']);
    const [audit] = await h.db.sql`
      SELECT actor, after->>'status' AS status FROM audit_log WHERE code = ${code} AND action = 'link.status_changed'`;
    assert.deepEqual([audit!.actor, audit!.status], ['system:expire', 'expired']);
    // The expiry went through the sync workflow (caches, serving store, vendors), which then disarmed nothing.
    await eventually(
      async () =>
        (await h.temporal.client.workflow.getHandle(`sync:${code}`).describe()).status.name === 'COMPLETED'
          ? true
          : undefined,
      { what: 'the sync pass after expiry' },
    );
    await recordHistory('expireLinkWorkflow-expired', `expire:${code}`);
    await recordHistory('syncLinkWorkflow-expiring', `sync:${code}`);
  });

  test('moving the expiry earlier makes it fire earlier; moving it later keeps the link alive past the old date', async () => {
    const early = await createLink({ url: 'https://example.com/early', expiresAt: inMs(3_600_000) });
    await eventually(async () => (await queriedExpiry(early)) ?? undefined, { what: 'timer armed' });
    await moveExpiry(early, inMs(1_500));
    assert.equal(((await expiry(early).result()) as ExpireLinkResult).outcome, 'expired');
    assert.equal(await statusOf(early), 'expired');

    const late = await createLink({ url: 'https://example.com/late', expiresAt: inMs(2_000) });
    await eventually(async () => (await queriedExpiry(late)) ?? undefined, { what: 'timer armed' });
    const later = inMs(3_600_000);
    await moveExpiry(late, later);
    await eventually(async () => ((await queriedExpiry(late)) === Date.parse(later) ? true : undefined), {
      what: 'the timer to learn the new date',
    });
    await new Promise((r) => setTimeout(r, 3_000)); // past the original date
    assert.equal(await statusOf(late), 'active');
    assert.equal((await expiry(late).describe()).status.name, 'RUNNING');
    await moveExpiry(late, inMs(500));
    assert.equal(((await expiry(late).result()) as ExpireLinkResult).outcome, 'expired');
    await recordHistory('expireLinkWorkflow-moved', `expire:${late}`);
  });

  test('removing the expiry ends the timer without touching the link', async () => {
    const code = await createLink({ url: 'https://example.com/forever', expiresAt: inMs(3_600_000) });
    await eventually(async () => (await queriedExpiry(code)) ?? undefined, { what: 'timer armed' });
    await moveExpiry(code, null);
    assert.equal(((await expiry(code).result()) as ExpireLinkResult).outcome, 'cancelled');
    await recordHistory('expireLinkWorkflow-cancelled', `expire:${code}`);
    assert.equal(await statusOf(code), 'active');
  });

  test('a date already past expires at once', async () => {
    await h.db.sql`
      INSERT INTO links (code, target_url, status, origin, owner, expires_at)
      VALUES ('pastdue', 'https://example.com/old', 'active', 'import', 'test', now() - interval '1 day')`;
    await h.deps.workflows.syncLink('pastdue', 'imported');
    const result = (await eventually(async () => expiry('pastdue').result(), {
      what: 'expiry',
    })) as ExpireLinkResult;
    assert.equal(result.outcome, 'expired');
    assert.equal(await statusOf('pastdue'), 'expired');
  });

  test('Postgres decides: a timer that fires early (its signal lost) waits for the date Postgres holds', async () => {
    const code = await createLink({ url: 'https://example.com/pg-decides' });
    const real = inMs(3_600_000);
    await h.db.sql`UPDATE links SET expires_at = ${real} WHERE code = ${code}`;
    const handle = await h.temporal.client.workflow.start('expireLinkWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: `expire:${code}`,
      args: [{ code, expiresAtMs: Date.now() + 200 }],
    });
    await eventually(async () => ((await queriedExpiry(code)) === Date.parse(real) ? true : undefined), {
      what: 'the timer to adopt the date in Postgres',
    });
    assert.equal(await statusOf(code), 'active');
    await handle.terminate('test done');
  });

  test('a link deleted (gone) before its expiry is left alone when the timer fires', async () => {
    const code = await createLink({ url: 'https://example.com/deleted', expiresAt: inMs(1_500) });
    await eventually(async () => (await queriedExpiry(code)) ?? undefined, { what: 'timer armed' });
    await h.db.sql`UPDATE links SET status = 'gone', deleted_at = now() WHERE code = ${code}`;
    assert.equal(((await expiry(code).result()) as ExpireLinkResult).outcome, 'not_active');
    await recordHistory('expireLinkWorkflow-not-active', `expire:${code}`);
    assert.equal(await statusOf(code), 'gone');
  });
});
