import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, createLinkCode, type Harness } from '../../devkit/harness/harness.ts';
import { createClickBuffer } from '../../lib/clicks/click_buffer.ts';
import { createMetrics } from '../../lib/shared/metrics.ts';
import { createSql, type Sql } from '../../lib/stores/sql.ts';
import { createApp } from '../../routes/app.ts';
import { rewireWebDeps } from '../../server/web_deps.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp_proxy.ts';

// Clicks end to end: the redirect records them in memory, the buffer writes click_counts, the stats API
// reads them back. Which answers count (routes/redirect.tsx): redirects to the target, an expired link's
// 302 to its fallback, and the warn interstitial; never 404/410/451 or the `{code}+` preview.

const HUMAN =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';

let h: Harness;
before(async () => {
  h = await createHarness({ env: { TRUSTED_COUNTRY_HEADER: 'CF-IPCountry' } });
});
after(async () => {
  await h.close();
});

const create = (json: Record<string, unknown>) => createLinkCode(h, json);

interface Stats {
  clicks: number;
  humanClicks: number;
  botHits: number;
  previews: number;
  qrScans: number;
  byCountry: { country: string | null; clicks: number }[];
  byReferrer: { host: string | null; clicks: number }[];
}

async function stats(code: string): Promise<Stats> {
  const res = await h.api(`/api/v1/links/${code}/stats`);
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as Stats;
}

function visit(path: string, headers: Record<string, string> = {}, method = 'GET', app = h.app) {
  return app.request(path, { method, headers });
}

describe('clicks through the redirect', () => {
  test('kinds, country and referrer host are recorded and shown by the stats API', async () => {
    const code = await create({ url: 'https://example.com/counted' });
    const expect = (res: Response, status: number) => assert.equal(res.status, status);
    for (let i = 0; i < 3; i++)
      expect(
        await visit(`/${code}`, {
          'User-Agent': HUMAN,
          'CF-IPCountry': 'de',
          Referer: 'https://WWW.Facebook.com/groups/x?y=1',
        }),
        301,
      );
    expect(await visit(`/${code}`, { 'User-Agent': HUMAN, 'CF-IPCountry': 'T1' }), 301);
    const qr = await visit(`/${code}?qr=1`, { 'User-Agent': HUMAN, 'CF-IPCountry': 'FR' });
    expect(qr, 301);
    assert.equal(qr.headers.get('Location'), 'https://example.com/counted', 'the qr marker is not forwarded');
    expect(await visit(`/${code}`, { 'User-Agent': HUMAN }, 'HEAD'), 301);
    expect(
      await visit(`/${code}`, { 'User-Agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' }),
      301,
    );
    expect(await visit(`/${code}`, { 'User-Agent': 'WhatsApp/2.23.20.0' }), 301);
    expect(await visit(`/${code}`, { 'User-Agent': 'Mozilla/5.0 (compatible; Googlebot/2.1)' }), 301);
    expect(await visit(`/${code}`), 301); // no User-Agent: a bot
    // Not clicks: the preview page.
    expect(await visit(`/${code}+`, { 'User-Agent': HUMAN }), 200);

    await h.deps.clicks.flush();
    const s = await stats(code);
    assert.equal(s.humanClicks, 4);
    assert.equal(s.qrScans, 1);
    assert.equal(s.clicks, 5);
    assert.equal(s.previews, 2);
    assert.equal(s.botHits, 3, 'Googlebot, no User-Agent, HEAD');
    assert.deepEqual(
      s.byCountry.sort((a, b) => b.clicks - a.clicks || String(a.country).localeCompare(String(b.country))),
      [
        { country: 'DE', clicks: 3 },
        { country: 'FR', clicks: 1 },
        { country: null, clicks: 1 },
      ],
    );
    assert.deepEqual(
      s.byReferrer.sort((a, b) => b.clicks - a.clicks),
      [
        { host: 'www.facebook.com', clicks: 3 },
        { host: null, clicks: 2 },
      ],
    );
    const [link] = await h.db.sql<
      { at: Date | null }[]
    >`SELECT last_clicked_at AS at FROM link_last_clicks WHERE code = ${code}`;
    assert.ok(link?.at && Date.now() - link.at.getTime() < 60_000, 'last_clicked_at moved');
  });

  test('warn pages and expired fallbacks count; 404, 410, 451 and previews do not', async () => {
    const warn = await create({ url: 'https://example.com/w' });
    const expired = await create({ url: 'https://example.com/e', expiredUrl: 'https://example.com/e-ended' });
    const gone = await create({ url: 'https://example.com/g' });
    const blocked = await create({ url: 'https://example.com/b' });
    await h.db.sql`UPDATE links SET safety = 'warn' WHERE code = ${warn}`;
    await h.db.sql`UPDATE links SET status = 'expired' WHERE code = ${expired}`;
    await h.db.sql`UPDATE links SET status = 'gone' WHERE code = ${gone}`;
    await h.db.sql`UPDATE links SET status = 'blocked' WHERE code = ${blocked}`;
    for (const c of [warn, expired, gone, blocked]) await h.deps.resolver.refresh(c);

    assert.equal((await visit(`/${warn}`, { 'User-Agent': HUMAN })).status, 200);
    assert.equal((await visit(`/${expired}`, { 'User-Agent': HUMAN })).status, 302);
    assert.equal((await visit(`/${gone}`, { 'User-Agent': HUMAN })).status, 410);
    assert.equal((await visit(`/${blocked}`, { 'User-Agent': HUMAN })).status, 451);
    assert.equal((await visit('/NoSuchCode1', { 'User-Agent': HUMAN })).status, 404);
    assert.equal((await visit(`/${warn}+`, { 'User-Agent': HUMAN })).status, 200);
    await h.deps.clicks.flush();

    assert.equal((await stats(warn)).humanClicks, 1);
    assert.equal((await stats(expired)).humanClicks, 1);
    assert.equal((await stats(gone)).clicks, 0);
    assert.equal((await stats(blocked)).clicks, 0);
    const [row] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM click_counts WHERE code IN ('NoSuchCode1', ${gone}, ${blocked})`;
    assert.equal(row?.n, 0);
  });
});

describe('a click database outage', () => {
  let proxy: TcpProxy;
  let clickSql: Sql;
  before(async () => {
    const url = new URL(h.db.url);
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(url.port || 5432) });
    url.port = String(proxy.port);
    clickSql = createSql({ url: url.toString(), max: 2, applicationName: 'lifeline-test-clicks' });
  });
  after(async () => {
    await clickSql.end({ timeout: 1 });
    await proxy.close();
  });

  test('never slows or fails a redirect, and every click arrives once the database is back', async () => {
    const metrics = createMetrics();
    // The same web tier, its click buffer writing through a connection this test can cut.
    const clicks = createClickBuffer({
      sql: clickSql,
      metrics,
      logger: h.logger,
      flushIntervalMs: 50,
      maxKeys: 1000,
    });
    const app = createApp(rewireWebDeps({ ...h.deps, metrics, clicks }));
    const code = await create({ url: 'https://example.com/outage' });

    async function burst(n: number): Promise<number[]> {
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const started = performance.now();
        const res = await visit(`/${code}`, { 'User-Agent': HUMAN, 'CF-IPCountry': 'NL' }, 'GET', app);
        times.push(performance.now() - started);
        assert.equal(res.status, 301);
        assert.equal(res.headers.get('Location'), 'https://example.com/outage');
      }
      return times.sort((a, b) => a - b);
    }
    const p99 = (t: number[]) => t[Math.floor(t.length * 0.99)]!;

    await burst(100); // warm-up (JIT), counted like any other clicks
    await clicks.flush();
    assert.equal((await stats(code)).clicks, 100);
    // Healthy and cut phases interleaved, so load from other test files weighs on both alike.
    const healthy: number[] = [];
    const during: number[] = [];
    for (let round = 0; round < 4; round++) {
      healthy.push(...(await burst(50)));
      await proxy.cut();
      during.push(...(await burst(100)));
      await new Promise((r) => setTimeout(r, 120)); // intervals fail meanwhile
      if (round < 3) await proxy.restore();
    }
    const failures = (await metrics.clickFlushes.get()).values.find(
      (v) => v.labels.result === 'error',
    )?.value;
    assert.ok((failures ?? 0) >= 1, 'flushes failed while the database was cut');
    healthy.sort((a, b) => a - b);
    during.sort((a, b) => a - b);
    // Redirects while the click database is cut are as fast as while it is up: medians compared, with a
    // loose p99 ceiling (a shared 2-core machine makes single slow requests common in both phases).
    const median = (t: number[]) => t[Math.floor(t.length / 2)]!;
    const timing = `median ${median(during).toFixed(2)} vs ${median(healthy).toFixed(2)} ms, p99 ${p99(during).toFixed(1)} vs ${p99(healthy).toFixed(1)} ms`;
    process.stderr.write(`[redirect_clicks] during a click-database outage: ${timing}\n`);
    assert.ok(median(during) < median(healthy) * 2 + 1, timing);
    assert.ok(p99(during) < 500, timing);

    await proxy.restore();
    let seen = 0;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
      seen = (await stats(code)).clicks;
      if (seen >= 700) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(seen, 700, `clicks after the outage (${clicks.pendingKeys} keys still pending)`);
    await clicks.close();
    const s = await stats(code);
    assert.equal(s.clicks, 700, 'none lost, none twice');
    assert.deepEqual(s.byCountry, [{ country: 'NL', clicks: 700 }]);
    assert.equal((await metrics.clicksDropped.get()).values[0]?.value ?? 0, 0);
  });
});
