import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type SafeBrowsingFake,
  startSafeBrowsingFake,
  TEST_MALWARE_URL,
  TEST_UNWANTED_URL,
} from '../../../devkit/fakes/safe_browsing_fake.ts';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import { generateApiKey, getApiKeyDisplayPrefix, hashApiKey } from '../../../lib/auth/api_keys.ts';
import { insertApiKey } from '../../../lib/stores/api_key_store.ts';

let h: Harness;
let fake: SafeBrowsingFake;
let writerKey: string;
before(async () => {
  fake = await startSafeBrowsingFake();
  h = await createHarness({
    env: { SAFE_BROWSING_API_KEY: fake.apiKey, SAFE_BROWSING_API_BASE_URL: fake.baseUrl },
  });
  await h.startWorker();
  writerKey = generateApiKey();
  await insertApiKey(h.db.sql, {
    name: 'writer',
    prefix: getApiKeyDisplayPrefix(writerKey),
    keyHash: await hashApiKey(writerKey),
    scopes: ['links:read', 'links:write'],
    createdBy: 'test',
  });
});
after(async () => {
  await h.close();
  await fake.close();
});

async function problem(res: Response, status: number) {
  assert.equal(res.status, status, await res.clone().text());
  assert.equal(res.headers.get('Content-Type'), 'application/problem+json');
  return (await res.json()) as { type: string; detail: string; errors?: { path: string; message: string }[] };
}

async function createLink(json: Record<string, unknown>) {
  return h.api('/api/v1/links', { method: 'POST', json });
}

describe('safety at creation (POST /api/v1/links)', () => {
  test('a blocked destination is a 422 naming url, and nothing is written', async () => {
    for (const url of [
      TEST_MALWARE_URL,
      'http://127.0.0.1/admin',
      'http://[::ffff:10.0.0.1]/',
      'http://localhost/',
    ]) {
      const body = await problem(await createLink({ url }), 422);
      assert.equal(body.type, 'urn:lifeline:problem:target-blocked');
      assert.equal(body.errors?.[0]?.path, 'url');
      assert.match(body.errors![0]!.message, /^is blocked: /);
    }
    // Odd IPv4 spellings (hex, octal, decimal) are refused before any scan: they have no canonical form.
    const odd = await problem(await createLink({ url: 'http://0x7f.0.0.1/admin' }), 422);
    assert.equal(odd.errors?.[0]?.path, 'url');
    assert.match(odd.errors![0]!.message, /IPv4 host as 127\.0\.0\.1/);
    const [{ count }] = (await h.db.sql`SELECT count(*)::int AS count FROM links`) as unknown as [
      { count: number },
    ];
    assert.equal(count, 0);
  });

  test('a look-alike or unwanted-software destination is created with safety warn and gets the interstitial', async () => {
    for (const url of ['https://аррӏе.com/login', TEST_UNWANTED_URL]) {
      const res = await createLink({ url });
      assert.equal(res.status, 201);
      const link = (await res.json()) as { code: string; safety: string; safetyReason: string };
      assert.equal(link.safety, 'warn');
      assert.ok(link.safetyReason.length > 0);
      const page = await h.app.request(`/${link.code}`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /xn--80ak6aa92e\.com|аррӏе|testsafebrowsing/);
    }
  });

  test('a clean destination is created clean and checked now; the fallback URL must be clean too', async () => {
    const res = await createLink({ url: 'https://example.com/clean' });
    const link = (await res.json()) as { safety: string; safetyCheckedAt: string };
    assert.equal(link.safety, 'clean');
    assert.ok(Date.now() - Date.parse(link.safetyCheckedAt) < 60_000);
    const body = await problem(
      await createLink({
        url: 'https://example.com/a',
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        expiredUrl: 'https://gооgle.com/',
      }),
      422,
    );
    assert.deepEqual(
      body.errors?.map((e) => e.path),
      ['expiredUrl'],
    );
  });
});

describe('safety on edits and batches', () => {
  test('PATCH to a blocked url is a 422 naming url and changes nothing; a new url gets its own verdict', async () => {
    const code = (
      (await (await createLink({ url: 'https://example.com/edit-me' })).json()) as { code: string }
    ).code;
    const blocked = await problem(
      await h.api(`/api/v1/links/${code}`, { method: 'PATCH', json: { url: 'http://10.0.0.5/' } }),
      422,
    );
    assert.equal(blocked.errors?.[0]?.path, 'url');
    const [row] = await h.db.sql`SELECT target_url, safety FROM links WHERE code = ${code}`;
    assert.deepEqual([row!.target_url, row!.safety], ['https://example.com/edit-me', 'clean']);
    const warned = await h.api(`/api/v1/links/${code}`, {
      method: 'PATCH',
      json: { url: 'https://gıthub.com/x' },
    });
    assert.equal(warned.status, 200, await warned.clone().text());
    assert.equal(((await warned.json()) as { safety: string }).safety, 'warn');
    assert.equal((await h.app.request(`/${code}`)).status, 200, 'interstitial');
    const back = await h.api(`/api/v1/links/${code}`, {
      method: 'PATCH',
      json: { url: 'https://example.com/ok' },
    });
    assert.equal(((await back.json()) as { safety: string }).safety, 'clean');
    const fallback = await problem(
      await h.api(`/api/v1/links/${code}`, { method: 'PATCH', json: { expiredUrl: TEST_MALWARE_URL } }),
      422,
    );
    assert.equal(fallback.errors?.[0]?.path, 'expiredUrl');
  });

  test('a batch scans all its destinations at once: a blocked item fails alone', async () => {
    const before = fake.requests.length;
    const res = await h.api('/api/v1/links/batch', {
      method: 'POST',
      json: {
        links: [
          { url: 'https://example.com/batch-1' },
          { url: TEST_MALWARE_URL },
          { url: 'https://pаypal.com/batch' },
          { url: 'http://127.0.0.1/batch' },
        ],
      },
    });
    assert.equal(res.status, 200, await res.clone().text());
    const { results } = (await res.json()) as {
      results: {
        index: number;
        status: number;
        link?: { safety: string };
        error?: { errors?: { path: string }[] };
      }[];
    };
    assert.deepEqual(
      results.map((r) => [r.status, r.link?.safety ?? r.error?.errors?.[0]?.path]),
      [
        [201, 'clean'],
        [422, 'url'],
        [201, 'warn'],
        [422, 'url'],
      ],
    );
    assert.equal(fake.requests.length - before, 1, 'one Safe Browsing call for the whole batch');
  });
});

describe('/api/v1/blocklist', () => {
  test('needs an admin key: 401 without a key, 403 with a links:write key', async () => {
    await problem(await h.api('/api/v1/blocklist', { headers: { Authorization: '' } }), 401);
    await problem(
      await h.api('/api/v1/blocklist', { headers: { Authorization: `Bearer ${writerKey}` } }),
      403,
    );
    await problem(
      await h.api('/api/v1/blocklist', {
        method: 'POST',
        json: { pattern: 'x.example' },
        headers: { Authorization: `Bearer ${writerKey}` },
      }),
      403,
    );
  });

  test('bad input is a 422 naming the field; a duplicate is a 409; a missing entry a 404', async () => {
    for (const json of [
      { pattern: 'https://x.example/path', kind: 'host' },
      { pattern: 'bad host name' },
      { pattern: 'x.example:8080' },
      { pattern: 'ftp://x.example/', kind: 'url_prefix' },
      { pattern: '' },
    ]) {
      const body = await problem(await h.api('/api/v1/blocklist', { method: 'POST', json }), 422);
      assert.equal(body.errors?.[0]?.path, 'pattern', JSON.stringify(json));
    }
    const unknown = await problem(
      await h.api('/api/v1/blocklist', { method: 'POST', json: { pattern: 'x.example', colour: 'red' } }),
      422,
    );
    assert.equal(unknown.errors?.[0]?.path, 'colour');
    assert.equal(
      (await h.api('/api/v1/blocklist', { method: 'POST', json: { pattern: '*.Dup.Example.' } })).status,
      201,
    );
    await problem(
      await h.api('/api/v1/blocklist', { method: 'POST', json: { pattern: 'dup.example' } }),
      409,
    );
    await problem(await h.api('/api/v1/blocklist?pattern=none.example', { method: 'DELETE' }), 404);
    await problem(
      await h.api('/api/v1/blocklist', {
        method: 'POST',
        body: '{"pattern":',
        headers: { 'Content-Type': 'application/json' },
      }),
      400,
    );
  });

  test('lists entries in pages', async () => {
    for (const p of ['page-a.example', 'page-b.example', 'page-c.example']) {
      assert.equal(
        (await h.api('/api/v1/blocklist', { method: 'POST', json: { pattern: p, reason: 'spam' } })).status,
        201,
      );
    }
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const res = await h.api(
        `/api/v1/blocklist?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      const page = (await res.json()) as { items: { pattern: string }[]; nextCursor: string | null };
      seen.push(...page.items.map((i) => i.pattern));
      cursor = page.nextCursor;
    }
    assert.ok(['page-a.example', 'page-b.example', 'page-c.example'].every((p) => seen.includes(p)));
    assert.deepEqual(seen, [...seen].sort());
  });

  test('adding an entry blocks existing links to it (451) through a re-scan; removing it releases them', async () => {
    const mk = async (url: string) => ((await (await createLink({ url })).json()) as { code: string }).code;
    const onSite = await mk('https://shady.example/offer');
    const onSub = await mk('https://cdn.shady.example/file.zip');
    const elsewhere = await mk('https://example.org/shady.example');
    assert.equal((await h.app.request(`/${onSite}`)).status, 301);

    const added = await h.api('/api/v1/blocklist', {
      method: 'POST',
      json: { pattern: 'shady.example', reason: 'fake lottery' },
    });
    assert.equal(added.status, 201);
    const entry = (await added.json()) as { pattern: string; kind: string; rescanWorkflowId: string };
    assert.deepEqual([entry.pattern, entry.kind], ['shady.example', 'host']);
    assert.match(entry.rescanWorkflowId, /^rescan:blocklist:\d+$/);
    const report = (await h.temporal.client.workflow.getHandle(entry.rescanWorkflowId).result()) as {
      verified: number;
      changedTo: Record<string, number>;
      work: { scanned: number };
    };
    // Only the targets that contain the host were read: the two links on it, and the one mentioning it.
    assert.deepEqual([report.work.scanned, report.verified, report.changedTo], [3, 3, { blocked: 2 }]);
    assert.equal((await h.app.request(`/${onSite}`)).status, 451);
    assert.equal((await h.app.request(`/${onSub}`)).status, 451);
    assert.equal((await h.app.request(`/${elsewhere}`)).status, 301);
    const link = (await (await h.api(`/api/v1/links/${onSite}`)).json()) as {
      safety: string;
      safetyReason: string;
    };
    assert.equal(link.safety, 'blocked');
    assert.match(link.safetyReason, /blocklist as shady.example \(fake lottery\)/);
    const audit = await h.db.sql`
      SELECT actor, action, before->>'safety' AS before, after->>'safety' AS after FROM audit_log
      WHERE code = ${onSite} AND action = 'link.safety_changed'`;
    assert.deepEqual(
      audit.map((a) => [a.actor, a.before, a.after]),
      [['system:rescan', 'clean', 'blocked']],
    );
    const entryAudit = await h.db.sql`SELECT action FROM audit_log WHERE action LIKE 'blocklist.%'`;
    assert.ok(entryAudit.some((a) => a.action === 'blocklist.added'));
    // The change reached the sync workflow (caches, serving store, vendors).
    await h.temporal.client.workflow.getHandle(`sync:${onSite}`).result();
    const run = await h.db
      .sql`SELECT status, report FROM ops_runs WHERE workflow_id = ${entry.rescanWorkflowId}`;
    assert.equal(run[0]!.status, 'succeeded');
    assert.deepEqual(run[0]!.report.changedTo, { blocked: 2 });

    const removed = await h.api(`/api/v1/blocklist?pattern=${encodeURIComponent('shady.example')}`, {
      method: 'DELETE',
    });
    assert.equal(removed.status, 200);
    const { rescanWorkflowId } = (await removed.json()) as { rescanWorkflowId: string };
    await h.temporal.client.workflow.getHandle(rescanWorkflowId).result();
    assert.equal((await h.app.request(`/${onSite}`)).status, 301);
    assert.equal(
      ((await (await h.api(`/api/v1/links/${onSub}`)).json()) as { safety: string }).safety,
      'clean',
    );
  });

  test('URL-prefix entries round-trip through a percent-encoded DELETE', async () => {
    const res = await h.api('/api/v1/blocklist', {
      method: 'POST',
      json: { pattern: 'HTTPS://Files.Example/bad/' },
    });
    const entry = (await res.json()) as { pattern: string; kind: string };
    assert.deepEqual([entry.pattern, entry.kind], ['https://files.example/bad/', 'url_prefix']);
    await problem(await createLink({ url: 'https://files.example/bad/x.exe' }), 422);
    assert.equal((await createLink({ url: 'https://files.example/good/x.pdf' })).status, 201);
    const del = await h.api(`/api/v1/blocklist?pattern=${encodeURIComponent(entry.pattern)}`, {
      method: 'DELETE',
    });
    assert.equal(del.status, 200);
    assert.equal((await createLink({ url: 'https://files.example/bad/x.exe' })).status, 201);
  });
});

describe('POST /api/v1/safety/check', () => {
  test('reports what the scanner would say, without creating anything', async () => {
    const res = await h.api('/api/v1/safety/check', { method: 'POST', json: { url: TEST_MALWARE_URL } });
    const body = (await res.json()) as { verdict: string; findings: { rule: string }[]; complete: boolean };
    assert.deepEqual(
      [body.verdict, body.findings[0]!.rule, body.complete],
      ['blocked', 'safe_browsing', true],
    );
    await problem(await h.api('/api/v1/safety/check', { method: 'POST', json: { url: 'mailto:x@y' } }), 422);
  });
});

// Last: after a failure the web tier's Safe Browsing client backs off (15 to 30 minutes, as Google asks).
describe('safety at creation while Safe Browsing is down', () => {
  test('Safe Browsing down: the link is created `unknown` (unverified) rather than refused', async () => {
    // Enough failures that a lookup by another client (a worker's scan of an earlier link) cannot take the one
    // this create needs; the web tier's client backs off after its first and asks no more.
    fake.failNext(503, 20);
    const res = await createLink({ url: 'https://example.com/while-google-is-down' });
    assert.equal(res.status, 201);
    const link = (await res.json()) as { safety: string; safetyCheckedAt?: string; safetyReason: string };
    assert.equal(link.safety, 'unknown');
    assert.equal(link.safetyCheckedAt, undefined);
    assert.match(link.safetyReason, /Safe Browsing was unavailable/);
  });
});
