import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type SafeBrowsingFake,
  startSafeBrowsingFake,
  TEST_MALWARE_URL,
  TEST_UNWANTED_URL,
} from '../../../devkit/fakes/safe_browsing_fake.ts';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { createSafeBrowsing } from '../../../lib/safety/safe_browsing.ts';
import { createSafetyScanner } from '../../../lib/safety/safety_scanner.ts';
import { nextSafetyVerdict, toScanResult } from '../../../lib/safety/scan_result.ts';
import { insertBlocklistEntry } from '../../../lib/stores/blocklist_store.ts';

let db: TestDatabase;
let fake: SafeBrowsingFake;
before(async () => {
  db = await createTestDatabase();
  fake = await startSafeBrowsingFake();
  await insertBlocklistEntry(db.sql, {
    pattern: 'evil.example',
    kind: 'host',
    reason: 'scam',
    createdBy: 't',
  });
  await insertBlocklistEntry(db.sql, {
    pattern: 'https://files.example/malware/',
    kind: 'url_prefix',
    reason: null,
    createdBy: 't',
  });
});
after(async () => {
  await fake.close();
  await db.drop();
});

describe('SafetyScanner', () => {
  test('the local blocklist blocks a host with its subdomains, and URL prefixes', async () => {
    const scanner = createSafetyScanner({ sql: db.sql });
    const results = await scanner.scanMany([
      'https://evil.example/',
      'https://www.EVIL.example./x',
      'https://notevil.example/',
      'https://files.example/malware/x.exe',
      'https://files.example/clean/x.pdf',
    ]);
    assert.deepEqual(
      results.map((r) => r.verdict),
      ['blocked', 'blocked', 'clean', 'blocked', 'clean'],
    );
    assert.match(results[0]!.findings[0]!.reason, /blocklist as evil.example \(scam\)/);
    assert.ok(results.every((r) => r.complete));
  });

  test('Safe Browsing: malware and phishing block, unwanted software warns, locally blocked URLs are not sent', async () => {
    const scanner = createSafetyScanner({
      sql: db.sql,
      safeBrowsing: createSafeBrowsing({ apiKey: fake.apiKey, apiBaseUrl: fake.baseUrl }),
    });
    fake.requests.length = 0;
    const [malware, unwanted, local, clean] = await scanner.scanMany([
      TEST_MALWARE_URL,
      TEST_UNWANTED_URL,
      'http://127.0.0.1/',
      'https://example.com/',
    ]);
    assert.equal(malware!.verdict, 'blocked');
    assert.match(malware!.findings[0]!.reason, /Safe Browsing lists it as MALWARE/);
    assert.equal(unwanted!.verdict, 'warn');
    assert.equal(local!.verdict, 'blocked');
    assert.equal(clean!.verdict, 'clean');
    assert.deepEqual(fake.requests[0]!.urls, [TEST_MALWARE_URL, TEST_UNWANTED_URL, 'https://example.com/']);
  });

  test('when Safe Browsing is down the result is marked incomplete and local rules still apply', async () => {
    const scanner = createSafetyScanner({
      sql: db.sql,
      safeBrowsing: createSafeBrowsing({ apiKey: fake.apiKey, apiBaseUrl: fake.baseUrl }),
    });
    fake.failNext(503);
    const [clean, lookalike] = await scanner.scanMany(['https://example.com/', 'https://аррӏе.com/']);
    assert.deepEqual([clean!.verdict, clean!.complete], ['clean', false]);
    assert.deepEqual([lookalike!.verdict, lookalike!.complete], ['warn', false]);
  });

  test('trusted hosts (the newsroom own, even on a private address) skip every rule but the scheme', async () => {
    const scanner = createSafetyScanner({ sql: db.sql, trustedHosts: ['127.0.0.1', 'evil.example'] });
    const [local, listed, js] = await scanner.scanMany([
      'http://127.0.0.1:8080/wp/?p=1',
      'https://evil.example/',
      'javascript:alert(1)',
    ]);
    assert.equal(local!.verdict, 'clean');
    assert.equal(listed!.verdict, 'clean');
    assert.equal(js!.verdict, 'blocked');
  });

  test('an incomplete scan never clears a verdict and never verifies an unknown one', () => {
    const cleanButUnverified = toScanResult('https://x.example/', [], false);
    assert.equal(nextSafetyVerdict('blocked', cleanButUnverified), 'blocked');
    assert.equal(nextSafetyVerdict('warn', cleanButUnverified), 'warn');
    assert.equal(nextSafetyVerdict('unknown', cleanButUnverified), 'unknown');
    assert.equal(nextSafetyVerdict('clean', cleanButUnverified), 'clean');
    const warnLocally = toScanResult(
      'https://x.example/',
      [{ verdict: 'warn', rule: 'lookalike', reason: 'r' }],
      false,
    );
    assert.equal(nextSafetyVerdict('unknown', warnLocally), 'warn');
    assert.equal(nextSafetyVerdict('blocked', toScanResult('https://x.example/', [], true)), 'clean');
  });
});
