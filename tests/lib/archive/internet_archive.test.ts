// The Internet Archive client against the fake, which reproduces SPN2 and the availability API: the fake's contract
// (auth header, job id, status polling pending → success, 429 with Retry-After, errors) and the client's reading
// of it (typed failures the workflow retries or gives up on).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type InternetArchiveFake,
  startInternetArchiveFake,
} from '../../../devkit/fakes/internet_archive_fake.ts';
import {
  createInternetArchive,
  type InternetArchive,
  parseWaybackTimestamp,
} from '../../../lib/archive/internet_archive.ts';
import { PermanentFailure, TransientFailure } from '../../../lib/shared/errors.ts';
import { createOutgoingFetch } from '../../../lib/shared/outgoing_request.ts';

const TARGET = 'https://elsewhere.example/2026/story';

let fake: InternetArchiveFake;
let archive: InternetArchive;

function client(keys = { accessKey: fake.accessKey, secretKey: fake.secretKey }): InternetArchive {
  return createInternetArchive({
    saveBaseUrl: fake.baseUrl,
    availabilityBaseUrl: fake.baseUrl,
    keys,
    // The base URLs are settings: the outgoing-request rule applies, loopback allowed as tests allow it.
    fetch: createOutgoingFetch({ allowPrivate: ['127.0.0.0/8'] }),
  });
}

before(async () => {
  fake = await startInternetArchiveFake();
  archive = client();
});
after(() => fake.close());

describe('the fake speaks SPN2 as the Archive does', () => {
  test('POST /save needs "Authorization: LOW key:secret" and a form url; answers {url, job_id}', async () => {
    const unauthorised = await fetch(`${fake.baseUrl}/save`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: 'LOW wrong:keys' },
      body: `url=${encodeURIComponent(TARGET)}`,
    });
    assert.equal(unauthorised.status, 401);
    const ok = await fetch(`${fake.baseUrl}/save`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Accept: 'application/json',
        Authorization: `LOW ${fake.accessKey}:${fake.secretKey}`,
      },
      body: `url=${encodeURIComponent(TARGET)}`,
    });
    assert.equal(ok.status, 200);
    const body = (await ok.json()) as { url: string; job_id: string };
    assert.equal(body.url, TARGET);
    assert.match(body.job_id, /^spn2-[0-9a-f]{40}$/);
    const status = await fetch(`${fake.baseUrl}/save/status/${body.job_id}`, {
      headers: { Authorization: 'LOW wrong:keys' },
    });
    assert.equal(status.status, 401, 'the status endpoint checks the keys too');
  });

  test('a missing url is a 400 with status_ext', async () => {
    const res = await fetch(`${fake.baseUrl}/save`, {
      method: 'POST',
      headers: { Authorization: `LOW ${fake.accessKey}:${fake.secretKey}` },
      body: 'url=',
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { status_ext: string }).status_ext, 'error:invalid-url-syntax');
  });
});

describe('the client', () => {
  test('a capture: job id, pending while the Archive works, then success with the snapshot', async () => {
    fake.pendingPolls = 2;
    const { jobId } = await archive.requestSave(TARGET);
    assert.deepEqual(await archive.saveStatus(jobId), { state: 'pending' });
    assert.deepEqual(await archive.saveStatus(jobId), { state: 'pending' });
    const done = await archive.saveStatus(jobId);
    assert.equal(done.state, 'success');
    assert.ok(done.state === 'success');
    assert.match(
      done.snapshotUrl,
      /^https:\/\/web\.archive\.org\/web\/\d{14}\/https:\/\/elsewhere\.example\/2026\/story$/,
    );
    assert.ok(Math.abs(done.capturedAt.getTime() - Date.now()) < 60_000);
    const asked = fake.requests.filter((r) => r.path === '/save' && r.status === 200).at(-1);
    assert.equal(asked?.url, TARGET, 'the form carried the URL');
    fake.pendingPolls = 1;
  });

  test('a capture the Archive cannot make ends in error with its status_ext', async () => {
    const url = 'https://elsewhere.example/blocked';
    fake.failCapture(url, 'error:blocked-url');
    fake.pendingPolls = 0;
    const { jobId } = await archive.requestSave(url);
    assert.deepEqual(await archive.saveStatus(jobId), { state: 'error', statusExt: 'error:blocked-url' });
    fake.pendingPolls = 1;
  });

  test('429 is a transient failure that waits for Retry-After', async () => {
    fake.rateLimitNext(1, 7);
    await assert.rejects(archive.requestSave(TARGET), (error: unknown) => {
      assert.ok(error instanceof TransientFailure);
      assert.equal(error.kind, 'ArchiveRateLimited');
      assert.equal(error.retryAfterMs, 7_000);
      return true;
    });
    assert.equal(fake.requests.at(-1)?.status, 429);
    // The next request goes through.
    assert.match((await archive.requestSave(TARGET)).jobId, /^spn2-/);
  });

  test('an outage is transient; refused keys are permanent (never retried)', async () => {
    fake.failNext('save', 503);
    await assert.rejects(archive.requestSave(TARGET), (error: unknown) => {
      assert.ok(error instanceof TransientFailure);
      assert.equal(error.kind, 'ArchiveUnavailable');
      return true;
    });
    await assert.rejects(
      client({ accessKey: 'nope', secretKey: 'nope' }).requestSave(TARGET),
      (error: unknown) => {
        assert.ok(error instanceof PermanentFailure);
        assert.equal(error.kind, 'ArchiveKeys');
        return true;
      },
    );
    fake.failNext('status', 502);
    await assert.rejects(archive.saveStatus('spn2-whatever'), TransientFailure);
  });

  test('an unknown job is an error status, not a success', async () => {
    const status = await archive.saveStatus('spn2-unknown');
    assert.deepEqual(status, { state: 'error', statusExt: 'error:not-found' });
  });

  test('availability: the closest snapshot (https), none, and snapshots of error pages ignored', async () => {
    const url = 'https://www.elsewhere.example/old';
    assert.equal(await archive.closestSnapshot(url), null);
    fake.addSnapshot('http://elsewhere.example/old', '20240101120000');
    fake.addSnapshot('https://elsewhere.example/old/', '20251231235959');
    const newest = await archive.closestSnapshot(url);
    assert.equal(newest?.url, 'https://web.archive.org/web/20251231235959/https://elsewhere.example/old/');
    assert.equal(newest?.capturedAt.toISOString(), '2025-12-31T23:59:59.000Z');
    const older = await archive.closestSnapshot(url, new Date('2024-02-01T00:00:00Z'));
    assert.equal(older?.url, 'https://web.archive.org/web/20240101120000/http://elsewhere.example/old');
    fake.addSnapshot('https://elsewhere.example/error', '20250101000000', '404');
    assert.equal(await archive.closestSnapshot('https://elsewhere.example/error'), null);
    fake.failNext('available', 503);
    await assert.rejects(archive.closestSnapshot(url), TransientFailure);
    const asked = fake.requests.filter((r) => r.path === '/wayback/available').map((r) => r.url);
    assert.ok(asked.includes(url));
  });

  test('Save Page Now without keys refuses before any request', async () => {
    const before = fake.requests.length;
    const keyless = createInternetArchive({
      saveBaseUrl: fake.baseUrl,
      availabilityBaseUrl: fake.baseUrl,
      keys: undefined,
      fetch: createOutgoingFetch({ allowPrivate: ['127.0.0.0/8'] }),
    });
    await assert.rejects(keyless.requestSave(TARGET), PermanentFailure);
    assert.equal(fake.requests.length, before);
  });

  test('the outgoing-request rule applies to the configured base URLs', async () => {
    const strict = createInternetArchive({
      saveBaseUrl: fake.baseUrl,
      availabilityBaseUrl: fake.baseUrl,
      keys: { accessKey: fake.accessKey, secretKey: fake.secretKey },
      fetch: createOutgoingFetch({ allowPrivate: [] }),
    });
    await assert.rejects(strict.closestSnapshot(TARGET), (error: unknown) => {
      assert.ok(error instanceof PermanentFailure);
      assert.equal(error.kind, 'ArchiveRefused');
      return true;
    });
  });

  test('Wayback timestamps', () => {
    assert.equal(parseWaybackTimestamp('20130919044612')?.toISOString(), '2013-09-19T04:46:12.000Z');
    assert.equal(parseWaybackTimestamp('20130919')?.toISOString(), '2013-09-19T00:00:00.000Z');
    assert.equal(parseWaybackTimestamp('2013-09-19'), null);
    assert.equal(parseWaybackTimestamp(20130919), null);
  });
});
