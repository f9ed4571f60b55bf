import type { ComponentChildren } from 'preact';
import CopyButton from '../islands/CopyButton.tsx';
import { API_KEY_SCOPES } from '../lib/auth/api_keys.ts';
import type { ApiKey } from '../lib/auth/issue_api_key.ts';
import type { UiSession } from '../lib/auth/sessions.ts';
import type { EscrowOverview } from '../lib/escrow/get_escrow_overview.ts';
import type { AdoptionOverview } from '../lib/operations/adoption_overview.ts';
import type { UserAccount as UserRow } from '../lib/operations/get_ops_overview.ts';
import type { OpsRun as OpsRunRow } from '../lib/operations/ops_runs.ts';
import { formatDateTime } from '../lib/ui/time_zone.ts';
import { AdoptionRuns } from './AdoptionRuns.tsx';
import { AppLayout } from './AppLayout.tsx';
import { describeActor } from './AuditHistory.tsx';
import { Badge } from './Badge.tsx';
import { EscrowCard } from './EscrowCard.tsx';
import { CsrfField, Notice, SelectField, TextField } from './Field.tsx';
import { FrontChangeSteps } from './FrontChangeSteps.tsx';
import { Island } from './Island.tsx';

const FRONT_NAMES: Record<string, string> = { bitly: 'Bitly', inhouse: 'In-house resolver' };
const RUN_TONE: Record<OpsRunRow['status'], string> = {
  running: 'neutral',
  succeeded: 'good',
  failed: 'bad',
  cancelled: 'muted',
};
const SCOPE_TEXT: Record<(typeof API_KEY_SCOPES)[number], string> = {
  'links:read': 'Read links',
  'links:write': 'Create and edit links',
  admin: 'Admin (everything, incl. keys)',
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
    /** Where it goes, the steps finished (issue 14) and the end of a DNS TTL wait. */
    to?: string;
    steps?: { name: string; ms: number }[];
    ttlWaitUntil?: Date | null;
  } | null;
  runs: OpsRunRow[];
  keys: ApiKey[];
  users: UserRow[];
  temporalUrl: string | null;
  /** Archive backfills and mass retargets (issue 15). */
  adoption?: AdoptionOverview;
  /** Escrow exports and static snapshots (issue 14). */
  escrow?: EscrowOverview;
}

/** A destructive action behind a second click, without JavaScript: the button appears once opened. */
function Confirm(props: { label: string; confirm: string; children: ComponentChildren }) {
  return (
    <details class="confirm">
      <summary class="btn btn-danger-ghost btn-sm">{props.label}</summary>
      <div class="confirm-body">
        <p class="small">{props.confirm}?</p>
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
            <Badge tone={RUN_TONE[run.status]} text={run.status[0]!.toUpperCase() + run.status.slice(1)} />
          </p>
          <p class="muted small">
            Started {formatDateTime(run.startedAt, props.timeZone)}
            {run.finishedAt ? ` · finished ${formatDateTime(run.finishedAt, props.timeZone)}` : ''}
          </p>
          {facts.length > 0 && (
            <dl class="facts facts-compact">
              {facts.map(([k, v]) => (
                <div class="fact" key={k}>
                  <dt>{k.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()}</dt>
                  <dd>{String(v)}</dd>
                </div>
              ))}
            </dl>
          )}
          {props.temporalUrl ? (
            <a
              class="small mono"
              href={`${props.temporalUrl}?query=${encodeURIComponent(`WorkflowId="${run.workflowId}"`)}`}
              target="_blank"
              rel="noopener noreferrer"
            >
              {run.workflowId} ↗
            </a>
          ) : (
            <p class="muted small mono">{run.workflowId}</p>
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
  const { view, csrfToken } = props;
  const other = view.front.active === 'inhouse' ? 'bitly' : 'inhouse';
  const canSwitch = other === 'inhouse' || view.bitlyConfigured;
  const change = view.frontChange;
  return (
    <section class="card" id="actions" aria-labelledby="actions-title">
      <h2 id="actions-title">Actions</h2>
      {change ? (
        <div class="subform" role="status">
          <p>
            <Badge tone="neutral" text="Running" /> {change.kind}{' '}
            <span class="mono small">{change.workflowId}</span>
            {change.step ? ` · step: ${change.step}` : ''}
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
              <p class="small">
                Waiting for the short domain's DNS to point at {FRONT_NAMES[other] ?? other}. Change it at
                your DNS provider, then confirm here.
              </p>
              <button type="submit" class="btn btn-primary">
                I changed the DNS
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
            <h3>Failover drill</h3>
            <p class="small muted">
              Reconciles, proves {FRONT_NAMES[other] ?? other} answers every active link correctly and
              estimates the failover time — everything except the switch.
            </p>
            <button type="submit" class="btn btn-secondary" disabled={!canSwitch}>
              Run a drill
            </button>
          </form>
          <form method="post" action="/ui/ops/front" class="subform">
            <CsrfField token={csrfToken} />
            <input type="hidden" name="to" value={other} />
            <h3>{other === 'inhouse' ? 'Fail over to the in-house resolver' : 'Fail back to Bitly'}</h3>
            {canSwitch ? (
              <>
                <label class="checkbox small">
                  <input type="checkbox" name="confirm" value="yes" required /> I understand the short domain
                  will be repointed to {FRONT_NAMES[other] ?? other}.
                </label>
                <label class="checkbox small">
                  <input type="checkbox" name="emergency" value="yes" /> Emergency: switch now, without
                  lowering the DNS TTL and waiting out the old one first.
                </label>
                <button type="submit" class="btn btn-danger-ghost">
                  Switch the front
                </button>
              </>
            ) : (
              <p class="small muted">
                Bitly is not configured (BITLY_TOKEN), so there is nothing to fail back to.
              </p>
            )}
          </form>
        </div>
      )}
      <div class="actions-row">
        <form method="post" action="/ui/ops/reconcile" class="inline-form">
          <CsrfField token={csrfToken} />
          <button type="submit" class="btn btn-secondary btn-sm">
            Reconcile now
          </button>
        </form>
        <form method="post" action="/ui/ops/rescan" class="inline-form">
          <CsrfField token={csrfToken} />
          <button type="submit" class="btn btn-secondary btn-sm">
            Re-scan destinations now
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
  const { view, timeZone, session } = props;
  const latest = (kind: string) => view.runs.find((r) => r.kind === kind);
  const keyScopes = props.keyForm?.values.scopes ?? ['links:read', 'links:write'];
  return (
    <AppLayout title="Operations" session={session} section="ops">
      <div class="page-header">
        <div>
          <h1>Operations</h1>
          <p class="muted">
            Who answers the short domain, how the last checks went, and who may use Lifeline.
          </p>
        </div>
        {view.temporalUrl && (
          <a class="btn btn-secondary" href={view.temporalUrl} target="_blank" rel="noopener noreferrer">
            Temporal UI ↗
          </a>
        )}
      </div>
      {props.notice && (
        <Notice tone={props.notice.tone} title={props.notice.title}>
          {props.notice.text && <p>{props.notice.text}</p>}
        </Notice>
      )}

      <div class="status-grid">
        <section class="card status-card" aria-label="Active front">
          <h2 class="eyebrow">Active front</h2>
          <p class="status-main big">{FRONT_NAMES[view.front.active] ?? view.front.active}</p>
          <p class="muted small">
            {view.front.since
              ? `Since ${formatDateTime(new Date(view.front.since), timeZone)}`
              : 'Since installation'}
          </p>
          <p class="small">Our own resolver holds every link either way; switching is a DNS change.</p>
        </section>
        <RunCard
          title="Last reconciliation"
          run={latest('reconcile')}
          timeZone={timeZone}
          temporalUrl={view.temporalUrl}
          empty="No reconciliation has run yet."
        />
        <RunCard
          title="Last failover drill"
          run={latest('drill')}
          timeZone={timeZone}
          temporalUrl={view.temporalUrl}
          empty="No drill has run yet."
        />
      </div>

      <OpsActions view={view} csrfToken={session.csrfToken} timeZone={timeZone} />
      {view.escrow && <EscrowCard escrow={view.escrow} timeZone={timeZone} csrfToken={session.csrfToken} />}

      {view.adoption && (
        <AdoptionRuns adoption={view.adoption} timeZone={timeZone} temporalUrl={view.temporalUrl} />
      )}

      <section class="card" id="keys" aria-labelledby="keys-title">
        <h2 id="keys-title">API keys</h2>
        {props.newKey && (
          <div class="reveal" role="status">
            <p class="notice-title">New key “{props.newKey.name}” — copy it now; it is never shown again.</p>
            <div class="reveal-row">
              <code class="secret">{props.newKey.key}</code>
              <Island
                name="CopyButton"
                component={CopyButton}
                props={{ text: props.newKey.key, label: 'Copy key' }}
              />
            </div>
          </div>
        )}
        <div class="table-scroll">
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {view.keys.map((k) => (
                <tr key={k.id} class={k.revokedAt ? 'is-revoked' : undefined}>
                  <td data-label="Name">{k.name}</td>
                  <td data-label="Key" class="mono">
                    {k.prefix}
                  </td>
                  <td data-label="Scopes">{k.scopes.join(', ')}</td>
                  <td data-label="Created">
                    {formatDateTime(new Date(k.createdAt), timeZone)}
                    <span class="muted small"> by {describeActor(k.createdBy)}</span>
                  </td>
                  <td data-label="Last used">
                    {k.lastUsedAt ? formatDateTime(new Date(k.lastUsedAt), timeZone) : 'Never'}
                  </td>
                  <td data-label="Actions">
                    {k.revokedAt ? (
                      <Badge tone="muted" text="Revoked" />
                    ) : (
                      <Confirm label="Revoke" confirm={`Revoke “${k.name}” now`}>
                        <form method="post" action={`/ui/ops/keys/${k.id}/revoke`} class="inline-form">
                          <CsrfField token={session.csrfToken} />
                          <button type="submit" class="btn btn-danger btn-sm">
                            Revoke now
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
          <h3>Create a key</h3>
          <CsrfField token={session.csrfToken} />
          <div class="grid-2">
            <TextField
              name="name"
              id="key-name"
              label="Name"
              required
              maxLength={100}
              value={String(props.keyForm?.values.name ?? '')}
              error={props.keyForm?.errors.name}
              placeholder="e.g. CMS integration"
            />
            <fieldset class={`field checkboxes${props.keyForm?.errors.scopes ? ' has-error' : ''}`}>
              <legend>Scopes</legend>
              {API_KEY_SCOPES.map((s) => (
                <label key={s} class="checkbox">
                  <input type="checkbox" name="scopes" value={s} checked={[keyScopes].flat().includes(s)} />{' '}
                  {SCOPE_TEXT[s]}
                </label>
              ))}
              {props.keyForm?.errors.scopes && (
                <p class="field-message is-error">✗ {props.keyForm.errors.scopes}</p>
              )}
            </fieldset>
          </div>
          <button type="submit" class="btn btn-primary">
            Create key
          </button>
        </form>
      </section>

      <section class="card" id="users" aria-labelledby="users-title">
        <h2 id="users-title">Users</h2>
        {props.newPassword && (
          <div class="reveal" role="status">
            <p class="notice-title">
              Password for {props.newPassword.email} — give it to them now; it is never shown again.
            </p>
            <div class="reveal-row">
              <code class="secret">{props.newPassword.password}</code>
              <Island
                name="CopyButton"
                component={CopyButton}
                props={{ text: props.newPassword.password, label: 'Copy password' }}
              />
            </div>
          </div>
        )}
        <div class="table-scroll">
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">Role</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {view.users.map((u) => {
                const self = u.id === session.user.id;
                return (
                  <tr key={u.id} class={u.disabledAt ? 'is-revoked' : undefined}>
                    <td data-label="User">
                      <strong>{u.name ?? u.email}</strong>
                      {u.name && <span class="muted small"> {u.email}</span>}
                      {self && <span class="muted small"> (you)</span>}
                    </td>
                    <td data-label="Role">
                      <span class={`role role-${u.role}`}>{u.role}</span>
                    </td>
                    <td data-label="Last sign-in">
                      {u.lastLoginAt ? formatDateTime(u.lastLoginAt, timeZone) : 'Never'}
                    </td>
                    <td data-label="Status">
                      {u.disabledAt ? (
                        <Badge tone="muted" text="Disabled" />
                      ) : (
                        <Badge tone="good" text="Active" />
                      )}
                    </td>
                    <td data-label="Actions">
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
                              {u.role === 'admin' ? 'Make editor' : 'Make admin'}
                            </button>
                          </form>
                          <Confirm label="Reset password" confirm="Sign them out and make a new password">
                            <form method="post" action={`/ui/ops/users/${u.id}/password`} class="inline-form">
                              <CsrfField token={session.csrfToken} />
                              <button type="submit" class="btn btn-danger btn-sm">
                                Reset now
                              </button>
                            </form>
                          </Confirm>
                          {u.disabledAt ? (
                            <form method="post" action={`/ui/ops/users/${u.id}/enable`} class="inline-form">
                              <CsrfField token={session.csrfToken} />
                              <button type="submit" class="btn btn-ghost btn-sm">
                                Enable
                              </button>
                            </form>
                          ) : (
                            <Confirm label="Disable" confirm="Sign them out everywhere and block sign-in">
                              <form
                                method="post"
                                action={`/ui/ops/users/${u.id}/disable`}
                                class="inline-form"
                              >
                                <CsrfField token={session.csrfToken} />
                                <button type="submit" class="btn btn-danger btn-sm">
                                  Disable now
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
          <h3>Add a user</h3>
          <CsrfField token={session.csrfToken} />
          {props.userForm?.errors.user && <Notice tone="bad" title={props.userForm.errors.user} />}
          <div class="grid-2">
            <TextField
              name="email"
              id="user-email"
              label="Email"
              type="email"
              required
              value={props.userForm?.values.email}
              error={props.userForm?.errors.email}
            />
            <TextField
              name="name"
              id="user-name"
              label="Name"
              value={props.userForm?.values.name}
              error={props.userForm?.errors.name}
            />
            <SelectField
              name="role"
              id="user-role"
              label="Role"
              required
              value={props.userForm?.values.role ?? 'editor'}
              options={[
                { value: 'editor', label: 'Editor — links only' },
                { value: 'admin', label: 'Admin — also operations, keys, users' },
              ]}
            />
            <TextField
              name="password"
              id="user-password"
              label="Password"
              type="password"
              autoComplete="new-password"
              error={props.userForm?.errors.password}
              hint="Leave empty to generate one, shown to you once."
            />
          </div>
          <button type="submit" class="btn btn-primary">
            Add user
          </button>
        </form>
      </section>
    </AppLayout>
  );
}
