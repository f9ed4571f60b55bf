// The last run of one kind (reconciliation, drill): its status, times, report facts and workflow.
import type { I18n } from '../../lib/i18n/translator.ts';
import type { OpsRun as OpsRunRow } from '../../lib/operations/ops_runs.ts';
import { Badge } from '../Badge.tsx';
import { DirIcon, useI18n } from '../I18n.tsx';
import { vendorName } from '../link_fields.ts';

const RUN_TONE: Record<OpsRunRow['status'], string> = {
  running: 'neutral',
  succeeded: 'good',
  failed: 'bad',
  cancelled: 'muted',
};
const REPORT_KEYS = [
  'to',
  'requestedBy',
  'reason',
  'repair',
  'read',
  'durationMs',
  'linksPerSecond',
  'verified',
  'unverified',
  'drill',
  'switched',
  'dns',
  'automatedMs',
  'estimatedFailoverMs',
  'error',
] as const;

/** A run report's field name for people ("linksPerSecond" → "links per second"). */
function reportKey(i18n: I18n, key: string): string {
  const known = REPORT_KEYS.find((k) => k === key);
  return known ? i18n.t(`report.${known}`) : key.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}

/** A run report's value for people: numbers and yes/no in the editor's language, fronts by name. */
function reportValue(i18n: I18n, key: string, value: string | number | boolean): string {
  if (typeof value === 'boolean') return value ? i18n.t('common.yes') : i18n.t('common.no');
  if (typeof value === 'number') return i18n.number(value);
  if (key === 'requestedBy' && value === 'schedule') return i18n.t('ops.requestedBySchedule');
  return key === 'to' ? vendorName(i18n, value) : value;
}

export function RunCard(props: {
  title: string;
  run: OpsRunRow | undefined;
  timeZone: string;
  empty: string;
  temporalUrl: string | null;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { run } = props;
  // The six facts shown: known keys in REPORT_KEYS order (who asked comes before the timings), then the rest
  // in the order stored (jsonb's: shorter keys first).
  const rank = (key: string) => {
    const i = (REPORT_KEYS as readonly string[]).indexOf(key);
    return i < 0 ? REPORT_KEYS.length : i;
  };
  const facts = run
    ? Object.entries(run.report)
        .filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v))
        .sort(([a], [b]) => rank(a) - rank(b))
        .slice(0, 6)
    : [];
  return (
    <section class="card status-card" aria-label={props.title}>
      <h2 class="eyebrow">{props.title}</h2>
      {run ? (
        <>
          <p class="status-main">
            <Badge tone={RUN_TONE[run.status]} text={t(`ops.run.${run.status}`)} />
          </p>
          <p class="muted small">
            {t('ops.started', { time: i18n.dateTime(run.startedAt) })}
            {run.finishedAt ? ` · ${t('ops.finished', { time: i18n.dateTime(run.finishedAt) })}` : ''}
          </p>
          {facts.length > 0 && (
            <dl class="facts facts-compact">
              {facts.map(([k, v]) => (
                <div class="fact" key={k}>
                  <dt>{reportKey(i18n, k)}</dt>
                  <dd>
                    <bdi dir="auto">{reportValue(i18n, k, v as string | number | boolean)}</bdi>
                  </dd>
                </div>
              ))}
            </dl>
          )}
          {props.temporalUrl ? (
            <a
              class="small mono url-break"
              dir="ltr"
              href={`${props.temporalUrl}?query=${encodeURIComponent(`WorkflowId="${run.workflowId}"`)}`}
              target="_blank"
              rel="noopener noreferrer"
            >
              {run.workflowId} <DirIcon glyph="↗" />
            </a>
          ) : (
            <p class="muted small mono url-break" dir="ltr">
              {run.workflowId}
            </p>
          )}
        </>
      ) : (
        <p class="muted">{props.empty}</p>
      )}
    </section>
  );
}
