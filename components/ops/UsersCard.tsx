// People: a password just set (shown once), every account with its role and status changes, and the form to add one.

import CopyButton from '../../islands/CopyButton.tsx';
import { USER_ROLES } from '../../lib/auth/permissions.ts';
import type { UiSession } from '../../lib/auth/sessions.ts';
import type { UserAccount as UserRow } from '../../lib/operations/get_ops_overview.ts';
import { Badge } from '../Badge.tsx';
import { CsrfField, Notice, SelectField, TextField } from '../Field.tsx';
import { useI18n } from '../I18n.tsx';
import { Island } from '../Island.tsx';
import { Confirm } from './Confirm.tsx';

export interface UserForm {
  values: Record<string, string>;
  errors: Record<string, string>;
}

/** The users card of the operations page; an admin cannot change their own account here. */
export function UsersCard(props: {
  users: UserRow[];
  session: UiSession;
  newPassword?: { email: string; password: string } | undefined;
  userForm?: UserForm | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { session } = props;
  const never = t('common.never');
  return (
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
            {props.users.map((u) => {
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
                          <label class="visually-hidden" for={`role-of-${u.id}`}>
                            {t('ops.newRole')}
                          </label>
                          <select name="role" id={`role-of-${u.id}`} class="select-sm">
                            {USER_ROLES.map((r) => (
                              <option key={r} value={r} selected={r === u.role}>
                                {t(`role.${r}`)}
                              </option>
                            ))}
                          </select>{' '}
                          <button type="submit" class="btn btn-ghost btn-sm">
                            {t('ops.changeRole')}
                          </button>
                        </form>
                        <form
                          method="post"
                          action={`/ui/ops/users/${u.id}/sessions/revoke`}
                          class="inline-form"
                        >
                          <CsrfField token={session.csrfToken} />
                          <button type="submit" class="btn btn-ghost btn-sm">
                            {t('ops.signOutEverywhere')}
                          </button>
                        </form>
                        <Confirm label={t('ops.resetMfa')} confirm={t('ops.resetMfaConfirm')}>
                          <form method="post" action={`/ui/ops/users/${u.id}/mfa/reset`} class="inline-form">
                            <CsrfField token={session.csrfToken} />
                            <button type="submit" class="btn btn-danger btn-sm">
                              {t('ops.resetMfaNow')}
                            </button>
                          </form>
                        </Confirm>
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
                            <form method="post" action={`/ui/ops/users/${u.id}/disable`} class="inline-form">
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
              { value: 'viewer', label: t('ops.roleViewer') },
              { value: 'editor', label: t('ops.roleEditor') },
              { value: 'moderator', label: t('ops.roleModerator') },
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
  );
}
