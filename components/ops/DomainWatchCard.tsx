// What the domain watch last read about our own domains and certificates, and when (lib/domains).
import type { DomainFactView } from '../../lib/domains/domain_watch_overview.ts';
import type { I18n } from '../../lib/i18n/translator.ts';
import { Badge } from '../Badge.tsx';
import { useI18n } from '../I18n.tsx';
import type { OpsView } from './ops_view.ts';

const list = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** The expiry as a person reads it: its date and whole days left, or when it ended. */
function expiry(i18n: I18n, fact: DomainFactView): string | null {
  if (!fact.expiresAt || fact.daysLeft === null) return null;
  return fact.daysLeft < 0
    ? i18n.t('domains.expired', { date: i18n.date(fact.expiresAt) })
    : i18n.t('domains.expires', { date: i18n.date(fact.expiresAt), days: Math.floor(fact.daysLeft) });
}

/** The lines of "what was read" for one fact. */
function readLines(i18n: I18n, fact: DomainFactView): string[] {
  const { t } = i18n;
  const d = fact.detail;
  if (fact.readAt === null) return [];
  switch (fact.fact) {
    case 'registration': {
      if (d.notFound) return [t('domains.notFound')];
      const lines = [expiry(i18n, fact)];
      const statuses = list(d.statuses);
      if (statuses.length > 0) lines.push(t('domains.statuses', { statuses: statuses.join(', ') }));
      if (typeof d.registrar === 'string') lines.push(t('domains.registrar', { name: d.registrar }));
      return lines.filter((l): l is string => l !== null);
    }
    case 'certificate': {
      const lines = [expiry(i18n, fact), t('domains.issuer', { issuer: String(d.issuer ?? '') })];
      lines.push(t('domains.names', { names: list(d.names).join(', ') }));
      if (d.nameMatches === false) lines.push(t('domains.wrongName'));
      if (d.trusted === false) lines.push(t('domains.untrusted', { reason: String(d.trustError ?? '') }));
      return lines.filter((l): l is string => l !== null);
    }
    case 'reputation': {
      const threats = list(d.threats);
      return [
        threats.length > 0 ? t('domains.listed', { threats: threats.join(', ') }) : t('domains.notListed'),
      ];
    }
    case 'dnssec':
      if (d.notFound) return [t('domains.notFound')];
      return [
        fact.ok === null ? t('domains.notShown') : fact.ok ? t('domains.signed') : t('domains.unsigned'),
      ];
    case 'lock': {
      if (d.notFound) return [t('domains.notFound')];
      if (fact.ok === null) return [t('domains.notShown')];
      const locks = list(d.locks);
      return [locks.length > 0 ? t('domains.locks', { locks: locks.join(', ') }) : t('domains.noLock')];
    }
  }
}

/** One row per name and fact: its state, what was read, when; a failed last attempt says so. */
export function DomainWatchCard(props: { domains: NonNullable<OpsView['domains']> }) {
  const i18n = useI18n();
  const { t } = i18n;
  const { interval, facts } = props.domains;
  return (
    <section class="card" id="domains" aria-labelledby="domains-title">
      <h2 id="domains-title">{t('domains.title')}</h2>
      <p class="small muted">
        {interval
          ? t('domains.lead', { interval })
          : i18n.rich('domains.off', { setting: <code dir="ltr">DOMAIN_WATCH_INTERVAL=off</code> })}
      </p>
      {facts.length === 0 ? (
        <p class="muted">{t('domains.none')}</p>
      ) : (
        <table class="data-table">
          <thead>
            <tr>
              <th scope="col">{t('domains.col.name')}</th>
              <th scope="col">{t('domains.col.fact')}</th>
              <th scope="col">{t('domains.col.state')}</th>
              <th scope="col">{t('domains.col.read')}</th>
              <th scope="col">{t('domains.col.when')}</th>
            </tr>
          </thead>
          <tbody>
            {facts.map((fact) => {
              const state = fact.ok === null ? 'unknown' : fact.ok ? 'good' : 'bad';
              return (
                <tr key={`${fact.subject} ${fact.fact}`} data-fact={`${fact.subject} ${fact.fact}`}>
                  <td>
                    <bdi class="mono" dir="ltr">
                      {fact.subject}
                    </bdi>
                  </td>
                  <td>{t(`domains.fact.${fact.fact}`)}</td>
                  <td>
                    <Badge
                      tone={state === 'unknown' ? 'neutral' : state}
                      text={t(`domains.state.${state}`)}
                    />
                  </td>
                  <td class="small">
                    {readLines(i18n, fact).map((line) => (
                      <>
                        <bdi dir="auto">{line}</bdi>
                        <br />
                      </>
                    ))}
                    {fact.error && (
                      <span class="muted">
                        {t('domains.failed', { time: i18n.dateTime(fact.checkedAt), error: fact.error })}
                      </span>
                    )}
                  </td>
                  <td class="small">{fact.readAt ? i18n.dateTime(fact.readAt) : t('domains.never')}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
