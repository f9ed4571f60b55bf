// The operations workflows' buttons: drill, failover or failback, the DNS confirmation, reconcile, re-scan.
import type { I18n } from '../../lib/i18n/translator.ts';
import { Badge } from '../Badge.tsx';
import { CsrfField } from '../Field.tsx';
import { FrontChangeSteps, stepName } from '../FrontChangeSteps.tsx';
import { useI18n } from '../I18n.tsx';
import { vendorName } from '../link_fields.ts';
import type { OpsView } from './ops_view.ts';

const KINDS = ['failover', 'failback', 'drill'] as const;
const kindName = (i18n: I18n, kind: string) => {
  const known = KINDS.find((k) => k === kind);
  return known ? i18n.t(`ops.kind.${known}`) : kind;
};

/** Buttons for the operations workflows: drill, failover/failback, the DNS confirmation, reconcile, re-scan. */
export function OpsActions(props: { view: OpsView; csrfToken: string; timeZone: string }) {
  const i18n = useI18n();
  const { t } = i18n;
  const { view, csrfToken } = props;
  const change = view.frontChange;
  const fronts = view.fronts ?? [];
  // The DNS confirmation names the front other than the changing domain's active one.
  const changing = fronts.find((f) => f.domain === change?.domain) ?? view.front;
  const otherName = vendorName(i18n, changing.active === 'inhouse' ? 'bitly' : 'inhouse');
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
            {change.domain && fronts.length > 1 ? (
              <>
                {' · '}
                <bdi class="mono small" dir="ltr">
                  {change.domain}
                </bdi>
              </>
            ) : (
              ''
            )}
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
      ) : fronts.length > 1 ? (
        fronts.map((f) => (
          <div key={f.domain} class="subform" data-domain={f.domain}>
            <h3>
              {i18n.rich('ops.frontOf', {
                domain: (
                  <bdi class="mono" dir="ltr">
                    {f.domain}
                  </bdi>
                ),
              })}
            </h3>
            <FrontForms
              active={f.active}
              canBitly={f.bitly}
              bitlyConfigured={view.bitlyConfigured}
              domain={f.domain}
              csrfToken={csrfToken}
            />
          </div>
        ))
      ) : (
        <FrontForms
          active={view.front.active}
          canBitly={view.bitlyConfigured}
          bitlyConfigured={view.bitlyConfigured}
          csrfToken={csrfToken}
        />
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

/**
 * A short domain's drill and switch forms (to the front it does not have); `domain` (its host name) is sent with
 * them when the deployment has several, and Bitly is offered only where it can front the domain.
 */
function FrontForms(props: {
  active: string;
  canBitly: boolean;
  /** Bitly is configured at all (else the page says so, rather than that this domain has none). */
  bitlyConfigured: boolean;
  domain?: string;
  csrfToken: string;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const other = props.active === 'inhouse' ? 'bitly' : 'inhouse';
  const otherName = vendorName(i18n, other);
  const canSwitch = other === 'inhouse' || props.canBitly;
  const domainField = props.domain ? <input type="hidden" name="domain" value={props.domain} /> : null;
  return (
    <div class="grid-2">
      <form method="post" action="/ui/ops/front" class="subform">
        <CsrfField token={props.csrfToken} />
        {domainField}
        <input type="hidden" name="to" value={other} />
        <input type="hidden" name="drill" value="true" />
        <h3>{t('ops.drill')}</h3>
        <p class="small muted">{t('ops.drillLead', { front: otherName })}</p>
        <button type="submit" class="btn btn-secondary" disabled={!canSwitch}>
          {t('ops.runDrill')}
        </button>
      </form>
      <form method="post" action="/ui/ops/front" class="subform">
        <CsrfField token={props.csrfToken} />
        {domainField}
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
          <p class="small muted">{props.bitlyConfigured ? t('ops.noBitlyDomain') : t('ops.noBitly')}</p>
        )}
      </form>
    </div>
  );
}
