// /ui/ops/webhooks (admins): outgoing webhook endpoints, the form to add one, and one endpoint's page with its
// deliveries, "send again", switching it on or off and rotating its secret (shown once; ADR 0082).
import CopyButton from '../islands/CopyButton.tsx';
import type { UiSession } from '../lib/auth/sessions.ts';
import {
  WEBHOOK_EVENT_TYPES,
  type WebhookDelivery,
  type WebhookEndpoint,
} from '../lib/webhooks/manage_webhooks.ts';
import { AppLayout } from './AppLayout.tsx';
import { Badge } from './Badge.tsx';
import { CsrfField, Notice, TextField } from './Field.tsx';
import { DirIcon, useI18n } from './I18n.tsx';
import { Island } from './Island.tsx';

export interface WebhookForm {
  values: Record<string, string | string[]>;
  errors: Record<string, string>;
}

type PageNotice = { tone: 'good' | 'bad'; title: string } | undefined;

const STATE_TONE = { pending: 'warn', delivered: 'good', failed: 'bad', dead: 'bad' } as const;

function EndpointState(props: { endpoint: WebhookEndpoint }) {
  const { t } = useI18n();
  const e = props.endpoint;
  if (!e.enabled)
    return <Badge tone="bad" text={e.disabledReason ? t('webhooks.offGone') : t('webhooks.disabled')} />;
  return <Badge tone="good" text={t('webhooks.enabled')} />;
}

/** The secret just made (a new endpoint or a rotation): shown this once, with a copy button. */
function SecretOnce(props: { secret: string; url: string }) {
  const { t } = useI18n();
  return (
    <div class="reveal" role="status" id="webhook-secret">
      <p class="notice-title">{t('webhooks.secretOnce')}</p>
      <p class="small url-break" dir="ltr">
        {props.url}
      </p>
      <div class="reveal-row">
        <code class="secret">{props.secret}</code>
        <Island
          name="CopyButton"
          component={CopyButton}
          props={{ text: props.secret, label: t('copy.copy'), copiedLabel: t('copy.copied') }}
        />
      </div>
    </div>
  );
}

export function WebhooksPage(props: {
  session: UiSession;
  endpoints: WebhookEndpoint[];
  form?: WebhookForm | undefined;
  notice?: PageNotice;
}) {
  const { t } = useI18n();
  const v = props.form?.values ?? {};
  const errors = props.form?.errors ?? {};
  const chosen = [v.eventTypes ?? ['link.created', 'link.updated', 'link.deleted']].flat();
  return (
    <AppLayout title={t('webhooks.title')} session={props.session} section="ops">
      <div class="page-header">
        <div>
          <h1>{t('webhooks.title')}</h1>
          <p class="muted">{t('webhooks.lead')}</p>
        </div>
        <a class="btn btn-secondary" href="/ui/ops">
          <DirIcon glyph="←" /> {t('nav.ops')}
        </a>
      </div>
      {props.notice && <Notice tone={props.notice.tone} title={props.notice.title} />}
      <section class="card" aria-labelledby="endpoints-title">
        <h2 id="endpoints-title">{t('webhooks.endpoints')}</h2>
        {props.endpoints.length === 0 ? (
          <p class="muted">{t('webhooks.none')}</p>
        ) : (
          <div class="table-scroll">
            <table class="data-table">
              <thead>
                <tr>
                  <th scope="col">{t('webhooks.col.url')}</th>
                  <th scope="col">{t('webhooks.col.events')}</th>
                  <th scope="col">{t('webhooks.col.state')}</th>
                </tr>
              </thead>
              <tbody>
                {props.endpoints.map((e) => (
                  <tr key={e.id} id={`endpoint-${e.id}`}>
                    <td data-label={t('webhooks.col.url')}>
                      <a href={`/ui/ops/webhooks/${e.id}`} class="url-break" dir="ltr">
                        {e.url}
                      </a>
                      {e.description && (
                        <div class="muted small">
                          <bdi dir="auto">{e.description}</bdi>
                        </div>
                      )}
                    </td>
                    <td data-label={t('webhooks.col.events')} class="small">
                      <code>{e.eventTypes.join(', ')}</code>
                    </td>
                    <td data-label={t('webhooks.col.state')}>
                      <EndpointState endpoint={e} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section class="card" aria-labelledby="add-title">
        <h2 id="add-title">{t('webhooks.add')}</h2>
        <form method="post" action="/ui/ops/webhooks" novalidate>
          <CsrfField token={props.session.csrfToken} />
          <TextField
            name="url"
            type="url"
            label={t('webhooks.field.url')}
            hint={t('webhooks.field.urlHint')}
            required
            dir="ltr"
            maxLength={2048}
            value={String(v.url ?? '')}
            error={errors.url}
          />
          <TextField
            name="description"
            label={t('webhooks.field.description')}
            dir="auto"
            maxLength={200}
            value={String(v.description ?? '')}
            error={errors.description}
          />
          <fieldset class={`field checkboxes${errors.eventTypes ? ' has-error' : ''}`}>
            <legend>{t('webhooks.field.events')}</legend>
            {WEBHOOK_EVENT_TYPES.map((type) => (
              <label key={type} class="checkbox">
                <input type="checkbox" name="eventTypes" value={type} checked={chosen.includes(type)} />{' '}
                <code>{type}</code> <span class="muted small">{t(`webhooks.event.${type}`)}</span>
              </label>
            ))}
            {errors.eventTypes && <p class="field-message is-error">✗ {errors.eventTypes}</p>}
          </fieldset>
          <button type="submit" class="btn btn-primary">
            {t('webhooks.create')}
          </button>
        </form>
      </section>
    </AppLayout>
  );
}

export function WebhookDetailPage(props: {
  session: UiSession;
  endpoint: WebhookEndpoint;
  deliveries: WebhookDelivery[];
  secret?: string | undefined;
  notice?: PageNotice;
  graceError?: string | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const e = props.endpoint;
  const base = `/ui/ops/webhooks/${e.id}`;
  const action = (path: string, label: string, tone = 'btn-secondary') => (
    <form method="post" action={`${base}/${path}`} class="inline-form">
      <CsrfField token={props.session.csrfToken} />
      <button class={`btn ${tone}`} type="submit">
        {label}
      </button>
    </form>
  );
  return (
    <AppLayout title={t('webhooks.detail', { id: String(e.id) })} session={props.session} section="ops">
      <div class="page-header">
        <div>
          <h1>{t('webhooks.detail', { id: String(e.id) })}</h1>
          <p class="url-break" dir="ltr">
            {e.url}
          </p>
        </div>
        <a class="btn btn-secondary" href="/ui/ops/webhooks">
          <DirIcon glyph="←" /> {t('webhooks.back')}
        </a>
      </div>
      {props.notice && <Notice tone={props.notice.tone} title={props.notice.title} />}
      {props.secret && <SecretOnce secret={props.secret} url={e.url} />}
      <section class="card" aria-labelledby="endpoint-title">
        <h2 id="endpoint-title">{t('webhooks.settings')}</h2>
        <dl class="facts">
          <dt>{t('webhooks.col.state')}</dt>
          <dd>
            <EndpointState endpoint={e} />
          </dd>
          <dt>{t('webhooks.col.events')}</dt>
          <dd>
            <code>{e.eventTypes.join(', ')}</code>
          </dd>
          {e.description && (
            <>
              <dt>{t('webhooks.field.description')}</dt>
              <dd>
                <bdi dir="auto">{e.description}</bdi>
              </dd>
            </>
          )}
          {e.previousSecretUntil && (
            <>
              <dt>{t('webhooks.secret')}</dt>
              <dd>{t('webhooks.rotating', { until: i18n.dateTime(new Date(e.previousSecretUntil)) })}</dd>
            </>
          )}
          {e.pausedUntil && (
            <>
              <dt>{t('webhooks.pausedTitle')}</dt>
              <dd>{t('webhooks.paused', { until: i18n.dateTime(new Date(e.pausedUntil)) })}</dd>
            </>
          )}
        </dl>
        <p>
          {e.enabled
            ? action('disable', t('webhooks.turnOff'))
            : action('enable', t('webhooks.turnOn'), 'btn-primary')}{' '}
          {action('delete', t('webhooks.delete'), 'btn-danger')}
        </p>
      </section>
      <section class="card" aria-labelledby="rotate-title">
        <h2 id="rotate-title">{t('webhooks.rotate')}</h2>
        <p class="muted">{t('webhooks.rotateLead')}</p>
        <form method="post" action={`${base}/rotate`} novalidate>
          <CsrfField token={props.session.csrfToken} />
          <TextField
            name="graceSeconds"
            label={t('webhooks.field.grace')}
            hint={t('webhooks.field.graceHint')}
            dir="ltr"
            value=""
            error={props.graceError}
          />
          <button type="submit" class="btn btn-primary">
            {t('webhooks.rotateButton')}
          </button>
        </form>
      </section>
      <section class="card" aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">{t('webhooks.deliveries')}</h2>
        {props.deliveries.length === 0 ? (
          <p class="muted">{t('webhooks.noDeliveries')}</p>
        ) : (
          <div class="table-scroll">
            <table class="data-table">
              <thead>
                <tr>
                  <th scope="col">{t('webhooks.col.event')}</th>
                  <th scope="col">{t('webhooks.col.state')}</th>
                  <th scope="col">{t('webhooks.col.attempts')}</th>
                  <th scope="col">
                    <span class="visually-hidden">{t('ops.col.actions')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {props.deliveries.map((d) => (
                  <tr key={d.id} id={`delivery-${d.id}`}>
                    <td data-label={t('webhooks.col.event')}>
                      <code>{d.eventType}</code>
                      <div class="muted small">{i18n.dateTime(new Date(d.createdAt))}</div>
                      <div class="mono small" dir="ltr">
                        {d.id}
                      </div>
                    </td>
                    <td data-label={t('webhooks.col.state')}>
                      <Badge tone={STATE_TONE[d.state]} text={t(`webhooks.state.${d.state}`)} />
                    </td>
                    <td data-label={t('webhooks.col.attempts')}>
                      {d.log.length === 0 ? (
                        <span class="muted">{t('webhooks.notYet')}</span>
                      ) : (
                        <details>
                          <summary>{t('webhooks.attemptCount', { count: d.log.length })}</summary>
                          <ol class="attempts">
                            {d.log.map((a) => (
                              <li key={a.attemptedAt}>
                                {t('webhooks.attempt', {
                                  when: i18n.dateTime(new Date(a.attemptedAt)),
                                  outcome: t(`webhooks.outcome.${a.outcome}`),
                                  ms: i18n.number(a.latencyMs),
                                })}{' '}
                                <code>{a.statusCode ?? '—'}</code>
                                {(a.error || a.responseBody) && (
                                  <div class="small">
                                    <code class="url-break">{a.error ?? a.responseBody}</code>
                                  </div>
                                )}
                              </li>
                            ))}
                          </ol>
                        </details>
                      )}
                    </td>
                    <td>
                      {action(`deliveries/${encodeURIComponent(d.id)}/redeliver`, t('webhooks.sendAgain'))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </AppLayout>
  );
}
