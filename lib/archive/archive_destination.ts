// The steps of keeping an archived copy of a link's destination, one per activity of
// workflows/archive_destination.ts (its only caller): decide, ask Save Page Now, poll the capture, or look the
// closest existing snapshot up. Each result is written only while the link still points at the URL it was asked
// for (a retarget resets the row), so a late answer about an old target changes nothing.
import { PermanentFailure, TransientFailure } from '../shared/errors.ts';
import {
  ensureDestinationRow,
  getDestinationState,
  recordArchiveRequested,
  recordArchiveResult,
} from '../stores/destination_state_store.ts';
import { getLinkByCode } from '../stores/link_store.ts';
import { listWordPressSiteRows } from '../stores/wordpress_site_store.ts';
import { canonicalizeTarget } from '../targets/canonical_url.ts';
import type { ArchiveDeps } from './archive_deps.ts';
import { destinationHost } from './own_hosts.ts';

export type ArchivePlan = { action: 'skip'; reason: string } | { action: 'save' | 'lookup'; url: string };

/**
 * What to do for `code`'s destination now: nothing (no live link, ARCHIVE_MODE=off, one of our own hosts, a
 * copy of this URL already kept), a Save Page Now capture (ARCHIVE_MODE=save), or a lookup of the closest
 * snapshot. Makes the destination row describe the link's current target first.
 */
export async function beginDestinationArchive(
  deps: ArchiveDeps,
  input: { code: string },
): Promise<ArchivePlan> {
  const link = await getLinkByCode(deps.sql, input.code);
  if (!link || link.deletedAt || link.status === 'gone' || link.status === 'blocked') {
    return { action: 'skip', reason: 'no live link' };
  }
  const url = link.targetUrl;
  const host = destinationHost(url);
  if (!host) return { action: 'skip', reason: 'no host' };
  await ensureDestinationRow(deps.sql, { code: input.code, url, host });
  if (deps.archive.isOwnHost(host) || (await isWordPressSiteHost(deps, host))) {
    await recordArchiveResult(deps.sql, { code: input.code, url, state: 'skipped' });
    return { action: 'skip', reason: 'own host' };
  }
  if (deps.archive.mode === 'off' || !deps.archive.internetArchive)
    return { action: 'skip', reason: 'ARCHIVE_MODE=off' };
  const state = await getDestinationState(deps.sql, input.code);
  if (state && state.url === url && (state.archiveState === 'saved' || state.archiveState === 'found')) {
    return { action: 'skip', reason: 'already kept' };
  }
  return { action: deps.archive.mode === 'save' ? 'save' : 'lookup', url };
}

/**
 * Whether `host` is one of the newsroom's WordPress sites (the host of a restUrl its signed events carried):
 * our own articles, never sent to the Archive even when SAFETY_TRUSTED_HOSTS does not name them.
 */
async function isWordPressSiteHost(deps: ArchiveDeps, host: string): Promise<boolean> {
  const sites = await listWordPressSiteRows(deps.sql);
  return sites.some((site) => {
    const siteHost = destinationHost(site.restUrl);
    return siteHost !== null && (host === siteHost || host.endsWith(`.${siteHost}`));
  });
}

/**
 * A snapshot URL as a link may answer it: canonical (the form every stored target has, which the resolver checks
 * before a record enters its cache), or null when it has none.
 */
function canonicalSnapshotUrl(url: string): string | null {
  const canonical = canonicalizeTarget(url);
  return canonical.ok ? canonical.url : null;
}

/** Counts a failure of the Archive under its outcome and passes it on (the workflow retries or moves on). */
function countFailure(deps: ArchiveDeps, error: unknown): never {
  if (error instanceof TransientFailure) {
    deps.archive.count(error.kind === 'ArchiveRateLimited' ? 'rate_limited' : 'unavailable');
  } else if (error instanceof PermanentFailure) {
    deps.archive.count('refused');
  }
  throw error;
}

function archiveOf(deps: ArchiveDeps) {
  const client = deps.archive.internetArchive;
  if (!client) throw new PermanentFailure('ARCHIVE_MODE is off', 'ArchiveOff');
  return client;
}

/** Asks Save Page Now to capture `url`; records the job. A 429 is retried by the workflow after Retry-After. */
export async function requestArchiveSave(
  deps: ArchiveDeps,
  input: { code: string; url: string },
): Promise<{ jobId: string }> {
  const client = archiveOf(deps);
  let jobId: string;
  try {
    ({ jobId } = await client.requestSave(input.url));
  } catch (error) {
    countFailure(deps, error);
  }
  await recordArchiveRequested(deps.sql, { code: input.code, url: input.url, jobId });
  return { jobId };
}

/** Polls a capture: `pending`, or its end recorded (`saved` with the snapshot, `failed`). */
export async function checkArchiveSave(
  deps: ArchiveDeps,
  input: { code: string; url: string; jobId: string },
): Promise<{ state: 'pending' | 'saved' | 'failed'; detail?: string }> {
  const client = archiveOf(deps);
  let status: Awaited<ReturnType<typeof client.saveStatus>>;
  try {
    status = await client.saveStatus(input.jobId);
  } catch (error) {
    countFailure(deps, error);
  }
  if (status.state === 'pending') return { state: 'pending' };
  if (status.state === 'error') {
    deps.archive.count('failed');
    deps.logger.info(
      { code: input.code, statusExt: status.statusExt },
      'Save Page Now could not capture a destination',
    );
    return { state: 'failed', detail: status.statusExt };
  }
  const snapshotUrl = canonicalSnapshotUrl(status.snapshotUrl);
  if (!snapshotUrl) {
    deps.archive.count('failed');
    return { state: 'failed', detail: 'the snapshot URL is not one a link may answer' };
  }
  deps.archive.count('saved');
  await recordArchiveResult(deps.sql, {
    code: input.code,
    url: input.url,
    state: 'saved',
    archiveUrl: snapshotUrl,
    archiveAt: status.capturedAt,
  });
  return { state: 'saved' };
}

/** Looks the closest existing snapshot of `url` up (the newest) and records it, or that there is none. */
export async function findArchiveSnapshot(
  deps: ArchiveDeps,
  input: { code: string; url: string },
): Promise<{ state: 'found' | 'missing' }> {
  const client = archiveOf(deps);
  let snapshot: Awaited<ReturnType<typeof client.closestSnapshot>>;
  try {
    snapshot = await client.closestSnapshot(input.url);
  } catch (error) {
    countFailure(deps, error);
  }
  const snapshotUrl = snapshot ? canonicalSnapshotUrl(snapshot.url) : null;
  if (!snapshot || !snapshotUrl) {
    deps.archive.count('missing');
    await recordArchiveResult(deps.sql, { code: input.code, url: input.url, state: 'missing' });
    return { state: 'missing' };
  }
  deps.archive.count('found');
  await recordArchiveResult(deps.sql, {
    code: input.code,
    url: input.url,
    state: 'found',
    archiveUrl: snapshotUrl,
    archiveAt: snapshot.capturedAt,
  });
  return { state: 'found' };
}

/** Records that no copy could be had after every retry (an earlier copy of the same URL is kept). */
export async function recordArchiveFailed(
  deps: ArchiveDeps,
  input: { code: string; url: string },
): Promise<void> {
  await recordArchiveResult(deps.sql, { code: input.code, url: input.url, state: 'failed' });
}
