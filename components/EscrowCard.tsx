import type { EscrowOverview, EscrowRun } from '../lib/escrow/get_escrow_overview.ts';
import type { I18n } from '../lib/i18n/translator.ts';
import { Badge } from './Badge.tsx';
import { CsrfField } from './Field.tsx';
import { formatDuration } from './FrontChangeSteps.tsx';
import { useI18n } from './I18n.tsx';

const RUN_TONE: Record<EscrowRun['status'], string> = {
  running: 'neutral',
  succeeded: 'good',
  failed: 'bad',
};

function formatBytes(i18n: I18n, bytes: number): string {
  const one = (n: number) => Math.round(n * 10) / 10;
  if (bytes >= 1 << 30) return i18n.t('unit.gib', { n: one(bytes / (1 << 30)) });
  if (bytes >= 1 << 20) return i18n.t('unit.mib', { n: one(bytes / (1 << 20)) });
  return i18n.t('unit.kib', { n: Math.max(1, Math.round(bytes / 1024)) });
}

function LastRun(props: { run: EscrowRun | null; timeZone: string; what: 'export' | 'snapshot' }) {
  const i18n = useI18n();
  const { t } = i18n;
  const { run } = props;
  if (!run)
    return (
      <p class="muted small">{props.what === 'export' ? t('escrow.noExport') : t('escrow.noSnapshot')}</p>
    );
  const summary = run.summary as { links?: number; answers?: number; durationMs?: number };
  const count = summary.links ?? summary.answers;
  const started = i18n.dateTime(run.startedAt);
  return (
    <p class="small">
      <Badge tone={RUN_TONE[run.status]} text={t(`ops.run.${run.status}`)} />{' '}
      {props.what === 'export'
        ? t('escrow.lastExport', { time: started })
        : t('escrow.lastSnapshot', { time: started })}
      {count !== undefined
        ? ` · ${summary.links !== undefined ? t('escrow.links', { count }) : t('escrow.codes', { count })}`
        : ''}
      {summary.durationMs !== undefined ? ` · ${formatDuration(i18n, summary.durationMs)}` : ''}
      {run.error ? (
        <>
          {' · '}
          <bdi dir="auto">{run.error}</bdi>
        </>
      ) : (
        ''
      )}
      <br />
      <bdi class="mono muted" dir="ltr">
        {run.directory}
      </bdi>
    </p>
  );
}

/**
 * Escrow exports (download the latest, export now) and the static last-resort snapshot (generate now), for
 * admins on the operations page.
 */
export function EscrowCard(props: { escrow: EscrowOverview; timeZone: string; csrfToken: string }) {
  const i18n = useI18n();
  const { t } = i18n;
  const { escrow, timeZone, csrfToken } = props;
  const latest = escrow.export.latest;
  return (
    <section class="card" id="escrow" aria-labelledby="escrow-title">
      <h2 id="escrow-title">{t('escrow.title')}</h2>
      <div class="grid-2">
        <div class="subform">
          <h3>{t('escrow.export')}</h3>
          <p class="small muted">
            {i18n.rich('escrow.exportLead', { command: <code dir="ltr">npm run restore</code> })}{' '}
            {escrow.export.interval
              ? t('escrow.exportSchedule', {
                  interval: escrow.export.interval,
                  dir: escrow.export.dir ?? '',
                  keep: escrow.export.keep,
                })
              : t('escrow.noExportSchedule')}
          </p>
          <LastRun run={escrow.export.lastRun} timeZone={timeZone} what="export" />
          {latest ? (
            <p>
              <a
                class="btn btn-secondary btn-sm"
                href="/ui/ops/escrow/latest.tar"
                download={`${latest.folder}.tar`}
              >
                {t('escrow.download', { size: formatBytes(i18n, latest.bytes) })}
              </a>
              <span class="muted small">
                {' '}
                {t('escrow.asOf', {
                  links: t('escrow.links', { count: latest.links }),
                  time: i18n.dateTime(new Date(latest.snapshotAt)),
                })}
              </span>
            </p>
          ) : (
            <p class="muted small">{t('escrow.nothing', { reason: escrow.export.unavailable ?? '' })}</p>
          )}
          <form method="post" action="/ui/ops/escrow/export" class="inline-form">
            <CsrfField token={csrfToken} />
            <button type="submit" class="btn btn-secondary btn-sm" disabled={!escrow.export.dir}>
              {t('escrow.exportNow')}
            </button>
          </form>
        </div>
        <div class="subform">
          <h3>{t('escrow.snapshot')}</h3>
          <p class="small muted">
            {t('escrow.snapshotLead', { formats: escrow.snapshot.formats.join(', ') })}{' '}
            {escrow.snapshot.interval
              ? t('escrow.snapshotSchedule', {
                  interval: escrow.snapshot.interval,
                  dir: `${escrow.snapshot.dir}/current`,
                })
              : t('escrow.noSnapshotSchedule')}
          </p>
          <LastRun run={escrow.snapshot.lastRun} timeZone={timeZone} what="snapshot" />
          <form method="post" action="/ui/ops/escrow/snapshot" class="inline-form">
            <CsrfField token={csrfToken} />
            <button type="submit" class="btn btn-secondary btn-sm" disabled={!escrow.snapshot.dir}>
              {t('escrow.snapshotNow')}
            </button>
          </form>
        </div>
      </div>
    </section>
  );
}
