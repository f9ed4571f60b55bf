import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { createUser } from '../../lib/auth/manage_users.ts';
import { verifyWebhookSignature } from '../../lib/auth/webhook_signature.ts';
import { listAuditEntries } from '../../lib/stores/audit_store.ts';
import { expectProblem } from '../helpers/problem.ts';
import { createUiClient, type UiClient } from '../helpers/ui_client.ts';

// Three addresses (cheap with IPv6) put any link behind the warning page for good, even the
// newsroom's own trusted hosts, and no screen showed or resolved reports. Now: trusted hosts are never
// soft-blocked by readers, IPv6 reporters count per /64, a moderation queue (API and UI) dismisses, confirms
// or ignores (audited), and editors are told (in the UI, and through REPORT_WEBHOOK_URL).

const WEBHOOK_SECRET = 'report-webhook-secret-0123456789';
let h: Harness;
let receiver: Server;
const received: { body: string; signature: string | undefined }[] = [];
let admin: UiClient;
let editor: UiClient;

before(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push({ body, signature: req.headers['x-lifeline-signature'] as string | undefined });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  h = await createHarness({
    env: {
      TRUSTED_CLIENT_IP_HEADER: 'X-Test-Client-IP',
      RATE_LIMIT_REPORTS_PER_HOUR: '1000',
      SAFETY_TRUSTED_HOSTS: 'news.example',
      REPORT_WEBHOOK_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      REPORT_WEBHOOK_SECRET: WEBHOOK_SECRET,
    },
  });
  admin = createUiClient(h.app as never);
  assert.equal((await admin.login('admin@example.test', 'correct horse battery')).status, 303);
  await createUser(
    h.db.sql,
    { email: 'editor@example.test', name: 'Ed', role: 'editor', password: 'editor password 1' },
    'test',
  );
  editor = createUiClient(h.app as never);
  assert.equal((await editor.login('editor@example.test', 'editor password 1')).status, 303);
});
after(async () => {
  await h?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

async function create(url: string): Promise<string> {
  const res = await h.api('/api/v1/links', { method: 'POST', json: { url } });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { code: string }).code;
}

function report(code: string, ip: string, reason = 'Phishing or a scam') {
  return h.app.request(`/${code}/report`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Test-Client-IP': ip },
    body: JSON.stringify({ reason }),
  });
}

async function safetyOf(code: string): Promise<string> {
  const [row] = await h.db.sql<{ safety: string }[]>`SELECT safety FROM links WHERE code = ${code}`;
  return row!.safety;
}

async function reportThrice(code: string, prefix = '198.51.100'): Promise<void> {
  for (const [i, reason] of ['Phishing or a scam', 'Other', 'Phishing or a scam'].entries())
    assert.equal((await report(code, `${prefix}.${i + 1}`, reason)).status, 202);
}

describe('item 5: reports cannot silence the newsroom', () => {
  test('IPv6 reporters count per /64: three addresses of one subscriber are one reader', async () => {
    const code = await create('https://elsewhere.example/ipv6');
    for (const ip of ['2001:db8:5:5::1', '2001:db8:5:5::2', '2001:db8:5:5:ffff::3']) {
      assert.equal((await report(code, ip)).status, 202);
    }
    assert.notEqual(await safetyOf(code), 'warn');
    assert.equal((await h.app.request(`/${code}`)).status, 301);
    // Three different /64s are three readers.
    for (const ip of ['2001:db8:6:1::1', '2001:db8:6:2::1'])
      assert.equal((await report(code, ip)).status, 202);
    assert.equal(await safetyOf(code), 'warn');
  });

  test('a link to a trusted host is never soft-blocked by readers, but its reports reach the queue', async () => {
    const code = await create('https://www.news.example/our-own-story');
    await reportThrice(code, '203.0.113');
    assert.notEqual(await safetyOf(code), 'warn');
    assert.equal((await h.app.request(`/${code}`)).status, 301);
    const queue = (await (await h.api('/api/v1/reports')).json()) as { items: { code: string }[] };
    assert.ok(queue.items.some((i) => i.code === code));
  });

  test('the queue API lists reported links with reasons; dismiss restores, confirm blocks, ignore keeps', async () => {
    const dismissed = await create('https://elsewhere.example/dismiss-me');
    const confirmed = await create('https://elsewhere.example/confirm-me');
    const ignored = await create('https://elsewhere.example/ignore-me');
    for (const code of [dismissed, confirmed, ignored]) {
      await reportThrice(code, '198.18.0');
      assert.equal(await safetyOf(code), 'warn', 'three readers soft-block it');
    }
    const page = (await (await h.api('/api/v1/reports?limit=100')).json()) as {
      items: { code: string; reports: number; reasons: { reason: string; count: number }[]; url: string }[];
    };
    const item = page.items.find((i) => i.code === dismissed);
    assert.ok(item);
    assert.equal(item.reports, 3);
    assert.equal(item.url, 'https://elsewhere.example/dismiss-me');
    assert.deepEqual(item.reasons, [
      { reason: 'Phishing or a scam', count: 2 },
      { reason: 'Other', count: 1 },
    ]);

    const resolve = (code: string, json: unknown) =>
      h.api(`/api/v1/reports/${code}/resolve`, { method: 'POST', json });
    const d = await resolve(dismissed, { action: 'dismiss', note: 'a real newsroom partner' });
    assert.equal(d.status, 200, await d.clone().text());
    assert.notEqual(await safetyOf(dismissed), 'warn');
    assert.equal((await h.app.request(`/${dismissed}`)).status, 301, 'the warning is lifted');
    const c = await resolve(confirmed, { action: 'confirm' });
    assert.equal(c.status, 200);
    assert.equal(await safetyOf(confirmed), 'blocked');
    assert.equal((await h.app.request(`/${confirmed}`)).status, 451);
    const i = await resolve(ignored, { action: 'ignore' });
    assert.equal(i.status, 200);
    assert.equal(await safetyOf(ignored), 'warn', 'ignore leaves the link as it is');

    const open = (await (await h.api('/api/v1/reports?limit=100')).json()) as { items: { code: string }[] };
    for (const code of [dismissed, confirmed, ignored]) assert.ok(!open.items.some((x) => x.code === code));
    const detail = (await (await h.api(`/api/v1/reports/${dismissed}`)).json()) as {
      reports: { status: string; resolvedBy: string; note: string }[];
    };
    assert.ok(detail.reports.every((r) => r.status === 'dismissed' && r.note === 'a real newsroom partner'));

    for (const [code, action] of [
      [dismissed, 'reports.dismissed'],
      [confirmed, 'reports.confirmed'],
      [ignored, 'reports.ignored'],
    ] as const) {
      const audit = await listAuditEntries(h.db.sql, code);
      assert.ok(
        audit.some((a) => a.action === action && a.actor.startsWith('apikey:')),
        action,
      );
    }
    // Nothing left to decide: a conflict; nonsense: a validation problem; unknown link: 404.
    await expectProblem(await resolve(ignored, { action: 'ignore' }), 409);
    await expectProblem(await resolve(dismissed, { action: 'delete-everything' }), 422);
    await expectProblem(await resolve('NoSuchCode', { action: 'dismiss' }), 404);
  });

  test('only administrators moderate: a links:write key gets 403', async () => {
    const issued = await h.api('/api/v1/keys', {
      method: 'POST',
      json: { name: 'writer', scopes: ['links:write'] },
    });
    const { key } = (await issued.json()) as { key: string };
    const res = await h.api('/api/v1/reports', { headers: { Authorization: `Bearer ${key}` } });
    await expectProblem(res, 403);
    await expectProblem(await h.api('/api/v1/reports', { headers: { Authorization: 'Bearer nope' } }), 401);
  });

  test('the UI queue: admins see reasons and decide with CSRF-protected forms; editors cannot', async () => {
    const code = await create('https://elsewhere.example/from-the-ui');
    await reportThrice(code, '192.0.2');
    const page = await admin.get('/ui/reports');
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.ok(html.includes(`id="report-${code}"`), 'the link is in the queue');
    assert.match(html, /Phishing or a scam/);
    assert.equal(
      (await admin.post(`/ui/reports/${code}`, { action: 'dismiss' }, { csrf: null })).status,
      403,
    );
    await admin.get('/ui/reports');
    const done = await admin.post(`/ui/reports/${code}`, { action: 'dismiss', note: 'checked by hand' });
    assert.equal(done.status, 303);
    assert.notEqual(await safetyOf(code), 'warn');
    assert.equal((await editor.get('/ui/reports')).status, 403);
  });

  test('editors are told: their links list and the link page say it was reported, and the webhook fires', async () => {
    await editor.get('/ui/links/new');
    const created = await editor.post('/ui/links/new', { url: 'https://elsewhere.example/editors-own' });
    assert.equal(created.status, 303);
    const code = decodeURIComponent(/\/ui\/links\/([^?]+)/.exec(created.headers.get('Location') ?? '')![1]!);
    assert.equal((await report(code, '192.0.2.77', 'Not what the link claims to be')).status, 202);

    const list = await (await editor.get('/ui/links')).text();
    assert.match(list, new RegExp(`Readers reported links of yours: ${code} \\(1\\)`));
    const detail = await (await editor.get(`/ui/links/${code}`)).text();
    assert.match(detail, /Readers reported this link \(1 open report\)/);
    assert.match(detail, /Not what the link claims to be/);

    const hook = await eventually(async () => received.find((r) => r.body.includes(`"code":"${code}"`)));
    const body = JSON.parse(hook.body) as { event: string; reason: string; owner: string; text: string };
    assert.equal(body.event, 'link.reported');
    assert.equal(body.reason, 'Not what the link claims to be');
    assert.match(body.owner, /^user:/);
    const check = await verifyWebhookSignature(WEBHOOK_SECRET, hook.signature, hook.body, Date.now() / 1000);
    assert.deepEqual(check, { ok: true });
  });

  test("a reader's reason cannot post Slack markup or extra lines: `text` escapes it, `reason` keeps it raw", async () => {
    const code = await create('https://elsewhere.example/a?b=1&c=<2>');
    const reason =
      'Hey <!channel> see <https://evil.example|looks-internal> & more\nFAKE: admin says\r\nok\u2028too';
    assert.equal((await report(code, '192.0.2.88', reason)).status, 202);
    const hook = await eventually(async () => received.find((r) => r.body.includes(`"code":"${code}"`)));
    const body = JSON.parse(hook.body) as { reason: string; text: string; url: string };
    assert.equal(body.reason, reason.trim(), 'the JSON field keeps what the reader typed');
    assert.doesNotMatch(body.text, /<!channel>|<https?:|\|looks-internal>/, body.text);
    assert.doesNotMatch(body.text, /[\r\n\u2028\u2029]/, 'one line');
    // Slack's own escaping: & < > and nothing else, so the message still reads as typed.
    assert.match(body.text, /&lt;!channel&gt;/);
    assert.match(
      body.text,
      /&lt;https:\/\/evil\.example\|looks-internal&gt; &amp; more FAKE: admin says ok too/,
    );
    assert.doesNotMatch(body.text.replace(/&(amp|lt|gt);/g, ''), /[<>&]/, 'no raw markup character anywhere');
  });
});
