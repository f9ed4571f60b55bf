import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { READER_REPORTS_WARN_THRESHOLD } from '../../lib/safety/apply_scan_result.ts';
import { listAuditEntries } from '../../lib/stores/audit_store.ts';
import { listReports } from '../../lib/stores/report_store.ts';
import { getSyncWorkflowId } from '../../workflows/contract.ts';

// POST /{code}/report: distinct readers (by client IP, stored only as a keyed hash) soft-block a link.

let h: Harness;
before(async () => {
  h = await createHarness({
    env: { TRUSTED_CLIENT_IP_HEADER: 'X-Test-Client-IP', RATE_LIMIT_REPORTS_PER_HOUR: '5' },
  });
});
after(async () => {
  await h.close();
});

async function create(url: string) {
  const res = await h.api('/api/v1/links', { method: 'POST', json: { url } });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { code: string }).code;
}

function report(
  code: string,
  ip: string,
  body: unknown = { reason: 'Phishing or a scam' },
  type = 'application/json',
) {
  return h.app.request(`/${code}/report`, {
    method: 'POST',
    headers: { 'Content-Type': type, 'X-Test-Client-IP': ip },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function safetyOf(code: string) {
  const [row] = await h.db.sql<{ safety: string; reason: string | null }[]>`
    SELECT safety, safety_reason AS reason FROM links WHERE code = ${code}`;
  return row!;
}

/** The payloads signalled to the link's sync workflow so far (decoded text), [] when it never started. */
async function syncSignals(code: string): Promise<string[]> {
  try {
    const history = await h.temporal.client.workflow.getHandle(getSyncWorkflowId(code)).fetchHistory();
    const out: string[] = [];
    for (const event of history.events ?? []) {
      const start = event.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
      const signal = event.workflowExecutionSignaledEventAttributes?.input?.payloads ?? [];
      for (const p of [...start, ...signal]) out.push(Buffer.from(p.data ?? []).toString('utf8'));
    }
    return out;
  } catch {
    return [];
  }
}

const toldSync = async (code: string) =>
  (await syncSignals(code)).some((s) => s.includes('after reader reports'));

describe('POST /{code}/report', () => {
  test('three distinct readers soft-block the link to warn: audited, caches refreshed, sync signalled', async () => {
    assert.equal(READER_REPORTS_WARN_THRESHOLD, 3);
    const code = await create('https://example.com/reported');
    const initial = (await safetyOf(code)).safety;
    assert.ok(initial === 'clean' || initial === 'unknown', initial);
    for (const [i, ip] of ['198.51.100.1', '198.51.100.2'].entries()) {
      const res = await report(code, ip);
      assert.equal(res.status, 202, await res.clone().text());
      assert.deepEqual(await res.json(), { code, accepted: true, counted: true }, `report ${i + 1}`);
      assert.equal((await safetyOf(code)).safety, initial);
    }
    assert.equal((await h.app.request(`/${code}`)).status, 301, 'two reports change nothing');
    assert.equal(await toldSync(code), false);

    assert.equal((await report(code, '2001:db8::7')).status, 202);
    const after = await safetyOf(code);
    assert.equal(after.safety, 'warn');
    assert.match(after.reason ?? '', /reported by 3 readers/);
    const page = await h.app.request(`/${code}`);
    assert.equal(page.status, 200, 'the redirect now shows the interstitial');
    assert.match(await page.text(), /Check before you continue/);

    const audit = await listAuditEntries(h.db.sql, code);
    const change = audit.find((a) => a.action === 'link.safety_changed');
    assert.equal(change?.actor, 'system:reader-reports');
    assert.deepEqual((change?.after as { safety: string } | undefined)?.safety, 'warn');
    assert.equal(await toldSync(code), true, 'the sync workflow (vendors, serving store) was told');

    // Reporters are stored as keyed hashes: neither the IP nor its plain SHA-256 is in the table.
    const stored = await listReports(h.db.sql, code);
    assert.equal(stored.length, 3);
    for (const r of stored) {
      assert.match(r.reporterHash, /^[0-9a-f]{64}$/);
      for (const ip of ['198.51.100.1', '198.51.100.2', '2001:db8::7']) {
        assert.ok(!r.reporterHash.includes(ip));
        assert.notEqual(r.reporterHash, createHash('sha256').update(ip).digest('hex'));
      }
    }
    const dump = JSON.stringify(await h.db.sql`SELECT * FROM reports`);
    assert.ok(!dump.includes('198.51.100'), 'no raw IP anywhere in reports');
  });

  test('one reader reporting again and again counts once', async () => {
    const code = await create('https://example.com/one-reader');
    const initial = (await safetyOf(code)).safety;
    const first = await report(code, '203.0.113.9');
    assert.deepEqual(await first.json(), { code, accepted: true, counted: true });
    for (let i = 0; i < 3; i++) {
      const res = await report(code, '203.0.113.9', { reason: `again ${i}` });
      assert.equal(res.status, 202);
      assert.deepEqual(await res.json(), { code, accepted: true, counted: false });
    }
    assert.equal((await safetyOf(code)).safety, initial);
    assert.equal((await listReports(h.db.sql, code)).length, 1);
  });

  test('the form on the interstitial posts a form body and gets a thank-you page', async () => {
    const code = await create('https://example.com/form');
    const res = await report(
      code,
      '192.0.2.50',
      'reason=Malware+or+an+unwanted+download',
      'application/x-www-form-urlencoded',
    );
    assert.equal(res.status, 202);
    assert.match(res.headers.get('Content-Type') ?? '', /^text\/html/);
    assert.match(await res.text(), /Thank you/);
    const [stored] = await listReports(h.db.sql, code);
    assert.equal(stored?.reason, 'Malware or an unwanted download');
  });

  test('a form posted from another site is refused (it could make its visitors report a link)', async () => {
    const code = await create('https://example.com/csrf');
    const post = (ip: string, headers: Record<string, string>) =>
      h.app.request(`/${code}/report`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Test-Client-IP': ip, ...headers },
        body: 'reason=Other',
      });
    assert.equal((await post('192.0.2.81', { Origin: 'https://evil.example' })).status, 403);
    assert.equal((await post('192.0.2.82', { Origin: 'null' })).status, 403);
    assert.equal((await post('192.0.2.83', { 'Sec-Fetch-Site': 'cross-site' })).status, 403);
    assert.equal((await listReports(h.db.sql, code)).length, 0);
    assert.equal(
      (await post('192.0.2.84', { Origin: 'http://sho.rt.test', 'Sec-Fetch-Site': 'same-origin' })).status,
      202,
    );
    assert.equal((await post('192.0.2.85', {})).status, 202, 'API clients send no Origin');
  });

  test('a blocked link stays blocked however many readers report it', async () => {
    const code = await create('https://example.com/already-bad');
    await h.db.sql`UPDATE links SET safety = 'blocked' WHERE code = ${code}`;
    for (const ip of ['192.0.2.61', '192.0.2.62', '192.0.2.63'])
      assert.equal((await report(code, ip)).status, 202);
    assert.equal((await safetyOf(code)).safety, 'blocked');
  });

  test('unknown, impossible and pending codes are 404 problems', async () => {
    const pending = await create('https://example.com/pending');
    await h.db.sql`UPDATE links SET status = 'pending' WHERE code = ${pending}`;
    for (const [path, ip] of [
      ['NoSuchCode', '192.0.2.70'],
      ['a.b', '192.0.2.71'],
      [pending, '192.0.2.72'],
    ] as const) {
      const res = await report(path, ip);
      assert.equal(res.status, 404, path);
      assert.match(res.headers.get('Content-Type') ?? '', /problem\+json/);
    }
  });

  test('bad bodies are 400 problems and store nothing', async () => {
    const code = await create('https://example.com/bad-bodies');
    const cases: [unknown, string][] = [
      ['{not json', 'application/json'],
      ['', 'application/json'],
      [{}, 'application/json'],
      [{ reason: '' }, 'application/json'],
      [{ reason: '   ' }, 'application/json'],
      [{ reason: 5 }, 'application/json'],
      [{ reason: 'x'.repeat(501) }, 'application/json'],
      [{ reason: 'ok', extra: true }, 'application/json'],
      [[], 'application/json'],
      ['reason=', 'application/x-www-form-urlencoded'],
      ['other=1', 'application/x-www-form-urlencoded'],
      ['reason: spam', 'text/plain'],
    ];
    for (const [i, [body, type]] of cases.entries()) {
      const res = await report(code, `10.0.0.${i}`, body, type);
      assert.equal(res.status, 400, `${type} ${JSON.stringify(body)}: ${await res.clone().text()}`);
      assert.match(res.headers.get('Content-Type') ?? '', /problem\+json/);
    }
    const big = await report(code, '10.0.1.1', { reason: 'x'.repeat(5000) });
    assert.equal(big.status, 413);
    assert.equal((await listReports(h.db.sql, code)).length, 0);
  });

  test('reports are rate-limited per client IP', async () => {
    const codes = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => create(`https://example.com/limit-${i}`)));
    for (const code of codes.slice(0, 5)) assert.equal((await report(code, '192.0.2.99')).status, 202);
    const limited = await report(codes[5]!, '192.0.2.99');
    assert.equal(limited.status, 429);
    assert.match(limited.headers.get('Retry-After') ?? '', /^\d+$/);
    assert.equal((await report(codes[5]!, '192.0.2.100')).status, 202, 'another reader is not limited');
  });
});
