// The black-box prober on the operations page: is the short domain answering as Postgres says, and the latest
// incidents with the failure that opened each (docs/OPERATIONS.md, "The prober").
import type { ProbeOverview } from '../../lib/prober/probe_overview.ts';
import { Badge } from '../Badge.tsx';
import { useI18n } from '../I18n.tsx';

export function ProbeCard(props: { probes: ProbeOverview }) {
  const i18n = useI18n();
  const { t } = i18n;
  const { probes } = props;
  const open = probes.incidents.find((incident) => incident.closedAt === null);
  return (
    <section class="card" id="probes" aria-labelledby="probes-title">
      <h2 id="probes-title">{t('ops.probes')}</h2>
      <p class="muted">
        {probes.interval ? (
          <>
            {t('ops.probesLead', { interval: probes.interval, sample: probes.sample })}{' '}
            <bdi class="mono url-break" dir="ltr">
              {probes.baseUrl}
            </bdi>
          </>
        ) : (
          t('ops.probesOff')
        )}
      </p>
      <p class="status-main">
        {open ? (
          <Badge tone="bad" text={t('ops.probeIncidentOpen')} />
        ) : (
          <Badge tone="good" text={t('ops.probeNoIncident')} />
        )}
      </p>
      {probes.incidents.length === 0 ? (
        <p class="muted">{t('ops.noProbeIncidents')}</p>
      ) : (
        <ul class="probe-incidents">
          {probes.incidents.map((incident) => (
            <li key={incident.id} data-incident={incident.id}>
              <p>
                {incident.closedAt
                  ? t('ops.probeIncidentClosed', {
                      opened: i18n.dateTime(incident.openedAt),
                      closed: i18n.dateTime(incident.closedAt),
                    })
                  : t('ops.probeIncidentSince', { opened: i18n.dateTime(incident.openedAt) })}{' '}
                {t('ops.probeIncidentCounts', { mismatches: incident.mismatches, errors: incident.errors })}
              </p>
              <p class="muted small">
                <bdi class="mono" dir="ltr">
                  {incident.firstFailure.code}
                </bdi>
                {': '}
                {t('ops.probeExpected')}{' '}
                <bdi class="mono url-break" dir="ltr">
                  {incident.firstFailure.expected}
                </bdi>
                {' · '}
                {t('ops.probeActual')}{' '}
                <bdi class="mono url-break" dir="ltr">
                  {incident.firstFailure.actual}
                </bdi>
              </p>
            </li>
          ))}
        </ul>
      )}
      <p class="muted small">
        {probes.drillInterval
          ? t('ops.drillSchedule', { interval: probes.drillInterval })
          : t('ops.drillScheduleOff')}
      </p>
    </section>
  );
}
