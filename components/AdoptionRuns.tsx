import type { AdoptionOverview } from '../lib/operations/adoption_overview.ts';
import { formatDateTime } from '../lib/ui/time_zone.ts';
import { Badge } from './Badge.tsx';

const STATUS_TONE: Record<string, string> = {
  running: 'neutral',
  planning: 'neutral',
  planned: 'warn',
  paused: 'warn',
  finished: 'good',
  cancelled: 'muted',
  failed: 'bad',
};

const plural = (n: number, word: string) => `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`;

/** Archive backfills (their progress) and mass retargets, on the operations page. */
export function AdoptionRuns(props: {
  adoption: AdoptionOverview;
  timeZone: string;
  temporalUrl: string | null;
}) {
  const { backfills, retargets } = props.adoption;
  const workflowLink = (workflowId: string) =>
    props.temporalUrl ? (
      <a
        class="small mono"
        href={`${props.temporalUrl}?query=${encodeURIComponent(`WorkflowId="${workflowId}"`)}`}
        target="_blank"
        rel="noopener noreferrer"
      >
        {workflowId} ↗
      </a>
    ) : (
      <span class="muted small mono">{workflowId}</span>
    );
  return (
    <section class="card" id="adoption" aria-labelledby="adoption-title">
      <h2 id="adoption-title">Archive backfill and mass retargets</h2>
      {backfills.length === 0 ? (
        <p class="muted">
          No backfill yet. In WordPress run <code>wp lifeline backfill</code> (or Settings → Lifeline →
          “Backfill the archive”): every published post gets its one code here.
        </p>
      ) : (
        <table class="data-table">
          <thead>
            <tr>
              <th scope="col">Site and run</th>
              <th scope="col">Progress</th>
              <th scope="col">Outcomes</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {backfills.map((run) => (
              <tr key={`${run.site}:${run.runId}`}>
                <td>
                  <strong>{run.site}</strong>
                  <br />
                  {workflowLink(run.workflowId)}
                </td>
                <td>
                  <progress value={run.received} max={Math.max(run.total, run.received, 1)} />
                  <br />
                  <span class="small">
                    {run.received.toLocaleString('en')} / {run.total.toLocaleString('en')} posts · batch{' '}
                    {run.lastBatch}
                    {run.unpropagated > 0 ? ` · ${plural(run.unpropagated, 'link')} still propagating` : ''}
                  </span>
                </td>
                <td class="small">
                  {Object.entries(run.outcomes)
                    .map(([outcome, n]) => `${outcome} ${n.toLocaleString('en')}`)
                    .join(' · ') || '—'}
                </td>
                <td>
                  <Badge tone={STATUS_TONE[run.status] ?? 'neutral'} text={run.status} />
                  <br />
                  <span class="muted small">
                    {run.finishedAt
                      ? `finished ${formatDateTime(run.finishedAt, props.timeZone)}`
                      : `updated ${formatDateTime(run.updatedAt, props.timeZone)}`}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>Mass retargets</h3>
      {retargets.length === 0 ? (
        <p class="muted">None yet.</p>
      ) : (
        <ul>
          {retargets.map((run) => (
            <li key={run.id}>
              <a href={`/ui/ops/retarget/${run.id}`} class="mono">
                {run.id}
              </a>{' '}
              <Badge tone={STATUS_TONE[run.status] ?? 'neutral'} text={run.status} />{' '}
              <span class="small muted">
                {run.kind === 'undo' ? `undo of ${run.undoOf}` : String(run.rule.type)} ·{' '}
                {formatDateTime(run.createdAt, props.timeZone)}
              </span>
            </li>
          ))}
        </ul>
      )}
      <p>
        <a class="btn btn-secondary" href="/ui/ops/retarget">
          Mass retarget…
        </a>
      </p>
    </section>
  );
}
