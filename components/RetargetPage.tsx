import type { UiSession } from '../lib/auth/sessions.ts';
import type { RetargetRunRow } from '../lib/retarget/request_retarget.ts';
import { formatDateTime } from '../lib/ui/time_zone.ts';
import { AppLayout } from './AppLayout.tsx';
import { Badge } from './Badge.tsx';
import { CsrfField, Notice, SelectField, TextField } from './Field.tsx';

const STATUS_TONE: Record<string, string> = {
  planning: 'neutral',
  planned: 'warn',
  running: 'neutral',
  paused: 'warn',
  finished: 'good',
  cancelled: 'muted',
  failed: 'bad',
};

const ruleText = (run: RetargetRunRow) => {
  const r = run.rule as Record<string, unknown>;
  if (run.kind === 'undo') return `undo of ${run.undoOf}`;
  if (r.type === 'prefix') return `prefix ${r.from} → ${r.to}`;
  if (r.type === 'regex') return `regex /${r.pattern}/${r.flags ?? ''} → ${r.replacement}`;
  return `CSV of ${r.rows} rows`;
};

/** /ui/ops/retarget: the runs, and the form that plans a new one (a dry run; nothing changes yet). */
export function RetargetListPage(props: {
  session: UiSession;
  timeZone: string;
  runs: RetargetRunRow[];
  values?: Record<string, string>;
  errors?: string[];
}) {
  const v = props.values ?? {};
  return (
    <AppLayout title="Mass retarget" session={props.session} section="ops">
      <div class="page-header">
        <div>
          <h1>Mass retarget</h1>
          <p class="muted">
            Re-platforming, a domain move, a section rename: change many links’ targets at once. A rule is
            first planned as a dry run (a count and a sample; nothing changes); an admin approves it; it then
            runs in batches that can be paused, resumed or cancelled, and a finished run can be undone.
          </p>
        </div>
        <a class="btn btn-secondary" href="/ui/ops">
          ← Operations
        </a>
      </div>
      {props.errors && props.errors.length > 0 && (
        <Notice tone="bad" title="The rule was not accepted">
          <ul>
            {props.errors.map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
        </Notice>
      )}
      <section class="card" aria-labelledby="new-title">
        <h2 id="new-title">Plan a retarget (dry run)</h2>
        <form method="post" action="/ui/ops/retarget">
          <CsrfField token={props.session.csrfToken} />
          <SelectField
            name="type"
            label="Rule"
            required
            value={v.type ?? 'prefix'}
            options={[
              { value: 'prefix', label: 'Prefix: targets starting with … get another start' },
              { value: 'regex', label: 'Regular expression (RE2: linear time, no backreferences)' },
              { value: 'csv', label: 'CSV: old URL,new URL per line (exact matches)' },
            ]}
          />
          <TextField
            name="from"
            label="Prefix: from"
            value={v.from}
            placeholder="https://old.example/news/"
          />
          <TextField name="to" label="Prefix: to" value={v.to} placeholder="https://www.example/stories/" />
          <TextField
            name="pattern"
            label="Regex: pattern"
            value={v.pattern}
            placeholder="^https://old\.example/(\d{4})/(.*)$"
          />
          <TextField
            name="replacement"
            label="Regex: replacement ($1, $2… are the groups)"
            value={v.replacement}
          />
          <div class="field">
            <label>
              <input type="checkbox" name="ignoreCase" value="yes" checked={v.ignoreCase === 'yes'} /> Regex:
              ignore case
            </label>
          </div>
          <div class="field">
            <label for="field-csv">
              CSV <span class="optional">(optional; up to about 60 KB here, any size through the API)</span>
            </label>
            <textarea id="field-csv" name="csv" rows={6} class="mono">
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
              Leave links of WordPress posts alone (WordPress decides their targets; its reconciliation would
              put them back)
            </label>
          </div>
          <button class="btn btn-primary" type="submit">
            Plan (dry run)
          </button>
        </form>
      </section>
      <section class="card" aria-labelledby="runs-title">
        <h2 id="runs-title">Runs</h2>
        {props.runs.length === 0 ? (
          <p class="muted">No retarget yet.</p>
        ) : (
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Rule</th>
                <th scope="col">Status</th>
                <th scope="col">Asked</th>
              </tr>
            </thead>
            <tbody>
              {props.runs.map((run) => (
                <tr key={run.id}>
                  <td>
                    <a class="mono" href={`/ui/ops/retarget/${run.id}`}>
                      {run.id}
                    </a>
                  </td>
                  <td class="small">{ruleText(run)}</td>
                  <td>
                    <Badge tone={STATUS_TONE[run.status] ?? 'neutral'} text={run.status} />
                  </td>
                  <td class="small">
                    {formatDateTime(run.createdAt, props.timeZone)} by {run.requestedBy}
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
  notice?: { tone: 'good' | 'bad'; title: string } | undefined;
}) {
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
    <AppLayout title={`Retarget ${run.id}`} session={props.session} section="ops">
      <div class="page-header">
        <div>
          <h1>
            Retarget <span class="mono">{run.id}</span>{' '}
            <Badge tone={STATUS_TONE[run.status] ?? 'neutral'} text={run.status} />
          </h1>
          <p class="muted">{ruleText(run)}</p>
        </div>
        <a class="btn btn-secondary" href={`/ui/ops/retarget/${run.id}`}>
          Refresh
        </a>
      </div>
      {props.notice && <Notice tone={props.notice.tone} title={props.notice.title} />}
      {report.error && <Notice tone="bad" title={report.error} />}
      <section class="card" aria-label="Progress">
        {run.status === 'planning' ? (
          <p>Planning: every link is being checked against the rule. Nothing changes during the dry run.</p>
        ) : (
          <>
            <p>
              <strong>{(report.planned ?? 0).toLocaleString('en')}</strong> links would change;{' '}
              <strong>{(report.invalid ?? 0).toLocaleString('en')}</strong> matched but their new target is
              refused.
            </p>
            <progress value={c.applied ?? 0} max={Math.max(total, 1)} />
            <p class="small">
              Applied {(c.applied ?? 0).toLocaleString('en')} · waiting{' '}
              {(c.planned ?? 0).toLocaleString('en')} · skipped (changed since the dry run){' '}
              {(c.skipped ?? 0).toLocaleString('en')} · Bitly still to follow{' '}
              {run.counts.bitlyPending.toLocaleString('en')}
            </p>
          </>
        )}
        <div class="btn-row">
          {run.status === 'planned' && action('approve', 'Approve and run', 'btn-primary')}
          {run.status === 'running' && action('pause', 'Pause')}
          {run.status === 'paused' && action('resume', 'Resume', 'btn-primary')}
          {['planning', 'planned', 'running', 'paused'].includes(run.status) &&
            action('cancel', 'Cancel', 'btn-danger-ghost')}
          {run.kind === 'retarget' &&
            ['finished', 'cancelled', 'paused', 'failed'].includes(run.status) &&
            action('undo', 'Undo this run (plans the reverse)')}
        </div>
        <p class="muted small">
          Asked by {run.requestedBy} {formatDateTime(run.createdAt, props.timeZone)}
          {run.approvedBy && run.approvedAt
            ? ` · approved by ${run.approvedBy} ${formatDateTime(run.approvedAt, props.timeZone)}`
            : ''}
          {run.finishedAt ? ` · ended ${formatDateTime(run.finishedAt, props.timeZone)}` : ''}
        </p>
      </section>
      {report.sample && report.sample.length > 0 && (
        <section class="card" aria-labelledby="sample-title">
          <h2 id="sample-title">Sample of the dry run</h2>
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">Code</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
              </tr>
            </thead>
            <tbody>
              {report.sample.map((p) => (
                <tr key={p.code}>
                  <td class="mono">{p.code}</td>
                  <td class="small mono">{p.before}</td>
                  <td class="small mono">{p.after}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {report.invalidSample && report.invalidSample.length > 0 && (
        <section class="card" aria-labelledby="invalid-title">
          <h2 id="invalid-title">Refused new targets (not applied)</h2>
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">Code</th>
                <th scope="col">Would become</th>
                <th scope="col">Why not</th>
              </tr>
            </thead>
            <tbody>
              {report.invalidSample.map((p) => (
                <tr key={p.code}>
                  <td class="mono">{p.code}</td>
                  <td class="small mono">{p.after}</td>
                  <td class="small">{p.problem}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </AppLayout>
  );
}
