import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { eventually, type Harness } from '../../../devkit/harness/harness.ts';
import { createUser } from '../../../lib/auth/manage_users.ts';
import { signWebhook } from '../../../lib/auth/webhook_signature.ts';
import { ROOT } from '../../../scripts/temporal_cli.ts';
import { createUiClient, type UiClient } from '../../helpers/ui_client.ts';
import { startUiServer, type UiServer } from '../../helpers/ui_server.ts';

// The mass retarget page and the operations page's backfill progress, as an admin uses them without JavaScript:
// plan (dry run), review the sample, approve, and see it finish; editors are kept out; forms need the CSRF token.
let ui: UiServer;
let h: Harness;
let admin: UiClient;
const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };

before(async () => {
  ui = await startUiServer();
  h = ui.h;
  await h.startWorker();
  admin = createUiClient(h.app as never);
  assert.equal((await admin.login(ADMIN.email, ADMIN.password)).status, 303);
});
after(async () => {
  await ui.close();
});

describe('mass retarget in the UI', () => {
  test('plan, review the sample, approve, finished; an editor cannot; a form without the CSRF token is refused', async () => {
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      SELECT 'ui' || i, 'https://old.example/section/' || i, 'active', 'clean', 'api', 'test'
      FROM generate_series(1, 30) AS i`;
    assert.equal((await admin.get('/ui/ops/retarget')).status, 200);
    const bad = await admin.post('/ui/ops/retarget', { type: 'regex', pattern: '(?=x)', replacement: 'y' });
    assert.equal(bad.status, 422);
    assert.match(await bad.text(), /no backreferences or lookarounds/);
    const planned = await admin.post('/ui/ops/retarget', {
      type: 'prefix',
      from: 'https://old.example/section/',
      to: 'https://new.example/renamed/',
    });
    assert.equal(planned.status, 303);
    const detail = planned.headers.get('Location')!.split('?')[0]!;
    assert.match(detail, /^\/ui\/ops\/retarget\/rt_/);
    const page = await eventually(async () => {
      const html = await (await admin.get(detail)).text();
      return html.includes('Approve and run') ? html : undefined;
    });
    assert.match(page, /<strong>30<\/strong> links would change/);
    assert.match(page, /https:\/\/new\.example\/renamed\/1/);
    const [before] = await h.db.sql<
      { url: string }[]
    >`SELECT target_url AS url FROM links WHERE code = 'ui1'`;
    assert.equal(before!.url, 'https://old.example/section/1', 'the dry run changed nothing');

    assert.equal(
      (await admin.post(`${detail}/approve`, {}, { csrf: null })).status,
      403,
      'CSRF token required',
    );
    const editor = createUiClient(h.app as never);
    await createUser(
      h.db.sql,
      { email: 'ed@example.test', name: 'Ed', role: 'editor', password: 'a long enough password' },
      'test',
    );
    await editor.login('ed@example.test', 'a long enough password');
    assert.equal((await editor.get(detail)).status, 403, 'admins only');

    await admin.get(detail);
    assert.equal((await admin.post(`${detail}/approve`, {})).status, 303);
    await eventually(
      async () => ((await (await admin.get(detail)).text()).includes('>finished<') ? true : undefined),
      {
        timeoutMs: 30_000,
        what: 'the run to finish',
      },
    );
    const [after] = await h.db.sql<{ url: string }[]>`SELECT target_url AS url FROM links WHERE code = 'ui1'`;
    assert.equal(after!.url, 'https://new.example/renamed/1');
    assert.match(await (await admin.get(detail)).text(), /Undo this run/);
  });

  test('the operations page shows a backfill run’s progress (and a real browser renders it)', async () => {
    const run = randomUUID();
    const body = JSON.stringify({
      id: `${run}:1`,
      run,
      site: 'uinews',
      batch: 1,
      dryRun: false,
      final: false,
      total: 4,
      restUrl: 'http://127.0.0.1:9/wp-json/lifeline/v1/',
      posts: [1, 2, 3].map((postId) => ({
        postId,
        permalink: `https://news.example/p/${postId}/`,
        publishedAt: '2020-01-01T00:00:00Z',
        modifiedAt: '2020-01-01T00:00:00Z',
      })),
    });
    const res = await h.app.request('/api/v1/hooks/wordpress/backfill', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Lifeline-Signature': await signWebhook(h.webhookSecret, body, Date.now() / 1000),
      },
      body,
    });
    assert.equal(res.status, 202);
    const html = await (await admin.get('/ui/ops')).text();
    assert.match(html, /Archive backfill and mass retargets/);
    assert.match(html, /3 \/ 4 posts · batch 1/);
    assert.match(html, /minted 3/);

    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${ui.base}/ui/login`);
      await page.fill('input[name=email]', ADMIN.email);
      await page.fill('input[name=password]', ADMIN.password);
      await Promise.all([page.waitForURL(/\/ui\/links/), page.click('button[type=submit]')]);
      await page.goto(`${ui.base}/ui/ops#adoption`);
      assert.equal(await page.locator('#adoption progress').count(), 1);
      mkdirSync(join(ROOT, '.cache'), { recursive: true });
      await page.locator('#adoption').screenshot({ path: join(ROOT, '.cache', 'ops-adoption.png') });
      await page.goto(`${ui.base}/ui/ops/retarget`);
      await page.screenshot({ path: join(ROOT, '.cache', 'retarget-page.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});
