import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { familyTotals } from '../../lib/clicks/family_totals.ts';
import { type RunningServer, serveNode } from '../../server/node_server.ts';

// Browser and OS families end to end through the real Node server (its fast path: the first request of a code
// misses the LRU, the rest are LRU hits counted in the memo's cell), the click buffer's flush, Postgres, the stats
// API and the newsroom's familyTotals; and no User-Agent is stored anywhere.

const UA = {
  iphoneSafari:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1',
  iphoneInstagram:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 326.0.3.30.91 (iPhone15,2; iOS 17_4; ar_SA; ar; scale=3.00; 1179x2556; 584330682)',
  androidChrome:
    'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  samsung:
    'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
  edge: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0',
  macFirefox: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.4; rv:125.0) Gecko/20100101 Firefox/125.0',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  slack: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
};

let h: Harness;
let server: RunningServer;
let base: string;

before(async () => {
  h = await createHarness();
  server = await serveNode(h.app.fetch, { port: 0, host: '127.0.0.1', fastPath: h.deps });
  base = `http://127.0.0.1:${server.port}`;
  for (const code of ['FamA', 'FamB']) {
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      VALUES (${code}, ${`https://example.com/${code}`}, 'active', 'clean', 'api', 'test')`;
  }
});
after(async () => {
  await server?.close(100);
  await h?.close();
});

async function visit(code: string, userAgent: string, times = 1, query = ''): Promise<void> {
  for (let i = 0; i < times; i++) {
    const res = await fetch(`${base}/${code}${query}`, {
      headers: { 'User-Agent': userAgent },
      redirect: 'manual',
    });
    assert.equal(res.status, 301);
    await res.body?.cancel();
  }
}

type Pair = { family: string; clicks: number };
const asObject = (rows: Pair[]) => Object.fromEntries(rows.map((r) => [r.family, r.clicks]));

describe('browser and OS families through the real server', () => {
  test('readers counted per (link, day, family); bots, previews and HEAD left out; no agent stored', async () => {
    // Interleaved, so the cell's running count changes agent often (and the first agent is new at the flush).
    await visit('FamA', UA.iphoneSafari, 3);
    await visit('FamA', UA.androidChrome, 2);
    await visit('FamA', UA.iphoneSafari);
    await visit('FamA', UA.iphoneInstagram, 2);
    await visit('FamA', UA.iphoneSafari, 1, '?qr=1');
    await visit('FamA', UA.googlebot, 3);
    await visit('FamA', UA.slack);
    await visit('FamA', UA.samsung);
    const head = await fetch(`${base}/FamA`, {
      method: 'HEAD',
      headers: { 'User-Agent': UA.edge },
      redirect: 'manual',
    });
    assert.equal(head.status, 301);
    await visit('FamB', UA.edge, 2);
    await visit('FamB', UA.macFirefox);
    await h.deps.clicks.flush();
    // After a flush, the same agents again (now with known families: the cells key by family pair).
    await visit('FamA', UA.androidChrome);
    await visit('FamA', UA.samsung);
    await h.deps.clicks.flush();

    const today = new Date().toISOString().slice(0, 10);
    const rows = await h.db.sql<{ code: string; day: string; browser: string; os: string; clicks: number }[]>`
      SELECT code, to_char(day, 'YYYY-MM-DD') AS day, browser, os, clicks FROM click_families ORDER BY code, browser, os`;
    assert.deepEqual(
      rows.map((r) => [r.code, r.day, r.browser, r.os, r.clicks]),
      [
        ['FamA', today, 'chrome', 'android', 3],
        ['FamA', today, 'instagram', 'ios', 2],
        ['FamA', today, 'safari', 'ios', 5],
        ['FamA', today, 'samsung', 'android', 2],
        ['FamB', today, 'edge', 'windows', 2],
        ['FamB', today, 'firefox', 'macos', 1],
      ],
    );

    // The link's stats: people's clicks equal the families' sums.
    const res = await h.api('/api/v1/links/FamA/stats');
    assert.equal(res.status, 200);
    const stats = (await res.json()) as { clicks: number; byBrowser: Pair[]; byOs: Pair[] };
    assert.equal(stats.clicks, 12);
    assert.deepEqual(stats.byBrowser, [
      { family: 'safari', clicks: 5 },
      { family: 'chrome', clicks: 3 },
      { family: 'instagram', clicks: 2 },
      { family: 'samsung', clicks: 2 },
    ]);
    assert.deepEqual(asObject(stats.byOs), { ios: 7, android: 5 });

    // The newsroom's totals: every link, or one by key; a window before today has none.
    const now = new Date();
    const all = await familyTotals(h.db.sql, { from: new Date(now.getTime() - 86_400_000), to: now });
    assert.deepEqual(asObject(all.byOs), { ios: 7, android: 5, windows: 2, macos: 1 });
    assert.deepEqual(asObject(all.byBrowser), {
      safari: 5,
      chrome: 3,
      instagram: 2,
      samsung: 2,
      edge: 2,
      firefox: 1,
    });
    const one = await familyTotals(h.db.sql, {
      from: new Date(now.getTime() - 3_600_000),
      to: now,
      key: 'FamB',
    });
    assert.deepEqual(one.byBrowser, [
      { family: 'edge', clicks: 2 },
      { family: 'firefox', clicks: 1 },
    ]);
    const before = await familyTotals(h.db.sql, { from: new Date('2020-01-01'), to: new Date('2020-02-01') });
    assert.deepEqual([before.byBrowser, before.byOs], [[], []]);

    // The CSV by browser and by OS (the API's English words).
    const csv = await h.api('/api/v1/links/FamA/clicks.csv?by=os');
    assert.equal(csv.status, 200);
    const text = (await csv.text()).replace(/^\uFEFF/, '');
    assert.deepEqual(text.trim().split(/\r?\n/), [
      'OS family,Operating system,People',
      'ios,iOS,7',
      'android,Android,5',
    ]);
    const bad = await h.api('/api/v1/links/FamA/clicks.csv?by=agent');
    assert.equal(bad.status, 422);

    // No User-Agent anywhere in the database: every row of every table as text.
    const tables = await h.db.sql<{ name: string }[]>`
      SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`;
    for (const { name } of tables) {
      const [hit] = await h.db.sql.unsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM "${name}" t WHERE row_to_json(t)::text ~ '(AppleWebKit|Gecko/|Mozilla/5|SamsungBrowser|Googlebot)'`,
      );
      assert.equal(hit!.n, 0, `no agent text in ${name}`);
    }
  });
});
