// The operations page with two short domains (ADR 0073): each domain's front in the card and its own drill and
// switch forms, in English and Arabic (right to left); a form names its domain and starts that domain's run,
// behind the admin role and the CSRF token; a domain that is not configured is refused with the page's notice.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import { createUser } from '../../../lib/auth/manage_users.ts';
import { setActiveFront } from '../../../lib/failover/active_front.ts';
import { createUiClient, type UiClient } from '../../helpers/ui_client.ts';

const HOME = 'sho.rt.test';
const TWO = 'two.short.test';
const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };
const EN = { 'Accept-Language': 'en-GB,en;q=0.9' };
const AR = { 'Accept-Language': 'ar-EG,ar;q=0.9,en;q=0.5' };

let h: Harness;
let admin: UiClient;

before(async () => {
  h = await createHarness({
    env: { SHORT_BASE_URL: `https://${HOME}`, SHORT_DOMAINS: `${HOME},${TWO}` },
  });
  await setActiveFront(h.db.sql, { active: 'inhouse', since: '2026-11-30T10:00:00.000Z' }, TWO);
  admin = createUiClient(h.app as never);
  assert.equal((await admin.login(ADMIN.email, ADMIN.password, EN)).status, 303);
});
after(async () => {
  await h.close();
});

describe('the operations page with two short domains', () => {
  test('each domain’s front and forms, in English and in Arabic', async () => {
    const en = await (await admin.get('/ui/ops', EN)).text();
    for (const domain of [HOME, TWO]) {
      assert.match(en, new RegExp(`<li data-domain="${domain.replace(/\./g, '\\.')}">`));
      assert.match(en, new RegExp(`<div class="subform" data-domain="${domain.replace(/\./g, '\\.')}">`));
      assert.match(en, new RegExp(`name="domain" value="${domain.replace(/\./g, '\\.')}"`));
    }
    assert.match(en, /Front of <bdi class="mono" dir="ltr">two\.short\.test<\/bdi>/);
    // No Bitly configured: the switch to Bitly is not offered on either domain, each saying why.
    assert.equal(en.split('Bitly is not configured (BITLY_TOKEN)').length - 1, 2);
    const ar = await (await admin.get('/ui/ops', AR)).text();
    assert.match(ar, /<html[^>]+dir="rtl"/);
    assert.match(ar, /واجهة <bdi class="mono" dir="ltr">two\.short\.test<\/bdi>/);
    assert.match(ar, new RegExp(`name="domain" value="${TWO.replace(/\./g, '\\.')}"`));
  });

  test('a drill from the second domain’s form starts that domain’s run', async () => {
    await admin.get('/ui/ops', EN);
    const res = await admin.post('/ui/ops/front', { to: 'inhouse', drill: 'true', domain: TWO });
    assert.equal(res.status, 303, await res.clone().text());
    const [run] = await h.db.sql<{ workflowId: string; report: Record<string, unknown> }[]>`
      SELECT workflow_id AS "workflowId", report FROM ops_runs WHERE kind = 'drill' ORDER BY id DESC LIMIT 1`;
    assert.match(run!.workflowId, new RegExp(`^drill:inhouse:${TWO.replace(/\./g, '\\.')}:`));
    assert.equal(run!.report.domain, TWO);
    await h.db
      .sql`UPDATE ops_runs SET status = 'cancelled', finished_at = now() WHERE workflow_id = ${run!.workflowId}`;
  });

  test('an unknown domain is refused on the page; no CSRF token or no admin: 403', async () => {
    await admin.get('/ui/ops', EN);
    const unknown = await admin.post('/ui/ops/front', {
      to: 'inhouse',
      drill: 'true',
      domain: 'elsewhere.test',
    });
    assert.equal(unknown.status, 409);
    assert.match(await unknown.text(), /choose one of the short domains/);
    await admin.get('/ui/ops', EN);
    const noCsrf = await admin.post(
      '/ui/ops/front',
      { to: 'inhouse', drill: 'true', domain: TWO },
      { csrf: null },
    );
    assert.equal(noCsrf.status, 403);
    const password = 'another correct horse battery';
    await createUser(
      h.db.sql,
      { email: 'editor@example.test', name: null, password, role: 'editor' },
      'test',
    );
    const editor = createUiClient(h.app as never);
    assert.equal((await editor.login('editor@example.test', password, EN)).status, 303);
    await editor.get('/ui/links', EN);
    const forbidden = await editor.post('/ui/ops/front', { to: 'inhouse', drill: 'true', domain: TWO });
    assert.equal(forbidden.status, 403);
  });
});
