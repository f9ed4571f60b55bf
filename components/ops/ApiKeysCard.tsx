// API keys: the one just issued (shown once), every key with its revocation, and the form to issue one.
import CopyButton from '../../islands/CopyButton.tsx';
import { API_KEY_SCOPES } from '../../lib/auth/api_keys.ts';
import type { ApiKey } from '../../lib/auth/issue_api_key.ts';
import { describeActor } from '../AuditHistory.tsx';
import { Badge } from '../Badge.tsx';
import { CsrfField, TextField } from '../Field.tsx';
import { useI18n } from '../I18n.tsx';
import { Island } from '../Island.tsx';
import { Confirm } from './Confirm.tsx';

export interface KeyForm {
  values: Record<string, string | string[]>;
  errors: Record<string, string>;
}

/** The API keys card of the operations page. */
export function ApiKeysCard(props: {
  keys: ApiKey[];
  csrfToken: string;
  newKey?: { name: string; key: string } | undefined;
  keyForm?: KeyForm | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const keyScopes = props.keyForm?.values.scopes ?? ['links:read', 'links:write'];
  const never = t('common.never');
  return (
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
            {props.keys.map((k) => (
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
                        <CsrfField token={props.csrfToken} />
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
        <CsrfField token={props.csrfToken} />
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
  );
}
