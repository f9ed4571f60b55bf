import type { ComponentChildren } from 'preact';
import CopyButton from '../islands/CopyButton.tsx';
import { API_KEY_SCOPES } from '../lib/auth/api_keys.ts';
import type { ApiKey } from '../lib/auth/issue_api_key.ts';
import type { UiSession } from '../lib/auth/sessions.ts';
import type { EscrowOverview } from '../lib/escrow/get_escrow_overview.ts';
import type { I18n } from '../lib/i18n/translator.ts';
import type { AdoptionOverview } from '../lib/operations/adoption_overview.ts';
import type { UserAccount as UserRow } from '../lib/operations/get_ops_overview.ts';
import type { OpsRun as OpsRunRow } from '../lib/operations/ops_runs.ts';
import { AdoptionRuns } from './AdoptionRuns.tsx';
import { AppLayout } from './AppLayout.tsx';
import { describeActor } from './AuditHistory.tsx';
import { Badge } from './Badge.tsx';
import { EscrowCard } from './EscrowCard.tsx';
import { CsrfField, Notice, SelectField, TextField } from './Field.tsx';
import { FrontChangeSteps, stepName } from './FrontChangeSteps.tsx';
import { DirIcon, useI18n } from './I18n.tsx';
import { Island } from './Island.tsx';
import { vendorName } from './link_fields.ts';

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
  return key === 'to' ? vendorName(i18n, value) : value;
}

const KINDS = ['failover', 'failback', 'drill'] as const;
const kindName = (i18n: I18n, kind: string) => {
  const known = KINDS.find((k) => k === kind);
  return known ? i18n.t(`ops.kind.${known}`) : kind;
};

export interface OpsView {
  front: { active: string; since: string | null };
  bitlyConfigured: boolean;
  /** The failover, failback or drill now running, with its current step. */
  frontChange: {
    kind: string;
    workflowId: string;
    step: string | null;
    waitingForDns: boolean;
    /** Where it goes, the steps finished and the end of a DNS TTL wait. */
    to?: string;
    steps?: { name: string; ms: number }[];
    ttlWaitUntil?: Date | null;
  } | null;
  runs: OpsRunRow[];
  keys: ApiKey[];
  users: UserRow[];
  temporalUrl: string | null;
  /** Archive backfills and mass retargets. */
  adoption?: AdoptionOverview;
  /** Escrow exports and static snapshots. */
  escrow?: EscrowOverview;
}

/** A destructive action behind a second click, without JavaScript: the button appears once opened. */
function Confirm(props: { label: string; confirm: string; children: ComponentChildren }) {
  return (
    <details class="confirm">
      <summary class="btn btn-danger-ghost btn-sm">{props.label}</summary>
      <div class="confirm-body">
        <p class="small">{props.confirm}</p>
        {props.children}
      </div>
    </details>
  );
}

function RunCard(props: {
  title: string;
  run: OpsRunRow | undefined;
  timeZone: string;
  empty: string;
  temporalUrl: string | null;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { run } = props;
  const facts = run
    ? Object.entries(run.report)
        .filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v))
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

/** Buttons for the operations workflows: drill, failover/failback, the DNS confirmation, reconcile, re-scan. */
function OpsActions(props: { view: OpsView; csrfToken: string; timeZone: string }) {
  const i18n = useI18n();
  const { t } = i18n;
  const { view, csrfToken } = props;
  const other = view.front.active === 'inhouse' ? 'bitly' : 'inhouse';
  const otherName = vendorName(i18n, other);
  const canSwitch = other === 'inhouse' || view.bitlyConfigured;
  const change = view.frontChange;
  return (
    <section class="card" id="actions" aria-labelledby="actions-title">
      <h2 id="actions-title">{t('ops.actions')}</h2>
      {change ? (
        <div class="subform" role="status">
          <p>
            <Badge tone="neutral" text={t('ops.run.running')} /> {kindName(i18n, change.kind)}{' '}
            <bdi class="mono small" dir="ltr">
              {change.workflowId}
            </bdi>
            {change.step ? ` · ${t('ops.step', { step: stepName(i18n, change.step) })}` : ''}
          </p>
          {change.to && (
            <FrontChangeSteps
              kind={change.kind}
              to={change.to}
              current={change.step}
              steps={change.steps ?? []}
              ttlWaitUntil={change.ttlWaitUntil ?? null}
              timeZone={props.timeZone}
            />
          )}
          {change.waitingForDns && (
            <form method="post" action="/ui/ops/front/dns-changed">
              <CsrfField token={csrfToken} />
              <p class="small">{t('ops.waitingDns', { front: otherName })}</p>
              <button type="submit" class="btn btn-primary">
                {t('ops.dnsChanged')}
              </button>
            </form>
          )}
        </div>
      ) : (
        <div class="grid-2">
          <form method="post" action="/ui/ops/front" class="subform">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="to" value={other} />
            <input type="hidden" name="drill" value="true" />
            <h3>{t('ops.drill')}</h3>
            <p class="small muted">{t('ops.drillLead', { front: otherName })}</p>
            <button type="submit" class="btn btn-secondary" disabled={!canSwitch}>
              {t('ops.runDrill')}
            </button>
          </form>
          <form method="post" action="/ui/ops/front" class="subform">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="to" value={other} />
            <h3>{other === 'inhouse' ? t('ops.failOver') : t('ops.failBack')}</h3>
            {canSwitch ? (
              <>
                <label class="checkbox small">
                  <input type="checkbox" name="confirm" value="yes" required />{' '}
                  {t('ops.confirmSwitch', { front: otherName })}
                </label>
                <label class="checkbox small">
                  <input type="checkbox" name="emergency" value="yes" /> {t('ops.emergency')}
                </label>
                <button type="submit" class="btn btn-danger-ghost">
                  {t('ops.switch')}
                </button>
              </>
            ) : (
              <p class="small muted">{t('ops.noBitly')}</p>
            )}
          </form>
        </div>
      )}
      <div class="actions-row">
        <form method="post" action="/ui/ops/reconcile" class="inline-form">
          <CsrfField token={csrfToken} />
          <button type="submit" class="btn btn-secondary btn-sm">
            {t('ops.reconcile')}
          </button>
        </form>
        <form method="post" action="/ui/ops/rescan" class="inline-form">
          <CsrfField token={csrfToken} />
          <button type="submit" class="btn btn-secondary btn-sm">
            {t('ops.rescan')}
          </button>
        </form>
      </div>
    </section>
  );
}

/** Operations (admins): the active front, the last reconciliation and drill, API keys and users. */
export function OpsPage(props: {
  session: UiSession;
  view: OpsView;
  timeZone: string;
  notice?: { tone: 'good' | 'warn' | 'bad' | 'info'; title: string; text?: string } | undefined;
  newKey?: { name: string; key: string } | undefined;
  newPassword?: { email: string; password: string } | undefined;
  keyForm?: { values: Record<string, string | string[]>; errors: Record<string, string> } | undefined;
  userForm?: { values: Record<string, string>; errors: Record<string, string> } | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { view, timeZone, session } = props;
  const latest = (kind: string) => view.runs.find((r) => r.kind === kind);
  const keyScopes = props.keyForm?.values.scopes ?? ['links:read', 'links:write'];
  const never = t('common.never');
  return (
    <AppLayout title={t('ops.title')} session={session} section="ops">
      <div class="page-header">
        <div>
          <h1>{t('ops.title')}</h1>
          <p class="muted">{t('ops.lead')}</p>
        </div>
        {view.temporalUrl && (
          <a class="btn btn-secondary" href={view.temporalUrl} target="_blank" rel="noopener noreferrer">
            {t('ops.temporalUi')} <DirIcon glyph="↗" />
          </a>
        )}
      </div>
      {props.notice && (
        <Notice tone={props.notice.tone} title={props.notice.title}>
          {props.notice.text && <p>{props.notice.text}</p>}
        </Notice>
      )}

      <div class="status-grid">
        <section class="card status-card" aria-label={t('ops.activeFront')}>
          <h2 class="eyebrow">{t('ops.activeFront')}</h2>
          <p class="status-main big">{vendorName(i18n, view.front.active)}</p>
          <p class="muted small">
            {view.front.since
              ? t('ops.since', { time: i18n.dateTime(new Date(view.front.since)) })
              : t('ops.sinceInstall')}
          </p>
          <p class="small">{t('ops.frontNote')}</p>
        </section>
        <RunCard
          title={t('ops.lastReconcile')}
          run={latest('reconcile')}
          timeZone={timeZone}
          temporalUrl={view.temporalUrl}
          empty={t('ops.noReconcile')}
        />
        <RunCard
          title={t('ops.lastDrill')}
          run={latest('drill')}
          timeZone={timeZone}
          temporalUrl={view.temporalUrl}
          empty={t('ops.noDrill')}
        />
      </div>

      <OpsActions view={view} csrfToken={session.csrfToken} timeZone={timeZone} />
      {view.escrow && <EscrowCard escrow={view.escrow} timeZone={timeZone} csrfToken={session.csrfToken} />}

      {view.adoption && (
        <AdoptionRuns adoption={view.adoption} timeZone={timeZone} temporalUrl={view.temporalUrl} />
      )}

      <section class="card" id="keys" aria-labelledby="keys-title">
        <h2 id="keys-title">{t('ops.keys')}</h2>
        {props.newKey && (
          <div class="reveal" role="status">
            <p class="notice-title">{t('ops.newKey', { name: props.newKey.name })}</p>
            <div class="reveal-row">
              <code class="secret">{props.newKey.key}</code>
              <Island
                name="CopyButton"
                component={CopyButton}
                props={{ text: props.newKey.key, label: t('copy.key'), copiedLabel: t('copy.copied') }}
              />
            </div>
          </div>
        )}
        <div class="table-scroll">
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">{t('ops.col.name')}</th>
                <th scope="col">{t('ops.col.key')}</th>
                <th scope="col">{t('ops.col.scopes')}</th>
                <th scope="col">{t('ops.col.created')}</th>
                <th scope="col">{t('ops.col.lastUsed')}</th>
                <th scope="col">
                  <span class="visually-hidden">{t('ops.col.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {view.keys.map((k) => (
                <tr key={k.id} class={k.revokedAt ? 'is-revoked' : undefined}>
                  <td data-label={t('ops.col.name')}>
                    <bdi dir="auto">{k.name}</bdi>
                  </td>
                  <td data-label={t('ops.col.key')} class="mono">
                    <bdi dir="ltr">{k.prefix}</bdi>
                  </td>
                  <td data-label={t('ops.col.scopes')}>
                    <bdi dir="ltr">{k.scopes.join(', ')}</bdi>
                  </td>
                  <td data-label={t('ops.col.created')}>
                    {i18n.dateTime(new Date(k.createdAt))}
                    <span class="muted small">
                      {' '}
                      {i18n.rich('ops.createdBy', {
                        actor: <bdi dir="auto">{describeActor(i18n, k.createdBy)}</bdi>,
                      })}
                    </span>
                  </td>
                  <td data-label={t('ops.col.lastUsed')}>
                    {k.lastUsedAt ? i18n.dateTime(new Date(k.lastUsedAt)) : never}
                  </td>
                  <td data-label={t('ops.col.actions')}>
                    {k.revokedAt ? (
                      <Badge tone="muted" text={t('ops.revoked')} />
                    ) : (
                      <Confirm label={t('ops.revoke')} confirm={t('ops.revokeConfirm', { name: k.name })}>
                        <form method="post" action={`/ui/ops/keys/${k.id}/revoke`} class="inline-form">
                          <CsrfField token={session.csrfToken} />
                          <button type="submit" class="btn btn-danger btn-sm">
                            {t('ops.revokeNow')}
                          </button>
                        </form>
                      </Confirm>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <form method="post" action="/ui/ops/keys" class="subform" novalidate>
          <h3>{t('ops.createKey')}</h3>
          <CsrfField token={session.csrfToken} />
          <div class="grid-2">
            <TextField
              name="name"
              id="key-name"
              label={t('ops.keyName')}
              required
              dir="auto"
              maxLength={100}
              value={String(props.keyForm?.values.name ?? '')}
              error={props.keyForm?.errors.name}
              placeholder={t('ops.keyNamePlaceholder')}
            />
            <fieldset class={`field checkboxes${props.keyForm?.errors.scopes ? ' has-error' : ''}`}>
              <legend>{t('ops.scopes')}</legend>
              {API_KEY_SCOPES.map((s) => (
                <label key={s} class="checkbox">
                  <input type="checkbox" name="scopes" value={s} checked={[keyScopes].flat().includes(s)} />{' '}
                  {t(`ops.scope.${s}`)}
                </label>
              ))}
              {props.keyForm?.errors.scopes && (
                <p class="field-message is-error">✗ {props.keyForm.errors.scopes}</p>
              )}
            </fieldset>
          </div>
          <button type="submit" class="btn btn-primary">
            {t('ops.createKeyButton')}
          </button>
        </form>
      </section>

      <section class="card" id="users" aria-labelledby="users-title">
        <h2 id="users-title">{t('ops.users')}</h2>
        {props.newPassword && (
          <div class="reveal" role="status">
            <p class="notice-title">{t('ops.newPassword', { email: props.newPassword.email })}</p>
            <div class="reveal-row">
              <code class="secret">{props.newPassword.password}</code>
              <Island
                name="CopyButton"
                component={CopyButton}
                props={{
                  text: props.newPassword.password,
                  label: t('copy.password'),
                  copiedLabel: t('copy.copied'),
                }}
              />
            </div>
          </div>
        )}
        <div class="table-scroll">
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">{t('ops.col.user')}</th>
                <th scope="col">{t('ops.col.role')}</th>
                <th scope="col">{t('ops.col.lastSignIn')}</th>
                <th scope="col">{t('ops.col.status')}</th>
                <th scope="col">
                  <span class="visually-hidden">{t('ops.col.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {view.users.map((u) => {
                const self = u.id === session.user.id;
                return (
                  <tr key={u.id} class={u.disabledAt ? 'is-revoked' : undefined}>
                    <td data-label={t('ops.col.user')}>
                      <strong>
                        <bdi dir="auto">{u.name ?? u.email}</bdi>
                      </strong>
                      {u.name && (
                        <span class="muted small">
                          {' '}
                          <bdi dir="ltr">{u.email}</bdi>
                        </span>
                      )}
                      {self && <span class="muted small"> {t('ops.you')}</span>}
                    </td>
                    <td data-label={t('ops.col.role')}>
                      <span class={`role role-${u.role}`}>{t(`role.${u.role}`)}</span>
                    </td>
                    <td data-label={t('ops.col.lastSignIn')}>
                      {u.lastLoginAt ? i18n.dateTime(u.lastLoginAt) : never}
                    </td>
                    <td data-label={t('ops.col.status')}>
                      {u.disabledAt ? (
                        <Badge tone="muted" text={t('ops.disabled')} />
                      ) : (
                        <Badge tone="good" text={t('ops.active')} />
                      )}
                    </td>
                    <td data-label={t('ops.col.actions')}>
                      {!self && (
                        <div class="button-row">
                          <form method="post" action={`/ui/ops/users/${u.id}/role`} class="inline-form">
                            <CsrfField token={session.csrfToken} />
                            <input
                              type="hidden"
                              name="role"
                              value={u.role === 'admin' ? 'editor' : 'admin'}
                            />
                            <button type="submit" class="btn btn-ghost btn-sm">
                              {u.role === 'admin' ? t('ops.makeEditor') : t('ops.makeAdmin')}
                            </button>
                          </form>
                          <Confirm label={t('ops.resetPassword')} confirm={t('ops.resetConfirm')}>
                            <form method="post" action={`/ui/ops/users/${u.id}/password`} class="inline-form">
                              <CsrfField token={session.csrfToken} />
                              <button type="submit" class="btn btn-danger btn-sm">
                                {t('ops.resetNow')}
                              </button>
                            </form>
                          </Confirm>
                          {u.disabledAt ? (
                            <form method="post" action={`/ui/ops/users/${u.id}/enable`} class="inline-form">
                              <CsrfField token={session.csrfToken} />
                              <button type="submit" class="btn btn-ghost btn-sm">
                                {t('ops.enable')}
                              </button>
                            </form>
                          ) : (
                            <Confirm label={t('ops.disable')} confirm={t('ops.disableConfirm')}>
                              <form
                                method="post"
                                action={`/ui/ops/users/${u.id}/disable`}
                                class="inline-form"
                              >
                                <CsrfField token={session.csrfToken} />
                                <button type="submit" class="btn btn-danger btn-sm">
                                  {t('ops.disableNow')}
                                </button>
                              </form>
                            </Confirm>
                          )}
                        </div>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
        <form method="post" action="/ui/ops/users" class="subform" novalidate>
          <h3>{t('ops.addUser')}</h3>
          <CsrfField token={session.csrfToken} />
          {props.userForm?.errors.user && <Notice tone="bad" title={props.userForm.errors.user} />}
          <div class="grid-2">
            <TextField
              name="email"
              id="user-email"
              label={t('ops.email')}
              type="email"
              required
              value={props.userForm?.values.email}
              error={props.userForm?.errors.email}
            />
            <TextField
              name="name"
              id="user-name"
              label={t('ops.name')}
              dir="auto"
              value={props.userForm?.values.name}
              error={props.userForm?.errors.name}
            />
            <SelectField
              name="role"
              id="user-role"
              label={t('ops.role')}
              required
              value={props.userForm?.values.role ?? 'editor'}
              options={[
                { value: 'editor', label: t('ops.roleEditor') },
                { value: 'admin', label: t('ops.roleAdmin') },
              ]}
            />
            <TextField
              name="password"
              id="user-password"
              label={t('ops.password')}
              type="password"
              autoComplete="new-password"
              error={props.userForm?.errors.password}
              hint={t('ops.passwordHint')}
            />
          </div>
          <button type="submit" class="btn btn-primary">
            {t('ops.addUserButton')}
          </button>
        </form>
      </section>
    </AppLayout>
  );
}
