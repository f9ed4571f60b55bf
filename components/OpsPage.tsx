// The operations page (admins): composes its cards, each in components/ops/.
import type { UiSession } from '../lib/auth/sessions.ts';
import { AdoptionRuns } from './AdoptionRuns.tsx';
import { AppLayout } from './AppLayout.tsx';
import { EscrowCard } from './EscrowCard.tsx';
import { Notice } from './Field.tsx';
import { DirIcon, useI18n } from './I18n.tsx';
import { ActiveFrontCard } from './ops/ActiveFrontCard.tsx';
import { ApiKeysCard, type KeyForm } from './ops/ApiKeysCard.tsx';
import { DomainWatchCard } from './ops/DomainWatchCard.tsx';
import { OpsActions } from './ops/OpsActions.tsx';
import type { OpsView } from './ops/ops_view.ts';
import { ProbeCard } from './ops/ProbeCard.tsx';
import { RunCard } from './ops/RunCard.tsx';
import { type UserForm, UsersCard } from './ops/UsersCard.tsx';

/** Operations (admins): the active front, the last reconciliation and drill, API keys and users. */
export function OpsPage(props: {
  session: UiSession;
  view: OpsView;
  timeZone: string;
  notice?: { tone: 'good' | 'warn' | 'bad' | 'info'; title: string; text?: string } | undefined;
  newKey?: { name: string; key: string } | undefined;
  newPassword?: { email: string; password: string } | undefined;
  keyForm?: KeyForm | undefined;
  userForm?: UserForm | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { view, timeZone, session } = props;
  const latest = (kind: string) => view.runs.find((r) => r.kind === kind);
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
        <ActiveFrontCard front={view.front} {...(view.fronts ? { fronts: view.fronts } : {})} />
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

      {view.domains && <DomainWatchCard domains={view.domains} />}
      {view.probes && <ProbeCard probes={view.probes} />}

      <OpsActions view={view} csrfToken={session.csrfToken} timeZone={timeZone} />
      {view.escrow && <EscrowCard escrow={view.escrow} timeZone={timeZone} csrfToken={session.csrfToken} />}

      {view.adoption && (
        <AdoptionRuns adoption={view.adoption} timeZone={timeZone} temporalUrl={view.temporalUrl} />
      )}

      <section class="card" id="webhooks" aria-labelledby="webhooks-title">
        <h2 id="webhooks-title">{t('webhooks.title')}</h2>
        <p class="muted">{t('webhooks.opsLead')}</p>
        <a class="btn btn-secondary" href="/ui/ops/webhooks">
          {t('webhooks.open')}
        </a>
      </section>

      <ApiKeysCard
        keys={view.keys}
        csrfToken={session.csrfToken}
        newKey={props.newKey}
        keyForm={props.keyForm}
      />

      <UsersCard
        users={view.users}
        session={session}
        newPassword={props.newPassword}
        userForm={props.userForm}
      />
    </AppLayout>
  );
}
