// The archived copy of a destination through the real path: a link created or retargeted through the API starts
// `archive:{code}` on a real worker, which asks the Internet Archive fake (SPN2 and availability, over HTTP) and
// records the copy in destination_states. Rate limits are waited out by the workflow, never by the request.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type InternetArchiveFake,
  startInternetArchiveFake,
} from '../../devkit/fakes/internet_archive_fake.ts';
import { createHarness, createLinkCode, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { getDestinationState } from '../../lib/stores/destination_state_store.ts';
import type { ArchiveDestinationReport } from '../../workflows/contract.ts';

let h: Harness;
let fake: InternetArchiveFake;

before(async () => {
  fake = await startInternetArchiveFake();
  h = await createHarness({
    env: {
      ARCHIVE_MODE: 'save',
      ARCHIVE_ACCESS_KEY: fake.accessKey,
      ARCHIVE_SECRET_KEY: fake.secretKey,
      ARCHIVE_SAVE_BASE_URL: fake.baseUrl,
      ARCHIVE_AVAILABILITY_BASE_URL: fake.baseUrl,
      SAFETY_TRUSTED_HOSTS: 'newsroom.example',
    },
  });
  await h.startWorker();
});
after(async () => {
  await h.close();
  await fake.close();
});

const handle = (code: string) => h.temporal.client.workflow.getHandle(`archive:${code}`);

/** The report of the newest `archive:{code}` run (waits for the start, which follows the API's answer). */
async function archived(code: string): Promise<ArchiveDestinationReport> {
  await eventually(async () => ((await handle(code).describe()) ? true : undefined), {
    what: 'archive workflow',
  });
  return (await handle(code).result()) as ArchiveDestinationReport;
}

describe('archiveDestinationWorkflow', () => {
  test('a new link to another site is saved by Save Page Now: job polled to success, snapshot recorded', async () => {
    const url = 'https://elsewhere.example/2026/12/story';
    const code = await createLinkCode(h, { url });
    assert.deepEqual(await archived(code), { outcome: 'saved', url });
    const state = await getDestinationState(h.db.sql, code);
    assert.equal(state?.url, url);
    assert.equal(state?.archiveState, 'saved');
    assert.match(
      state?.archiveUrl ?? '',
      /^https:\/\/web\.archive\.org\/web\/\d{14}\/https:\/\/elsewhere\.example\/2026\/12\/story$/,
    );
    assert.ok(state?.archiveAt instanceof Date);
    assert.match(state?.archiveJobId ?? '', /^spn2-/);
    const job = fake.jobs.get(state!.archiveJobId!);
    assert.equal(job?.state, 'success');
    assert.ok((job?.polls ?? 0) >= 2, 'polled while pending, then success');
    const attrs = (await handle(code).describe()).typedSearchAttributes.getAll();
    assert.deepEqual(
      attrs
        .filter((p) => p.key.name.startsWith('Lifeline'))
        .map((p) => [p.key.name, p.value])
        .sort(),
      [
        ['LifelineCode', code],
        ['LifelineKind', 'archive'],
      ],
    );
  });

  test('a 429 is waited out by the workflow (Retry-After), not by the request that created the link', async () => {
    fake.rateLimitNext(2, 1);
    const url = 'https://elsewhere.example/busy';
    const code = await createLinkCode(h, { url });
    const savedWhenAnswered = fake.requests.filter(
      (r) => r.path === '/save' && r.url === url && r.status === 200,
    );
    assert.deepEqual(savedWhenAnswered, [], 'the API answered without waiting for the Archive');
    assert.deepEqual(await archived(code), { outcome: 'saved', url });
    const saves = fake.requests.filter((r) => r.path === '/save' && r.url === url).map((r) => r.status);
    assert.deepEqual(saves, [429, 429, 200]);
    await recordHistory('archiveDestinationWorkflow-rate-limited', `archive:${code}`);
  });

  test('a retarget saves the new destination and resets what was kept of the old one', async () => {
    const code = await createLinkCode(h, { url: 'https://elsewhere.example/first' });
    await archived(code);
    const patched = await h.api(`/api/v1/links/${code}`, {
      method: 'PATCH',
      json: { url: 'https://elsewhere.example/second' },
    });
    assert.equal(patched.status, 200, await patched.clone().text());
    await eventually(
      async () => {
        const state = await getDestinationState(h.db.sql, code);
        return state?.url === 'https://elsewhere.example/second' && state.archiveState === 'saved'
          ? state
          : undefined;
      },
      { what: 'the new destination saved', timeoutMs: 30_000 },
    );
    const state = await getDestinationState(h.db.sql, code);
    assert.match(state?.archiveUrl ?? '', /\/https:\/\/elsewhere\.example\/second$/);
  });

  test('a capture the Archive cannot make falls back to the closest existing snapshot', async () => {
    const url = 'https://elsewhere.example/paywalled';
    fake.failCapture(url, 'error:blocked-url');
    fake.addSnapshot(url, '20250301101010');
    const code = await createLinkCode(h, { url });
    assert.deepEqual(await archived(code), { outcome: 'found', url });
    const state = await getDestinationState(h.db.sql, code);
    assert.equal(state?.archiveState, 'found');
    assert.equal(state?.archiveUrl, `https://web.archive.org/web/20250301101010/${url}`);
    assert.equal(state?.archiveAt?.toISOString(), '2025-03-01T10:10:10.000Z');
    await recordHistory('archiveDestinationWorkflow-capture-failed', `archive:${code}`);
  });

  test('nothing of ours goes to the Archive: a link to the newsroom’s own host is skipped', async () => {
    const before = fake.requests.length;
    const code = await createLinkCode(h, { url: 'https://www.newsroom.example/2026/our-story' });
    assert.deepEqual(await archived(code), { outcome: 'skipped', reason: 'own host' });
    assert.equal(fake.requests.length, before);
    assert.equal((await getDestinationState(h.db.sql, code))?.archiveState, 'skipped');
  });
});
