import type { I18n } from '../lib/i18n/translator.ts';
import type { AdoptionOverview } from '../lib/operations/adoption_overview.ts';
import { Badge } from './Badge.tsx';
import { DirIcon, useI18n } from './I18n.tsx';

const STATUS_TONE: Record<string, string> = {
  running: 'neutral',
  planning: 'neutral',
  planned: 'warn',
  paused: 'warn',
  finished: 'good',
  cancelled: 'muted',
  failed: 'bad',
};

const RUN_STATUSES = [
  'running',
  'planning',
  'planned',
  'paused',
  'finished',
  'succeeded',
  'cancelled',
  'failed',
] as const;
/** A run's status for people (an unknown one as stored). */
export function runStatusText(i18n: Pick<I18n, 't'>, status: string): string {
  const known = RUN_STATUSES.find((s) => s === status);
  return known ? i18n.t(`runStatus.${known}`) : status;
}

const OUTCOMES = [
  'minted',
  'kept',
  'adopted',
  'would-mint',
  'would-keep',
  'would-adopt',
  'rejected',
  'not-published',
  'blocked',
  'deleted',
] as const;
const outcomeText = (i18n: I18n, outcome: string) => {
  const known = OUTCOMES.find((o) => o === outcome);
  return known ? i18n.t(`backfill.outcome.${known}`) : outcome;
};

/** The WordPress plugin's own menu path (its settings page is in English). */
const WORDPRESS_BACKFILL_PATH = 'Settings → Lifeline → “Backfill the archive”';

/** Archive backfills (their progress) and mass retargets, on the operations page. */
export function AdoptionRuns(props: {
  adoption: AdoptionOverview;
  timeZone: string;
  temporalUrl: string | null;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { backfills, retargets, syncQueue, expiryBacklog } = props.adoption;
  const workflowLink = (workflowId: string) =>
    props.temporalUrl ? (
      <a
        class="small mono"
        dir="ltr"
        href={`${props.temporalUrl}?query=${encodeURIComponent(`WorkflowId="${workflowId}"`)}`}
        target="_blank"
        rel="noopener noreferrer"
      >
        {workflowId} <DirIcon glyph="↗" />
      </a>
    ) : (
      <bdi class="muted small mono" dir="ltr">
        {workflowId}
      </bdi>
    );
  return (
    <section class="card" id="adoption" aria-labelledby="adoption-title">
      <h2 id="adoption-title">{t('adoption.title')}</h2>
      {backfills.length === 0 ? (
        <p class="muted">
          {i18n.rich('adoption.none', {
            command: <code dir="ltr">wp lifeline backfill</code>,
            path: <bdi dir="ltr">{WORDPRESS_BACKFILL_PATH}</bdi>,
          })}
        </p>
      ) : (
        <table class="data-table">
          <thead>
            <tr>
              <th scope="col">{t('adoption.col.siteRun')}</th>
              <th scope="col">{t('adoption.col.progress')}</th>
              <th scope="col">{t('adoption.col.outcomes')}</th>
              <th scope="col">{t('adoption.col.status')}</th>
            </tr>
          </thead>
          <tbody>
            {backfills.map((run) => (
              <tr key={`${run.site}:${run.runId}`}>
                <td>
                  <strong>
                    <bdi dir="ltr">{run.site}</bdi>
                  </strong>
                  <br />
                  {workflowLink(run.workflowId)}
                </td>
                <td>
                  <progress value={run.received} max={Math.max(run.total, run.received, 1)} />
                  <br />
                  <span class="small">
                    {t('adoption.progress', {
                      received: run.received,
                      total: run.total,
                      batch: run.lastBatch,
                    })}
                    {run.unpropagated > 0
                      ? ` · ${t('adoption.propagating', { count: run.unpropagated })}`
                      : ''}
                  </span>
                </td>
                <td class="small">
                  {Object.entries(run.outcomes)
                    .map(([outcome, n]) => t('adoption.outcome', { outcome: outcomeText(i18n, outcome), n }))
                    .join(' · ') || '—'}
                </td>
                <td>
                  <Badge tone={STATUS_TONE[run.status] ?? 'neutral'} text={runStatusText(i18n, run.status)} />
                  <br />
                  <span class="muted small">
                    {run.finishedAt
                      ? t('adoption.finished', { time: i18n.dateTime(run.finishedAt) })
                      : t('adoption.updated', { time: i18n.dateTime(run.updatedAt) })}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="small" id="sync-queue">
        {syncQueue.depth === 0 || syncQueue.oldestEnqueuedAt === null
          ? t('adoption.syncQueueEmpty')
          : t('adoption.syncQueue', {
              count: syncQueue.depth,
              retrying: syncQueue.retrying,
              time: i18n.dateTime(syncQueue.oldestEnqueuedAt),
            })}
      </p>
      <p class="small" id="expiry-backlog">
        {expiryBacklog.due === 0
          ? t('adoption.expiryBacklogEmpty')
          : t('adoption.expiryBacklog', {
              count: expiryBacklog.due,
              seconds: Math.round(expiryBacklog.oldestLateSeconds),
            })}
      </p>
      <h3>{t('adoption.retargets')}</h3>
      {retargets.length === 0 ? (
        <p class="muted">{t('adoption.noRetargets')}</p>
      ) : (
        <ul>
          {retargets.map((run) => (
            <li key={run.id}>
              <a href={`/ui/ops/retarget/${run.id}`} class="mono" dir="ltr">
                {run.id}
              </a>{' '}
              <Badge tone={STATUS_TONE[run.status] ?? 'neutral'} text={runStatusText(i18n, run.status)} />{' '}
              <span class="small muted">
                {run.kind === 'undo'
                  ? t('retarget.ruleText.undo', { id: String(run.undoOf) })
                  : ruleTypeText(i18n, String(run.rule.type))}{' '}
                · {i18n.dateTime(run.createdAt)}
              </span>
            </li>
          ))}
        </ul>
      )}
      <p>
        <a class="btn btn-secondary" href="/ui/ops/retarget">
          {t('adoption.massRetarget')}
        </a>{' '}
        <a class="btn btn-secondary" href="/ui/ops/wordpress">
          {t('adoption.wordpressSites')}
        </a>
      </p>
    </section>
  );
}

/** A retarget rule's kind for people. */
export function ruleTypeText(i18n: Pick<I18n, 't'>, type: string): string {
  return type === 'prefix' || type === 'regex' || type === 'csv' ? i18n.t(`retarget.ruleType.${type}`) : type;
}
