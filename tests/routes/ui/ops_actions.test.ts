import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, type Harness } from '../../../devkit/harness/harness.ts';
import { createUser } from '../../../lib/auth/manage_users.ts';
import { type startDnsSwitch, startOperatorFailoverSetup } from '../../helpers/dns_switch.ts';
import { createUiClient, type UiClient } from '../../helpers/ui_client.ts';

// The operations page drives the same workflows as /api/v1/ops: drills, failover with the operator's DNS
// confirmation, reconciliation and re-scans, behind the session, the admin role and the CSRF token.
let h: Harness;
let dns: Awaited<ReturnType<typeof startDnsSwitch>>;
let setup: Awaited<ReturnType<typeof startOperatorFailoverSetup>>;
let admin: UiClient;
const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };

before(async () => {
  setup = await startOperatorFailoverSetup();
  ({ h, dns } = setup);
  admin = createUiClient(h.app as never);
  assert.equal((await admin.login(ADMIN.email, ADMIN.password)).status, 303);
});
after(async () => {
  await setup.close();
});

const runs = async (kind: string) =>
  h.db.sql<{ status: string; report: Record<string, unknown> }[]>`
    SELECT status, report FROM ops_runs WHERE kind = ${kind} ORDER BY id`;

describe('operations actions in the UI', () => {
  test('reconcile and re-scan buttons start their workflows', async () => {
    // One reconciliation at a time: a 409 page says so (e.g. while a Schedule-started one runs).
    await eventually(
      async () => {
        await admin.get('/ui/ops');
        const res = await admin.post('/ui/ops/reconcile', {});
        if (res.status === 409) assert.match(await res.text(), /Not started/);
        return res.status === 303 ? true : undefined;
      },
      { timeoutMs: 60_000, what: 'a reconciliation to be started from the page' },
    );
    await admin.get('/ui/ops');
    assert.equal((await admin.post('/ui/ops/rescan', {})).status, 303);
    await eventually(async () => ((await runs('reconcile'))[0]?.status === 'succeeded' ? true : undefined), {
      timeoutMs: 60_000,
      what: 'the reconciliation to finish',
    });
    await eventually(async () => ((await runs('rescan'))[0] ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the re-scan to be recorded',
    });
  });
  test('editors cannot start them, and a post without the CSRF token is refused', async () => {
    const password = 'editor password long';
    await createUser(
      h.db.sql,
      { email: 'editor@example.test', name: null, password, role: 'editor' },
      'test',
    );
    const editor = createUiClient(h.app as never);
    assert.equal((await editor.login('editor@example.test', password)).status, 303);
    await editor.get('/ui/links');
    assert.equal((await editor.post('/ui/ops/front', { to: 'inhouse', drill: 'true' })).status, 403);
    await admin.get('/ui/ops');
    const forged = await admin.post('/ui/ops/front', { to: 'inhouse', drill: 'true' }, { csrf: null });
    assert.equal(forged.status, 403);
    assert.equal((await runs('drill')).length, 0);
  });

  test('a real switch needs the confirmation box; refusing starts nothing', async () => {
    const page = await (await admin.get('/ui/ops')).text();
    assert.match(page, /Fail over to the in-house resolver/);
    assert.match(page, /Run a drill/);
    const refused = await admin.post('/ui/ops/front', { to: 'inhouse' });
    assert.equal(refused.status, 409);
    assert.match(await refused.text(), /tick the box to confirm/);
    await admin.get('/ui/ops');
    const bad = await admin.post('/ui/ops/front', { to: 'cloudflare', drill: 'true' });
    assert.equal(bad.status, 409);
    assert.equal((await runs('failover')).length, 0);
    assert.equal((await runs('drill')).length, 0);
  });

  test('a drill runs to its report, shown on the page', async () => {
    await (await admin.get('/ui/ops')).text();
    const started = await admin.post('/ui/ops/front', { to: 'inhouse', drill: 'true' });
    assert.equal(started.status, 303);
    assert.equal(started.headers.get('Location'), '/ui/ops?done=drill#actions');
    const [drill] = await eventually(
      async () => {
        const rows = await runs('drill');
        return rows[0]?.status === 'succeeded' ? rows : undefined;
      },
      { timeoutMs: 60_000, what: 'the drill to succeed' },
    );
    assert.equal(typeof drill?.report.estimatedFailoverMs, 'number');
    const page = await (await admin.get('/ui/ops')).text();
    assert.match(page, /Last failover drill[\s\S]*Succeeded/);
    assert.equal((await (await h.api('/api/v1/ops/front')).json()).active, 'bitly', 'a drill never switches');
  });

  test('a failover waits for the operator’s DNS change, confirmed by a button', async () => {
    await admin.get('/ui/ops');
    const started = await admin.post('/ui/ops/front', { to: 'inhouse', confirm: 'yes' });
    assert.equal(started.status, 303, await started.clone().text());
    const page = await eventually(
      async () => {
        const html = await (await admin.get('/ui/ops')).text();
        return html.includes('I changed the DNS') ? html : undefined;
      },
      { timeoutMs: 60_000, what: 'the page to offer the DNS confirmation' },
    );
    assert.match(page, /step: DNS change/);
    await fetch(`${dns.url}/_dns`, {
      method: 'POST',
      headers: { Authorization: 'Bearer unused' },
      body: JSON.stringify({ front: 'inhouse' }),
    });
    const confirmed = await admin.post('/ui/ops/front/dns-changed', {});
    assert.equal(confirmed.status, 303);
    await eventually(async () => ((await runs('failover'))[0]?.status === 'succeeded' ? true : undefined), {
      timeoutMs: 60_000,
      what: 'the failover to finish',
    });
    const after = await (await admin.get('/ui/ops')).text();
    assert.match(after, /Fail back to Bitly/);
    assert.equal((await (await h.api('/api/v1/ops/front')).json()).active, 'inhouse');
    // Nothing is waiting now: a second confirmation is refused on the page.
    const again = await admin.post('/ui/ops/front/dns-changed', {});
    assert.equal(again.status, 409);
    assert.match(await again.text(), /no failover is waiting for DNS/);
  });
});
