import type { EscrowOverview, EscrowRun } from '../lib/escrow/get_escrow_overview.ts';
import { formatDateTime } from '../lib/ui/time_zone.ts';
import { Badge } from './Badge.tsx';
import { CsrfField } from './Field.tsx';

const RUN_TONE: Record<EscrowRun['status'], string> = {
  running: 'neutral',
  succeeded: 'good',
  failed: 'bad',
};

function formatBytes(bytes: number): string {
  if (bytes >= 1 << 30) return `${(bytes / (1 << 30)).toFixed(1)} GiB`;
  if (bytes >= 1 << 20) return `${(bytes / (1 << 20)).toFixed(1)} MiB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KiB`;
}

function LastRun(props: { run: EscrowRun | null; timeZone: string; what: string }) {
  const { run } = props;
  if (!run) return <p class="muted small">No {props.what} has run yet.</p>;
  const summary = run.summary as { links?: number; answers?: number; durationMs?: number };
  const count = summary.links ?? summary.answers;
  return (
    <p class="small">
      <Badge tone={RUN_TONE[run.status]} text={run.status[0]!.toUpperCase() + run.status.slice(1)} /> Last{' '}
      {props.what} started {formatDateTime(run.startedAt, props.timeZone)}
      {count !== undefined
        ? ` · ${count.toLocaleString('en')} ${summary.links !== undefined ? 'links' : 'codes'}`
        : ''}
      {summary.durationMs !== undefined ? ` · ${(summary.durationMs / 1000).toFixed(1)} s` : ''}
      {run.error ? ` · ${run.error}` : ''}
      <br />
      <span class="mono muted">{run.directory}</span>
    </p>
  );
}

/**
 * Escrow exports (download the latest, export now) and the static last-resort snapshot (generate now), for
 * admins on the operations page.
 */
export function EscrowCard(props: { escrow: EscrowOverview; timeZone: string; csrfToken: string }) {
  const { escrow, timeZone, csrfToken } = props;
  const latest = escrow.export.latest;
  return (
    <section class="card" id="escrow" aria-labelledby="escrow-title">
      <h2 id="escrow-title">Escrow and static snapshot</h2>
      <div class="grid-2">
        <div class="subform">
          <h3>Escrow export</h3>
          <p class="small muted">
            Every link (deleted codes too), vendor mappings, reports, the blocklist and history as JSON lines
            with a manifest of SHA-256s: enough to restore every answer with <code>npm run restore</code>.{' '}
            {escrow.export.interval
              ? `Written every ${escrow.export.interval} to ${escrow.export.dir}, the last ${escrow.export.keep} kept.`
              : 'No schedule (ESCROW_INTERVAL is not set).'}
          </p>
          <LastRun run={escrow.export.lastRun} timeZone={timeZone} what="export" />
          {latest ? (
            <p>
              <a
                class="btn btn-secondary btn-sm"
                href="/ui/ops/escrow/latest.tar"
                download={`${latest.folder}.tar`}
              >
                Download the latest export (.tar, {formatBytes(latest.bytes)})
              </a>
              <span class="muted small">
                {' '}
                {latest.links.toLocaleString('en')} links as of{' '}
                {formatDateTime(new Date(latest.snapshotAt), timeZone)}
              </span>
            </p>
          ) : (
            <p class="muted small">Nothing to download: {escrow.export.unavailable}.</p>
          )}
          <form method="post" action="/ui/ops/escrow/export" class="inline-form">
            <CsrfField token={csrfToken} />
            <button type="submit" class="btn btn-secondary btn-sm" disabled={!escrow.export.dir}>
              Export now
            </button>
          </form>
        </div>
        <div class="subform">
          <h3>Static last-resort snapshot</h3>
          <p class="small muted">
            Every code's answer as files nginx or a CDN serves without Lifeline (
            {escrow.snapshot.formats.join(', ')}
            ). A snapshot is frozen at its time: regenerate it to follow edits and expiries.{' '}
            {escrow.snapshot.interval
              ? `Regenerated every ${escrow.snapshot.interval} into ${escrow.snapshot.dir}/current.`
              : 'No schedule (SNAPSHOT_INTERVAL is not set).'}
          </p>
          <LastRun run={escrow.snapshot.lastRun} timeZone={timeZone} what="snapshot" />
          <form method="post" action="/ui/ops/escrow/snapshot" class="inline-form">
            <CsrfField token={csrfToken} />
            <button type="submit" class="btn btn-secondary btn-sm" disabled={!escrow.snapshot.dir}>
              Generate the snapshot now
            </button>
          </form>
        </div>
      </div>
    </section>
  );
}
