import type { UiSession } from '../lib/auth/sessions.ts';
import type { I18n } from '../lib/i18n/translator.ts';
import type { RetargetRunRow } from '../lib/retarget/request_retarget.ts';
import { runStatusText } from './AdoptionRuns.tsx';
import { AppLayout } from './AppLayout.tsx';
import { describeActor } from './AuditHistory.tsx';
import { Badge } from './Badge.tsx';
import { DisplayUrl } from './DisplayUrl.tsx';
import { CsrfField, Notice, SelectField, TextField } from './Field.tsx';
import { DirIcon, useI18n } from './I18n.tsx';

const STATUS_TONE: Record<string, string> = {
  planning: 'neutral',
  planned: 'warn',
  running: 'neutral',
  paused: 'warn',
  finished: 'good',
  cancelled: 'muted',
  failed: 'bad',
};

const ruleText = (i18n: I18n, run: RetargetRunRow) => {
  const r = run.rule as Record<string, unknown>;
  if (run.kind === 'undo') return i18n.t('retarget.ruleText.undo', { id: String(run.undoOf) });
  if (r.type === 'prefix')
    return i18n.t('retarget.ruleText.prefix', { from: String(r.from), to: String(r.to) });
  if (r.type === 'regex') {
    return i18n.t('retarget.ruleText.regex', {
      pattern: `/${r.pattern}/${r.flags ?? ''}`,
      replacement: String(r.replacement),
    });
  }
  return i18n.t('retarget.ruleText.csv', { rows: Number(r.rows) });
};

/** /ui/ops/retarget: the runs, and the form that plans a new one (a dry run; nothing changes yet). */
export function RetargetListPage(props: {
  session: UiSession;
  timeZone: string;
  runs: RetargetRunRow[];
  values?: Record<string, string>;
  errors?: string[];
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const v = props.values ?? {};
  return (
    <AppLayout title={t('retarget.title')} session={props.session} section="ops">
      <div class="page-header">
        <div>
          <h1>{t('retarget.title')}</h1>
          <p class="muted">{t('retarget.lead')}</p>
        </div>
        <a class="btn btn-secondary" href="/ui/ops">
          <DirIcon glyph="←" /> {t('nav.ops')}
        </a>
      </div>
      {props.errors && props.errors.length > 0 && (
        <Notice tone="bad" title={t('retarget.refused')}>
          <ul>
            {props.errors.map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
        </Notice>
      )}
      <section class="card" aria-labelledby="new-title">
        <h2 id="new-title">{t('retarget.plan')}</h2>
        <form method="post" action="/ui/ops/retarget">
          <CsrfField token={props.session.csrfToken} />
          <SelectField
            name="type"
            label={t('retarget.rule')}
            required
            value={v.type ?? 'prefix'}
            options={[
              { value: 'prefix', label: t('retarget.rule.prefix') },
              { value: 'regex', label: t('retarget.rule.regex') },
              { value: 'csv', label: t('retarget.rule.csv') },
            ]}
          />
          <TextField
            name="from"
            label={t('retarget.from')}
            value={v.from}
            dir="ltr"
            placeholder="https://old.example/news/"
          />
          <TextField
            name="to"
            label={t('retarget.to')}
            value={v.to}
            dir="ltr"
            placeholder="https://www.example/stories/"
          />
          <TextField
            name="pattern"
            label={t('retarget.pattern')}
            value={v.pattern}
            dir="ltr"
            placeholder="^https://old\.example/(\d{4})/(.*)$"
          />
          <TextField name="replacement" label={t('retarget.replacement')} value={v.replacement} dir="ltr" />
          <div class="field">
            <label>
              <input type="checkbox" name="ignoreCase" value="yes" checked={v.ignoreCase === 'yes'} />{' '}
              {t('retarget.ignoreCase')}
            </label>
          </div>
          <div class="field">
            <label for="field-csv">
              {t('retarget.csv')} <span class="optional">{t('retarget.csvNote')}</span>
            </label>
            <textarea id="field-csv" name="csv" rows={6} class="mono" dir="ltr">
              {v.csv ?? ''}
            </textarea>
          </div>
          <div class="field">
            <label>
              <input
                type="checkbox"
                name="excludeWordPress"
                value="yes"
                checked={v.excludeWordPress === 'yes'}
              />{' '}
              {t('retarget.excludeWordPress')}
            </label>
          </div>
          <button class="btn btn-primary" type="submit">
            {t('retarget.planButton')}
          </button>
        </form>
      </section>
      <section class="card" aria-labelledby="runs-title">
        <h2 id="runs-title">{t('retarget.runs')}</h2>
        {props.runs.length === 0 ? (
          <p class="muted">{t('retarget.noRuns')}</p>
        ) : (
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">{t('retarget.col.run')}</th>
                <th scope="col">{t('retarget.col.rule')}</th>
                <th scope="col">{t('retarget.col.status')}</th>
                <th scope="col">{t('retarget.col.asked')}</th>
              </tr>
            </thead>
            <tbody>
              {props.runs.map((run) => (
                <tr key={run.id}>
                  <td>
                    <a class="mono" dir="ltr" href={`/ui/ops/retarget/${run.id}`}>
                      {run.id}
                    </a>
                  </td>
                  <td class="small url-break">{ruleText(i18n, run)}</td>
                  <td>
                    <Badge
                      tone={STATUS_TONE[run.status] ?? 'neutral'}
                      text={runStatusText(i18n, run.status)}
                    />
                  </td>
                  <td class="small">
                    {t('retarget.askedBy', {
                      time: i18n.dateTime(run.createdAt),
                      actor: describeActor(i18n, run.requestedBy),
                    })}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </AppLayout>
  );
}

type Pair = { code: string; before: string; after: string; problem?: string | null };

/** /ui/ops/retarget/{id}: one run, its dry run's count and sample, progress, and what may be done now. */
export function RetargetDetailPage(props: {
  session: UiSession;
  timeZone: string;
  run: RetargetRunRow & { counts: { byState: Record<string, number>; bitlyPending: number } };
  /** RETARGET_REQUIRES_SECOND_ADMIN: another admin than the one who asked approves. */
  secondAdmin?: boolean;
  notice?: { tone: 'good' | 'bad'; title: string } | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { run } = props;
  const report = run.report as {
    planned?: number;
    invalid?: number;
    sample?: Pair[];
    invalidSample?: Pair[];
    error?: string;
  };
  const c = run.counts.byState;
  const action = (name: string, label: string, tone = 'btn-secondary') => (
    <form method="post" action={`/ui/ops/retarget/${run.id}/${name}`} class="inline-form">
      <CsrfField token={props.session.csrfToken} />
      <button class={`btn ${tone}`} type="submit">
        {label}
      </button>
    </form>
  );
  const total = (c.planned ?? 0) + (c.applied ?? 0) + (c.skipped ?? 0);
  return (
    <AppLayout title={t('retarget.detailTitle', { id: run.id })} session={props.session} section="ops">
      <div class="page-header">
        <div>
          <h1>
            {t('retarget.heading')}{' '}
            <bdi class="mono" dir="ltr">
              {run.id}
            </bdi>{' '}
            <Badge tone={STATUS_TONE[run.status] ?? 'neutral'} text={runStatusText(i18n, run.status)} />
          </h1>
          <p class="muted url-break">{ruleText(i18n, run)}</p>
        </div>
        <a class="btn btn-secondary" href={`/ui/ops/retarget/${run.id}`}>
          {t('retarget.refresh')}
        </a>
      </div>
      {props.notice && <Notice tone={props.notice.tone} title={props.notice.title} />}
      {report.error && <Notice tone="bad" title={i18n.problem(report.error)} />}
      <section class="card" aria-label={t('retarget.progress')}>
        {run.status === 'planning' ? (
          <p>{t('retarget.planning')}</p>
        ) : (
          <>
            <p>
              {i18n.rich('retarget.wouldChange', {
                count: report.planned ?? 0,
                planned: <strong>{i18n.number(report.planned ?? 0)}</strong>,
                invalid: <strong>{i18n.number(report.invalid ?? 0)}</strong>,
              })}
            </p>
            <progress value={c.applied ?? 0} max={Math.max(total, 1)} />
            <p class="small">
              {t('retarget.counts', {
                applied: c.applied ?? 0,
                waiting: c.planned ?? 0,
                skipped: c.skipped ?? 0,
                bitly: run.counts.bitlyPending,
              })}
            </p>
          </>
        )}
        <div class="btn-row">
          {run.status === 'planned' && action('approve', t('retarget.approve'), 'btn-primary')}
          {run.status === 'running' && action('pause', t('retarget.pause'))}
          {run.status === 'paused' && action('resume', t('retarget.resume'), 'btn-primary')}
          {['planning', 'planned', 'running', 'paused'].includes(run.status) &&
            action('cancel', t('retarget.cancel'), 'btn-danger-ghost')}
          {run.kind === 'retarget' &&
            ['finished', 'cancelled', 'paused', 'failed'].includes(run.status) &&
            action('undo', t('retarget.undo'))}
        </div>
        <p class="muted small">
          {t('retarget.asked', {
            actor: describeActor(i18n, run.requestedBy),
            time: i18n.dateTime(run.createdAt),
          })}
          {run.approvedBy && run.approvedAt
            ? ` · ${t('retarget.approved', {
                actor: describeActor(i18n, run.approvedBy),
                time: i18n.dateTime(run.approvedAt),
              })}`
            : ''}
          {run.finishedAt ? ` · ${t('retarget.ended', { time: i18n.dateTime(run.finishedAt) })}` : ''}
        </p>
        {props.secondAdmin && ['planning', 'planned'].includes(run.status) && (
          <p class="small">
            {t('retarget.needsSecondAdmin', { actor: describeActor(i18n, run.requestedBy) })}
          </p>
        )}
      </section>
      {report.sample && report.sample.length > 0 && (
        <section class="card" aria-labelledby="sample-title">
          <h2 id="sample-title">{t('retarget.sample')}</h2>
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">{t('retarget.col.code')}</th>
                <th scope="col">{t('retarget.col.before')}</th>
                <th scope="col">{t('retarget.col.after')}</th>
              </tr>
            </thead>
            <tbody>
              {report.sample.map((p) => (
                <tr key={p.code}>
                  <td class="mono" dir="ltr">
                    {p.code}
                  </td>
                  <td class="small mono">
                    <DisplayUrl url={p.before} class="url-break" />
                  </td>
                  <td class="small mono">
                    <DisplayUrl url={p.after} class="url-break" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {report.invalidSample && report.invalidSample.length > 0 && (
        <section class="card" aria-labelledby="invalid-title">
          <h2 id="invalid-title">{t('retarget.invalid')}</h2>
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">{t('retarget.col.code')}</th>
                <th scope="col">{t('retarget.col.wouldBecome')}</th>
                <th scope="col">{t('retarget.col.whyNot')}</th>
              </tr>
            </thead>
            <tbody>
              {report.invalidSample.map((p) => (
                <tr key={p.code}>
                  <td class="mono" dir="ltr">
                    {p.code}
                  </td>
                  <td class="small mono">
                    <DisplayUrl url={p.after} class="url-break" />
                  </td>
                  <td class="small">{p.problem ? i18n.problem(p.problem) : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </AppLayout>
  );
}
