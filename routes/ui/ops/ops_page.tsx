// Rendering the operations page for a request: its view, labels for form errors, and the outcome of an action.
import type { Context } from 'hono';
import { OpsPage } from '../../../components/OpsPage.tsx';
import type { OpsView } from '../../../components/ops/ops_view.ts';
import { getDomainWatchOverview } from '../../../lib/domains/domain_watch_overview.ts';
import { getEscrowOverview } from '../../../lib/escrow/get_escrow_overview.ts';
import { getActiveFronts } from '../../../lib/failover/active_front.ts';
import { frontRunDomain, getRunningFrontChange } from '../../../lib/failover/request_front_change.ts';
import { getAdoptionOverview } from '../../../lib/operations/adoption_overview.ts';
import { getOpsOverview } from '../../../lib/operations/get_ops_overview.ts';
import { getProbeOverview } from '../../../lib/prober/probe_overview.ts';
import { AppError } from '../../../lib/shared/errors.ts';
import { domainNameOf, storedShortDomains } from '../../../lib/shared/link_key.ts';
import { toFieldSentences } from '../../../lib/ui/link_form.ts';
import type { WebDeps } from '../../app_env.ts';
import { renderPage } from '../render_page.ts';
import type { UiEnv } from '../ui_env.ts';

/** What a finished action says at the top of the page (`?done=`). */
export const DONE = [
  'revoked',
  'disabled',
  'enabled',
  'role',
  'drill',
  'failover',
  'failback',
  'dns',
  'reconcile',
  'rescan',
  'escrow',
  'snapshot',
  'signedOut',
  'mfaReset',
] as const;
export type Done = (typeof DONE)[number];

export type OpsExtras = Omit<Parameters<typeof OpsPage>[0], 'session' | 'view' | 'timeZone'>;
export type RenderOps = (
  c: Context<UiEnv>,
  extras?: OpsExtras,
  status?: 200 | 201 | 404 | 409 | 422 | 503,
) => Promise<Response>;

/** The signed-in admin as an actor in audit records. */
export const actorOf = (c: Context<UiEnv>) => {
  const { user } = c.get('session')!;
  return { id: user.id, name: `user:${user.email}` };
};

async function loadView(deps: WebDeps): Promise<OpsView> {
  const [{ front, runs, keys, users }, running, adoption, escrow, domainFacts, probes] = await Promise.all([
    getOpsOverview(deps.sql),
    getRunningFrontChange(deps.sql),
    getAdoptionOverview(deps.sql),
    getEscrowOverview({ sql: deps.sql, config: deps.config, logger: deps.logger }),
    getDomainWatchOverview(deps.sql),
    getProbeOverview({ sql: deps.sql, config: deps.config }),
  ]);
  const { uiUrl, namespace } = deps.config.temporal;
  const state = running ? await deps.ops.describeFrontChange(running.workflowId).catch(() => null) : null;
  const fronts = await getActiveFronts(deps.sql, storedShortDomains(deps.config));
  return {
    front,
    fronts: fronts.map(({ domain, front: f }) => ({
      domain: domainNameOf(deps.config, domain),
      active: f.active,
      since: f.since,
      bitly: deps.config.bitly !== undefined && (domain === '' || deps.config.bitlyDomains.has(domain)),
    })),
    bitlyConfigured: deps.config.bitly !== undefined,
    frontChange: running
      ? {
          kind: running.kind,
          workflowId: running.workflowId,
          step: state?.step ?? null,
          waitingForDns: state?.waitingForDns ?? false,
          ...(typeof running.report.to === 'string' ? { to: running.report.to } : {}),
          domain: domainNameOf(deps.config, frontRunDomain(running)),
          steps: state?.steps ?? [],
          ttlWaitUntil: state?.ttlWaitUntilMs ? new Date(state.ttlWaitUntilMs) : null,
        }
      : null,
    runs,
    keys,
    users,
    temporalUrl: uiUrl ? `${uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows` : null,
    adoption,
    escrow,
    domains: { interval: deps.config.domainWatch.interval, facts: domainFacts },
    probes,
  };
}

/** Renders the page with everything loaded fresh, the extras (notice, forms, a secret shown once) on top. */
export function opsPageRenderer(deps: WebDeps): RenderOps {
  return async (c, extras = {}, status = 200) => {
    const i18n = c.get('i18n');
    const { t } = i18n;
    const labels: Record<string, string> =
      i18n.locale === 'en'
        ? {
            name: 'The name',
            scopes: 'Scopes',
            email: 'The email',
            password: 'The password',
            role: 'The role',
          }
        : {
            name: t('ops.name'),
            scopes: t('ops.scopes'),
            email: t('ops.email'),
            password: t('ops.password'),
            role: t('ops.role'),
          };
    for (const form of [extras.keyForm, extras.userForm]) {
      if (form) form.errors = toFieldSentences(form.errors, labels, i18n);
    }
    return renderPage(
      c,
      <OpsPage
        session={c.get('session')!}
        view={await loadView(deps)}
        timeZone={c.get('timeZone')}
        {...extras}
      />,
      status,
    );
  };
}

/** Runs an operations action; a refusal (conflict, validation, Temporal down) is shown on the page. */
export async function opsAction(
  c: Context<UiEnv>,
  render: RenderOps,
  action: () => Promise<unknown>,
  done: Done,
) {
  try {
    await action();
    return c.redirect(`/ui/ops?done=${done}#actions`, 303);
  } catch (error) {
    if (error instanceof AppError) {
      const i18n = c.get('i18n');
      const reason = error.extra.errors?.[0];
      const problem = `${i18n.problem(error.message)}${reason ? ` (${i18n.problem(reason)})` : ''}`;
      const title = i18n.t('ops.notStarted', { problem });
      const status = error.status === 409 || error.status === 503 ? error.status : 422;
      return render(c, { notice: { tone: 'bad', title } }, status);
    }
    throw error;
  }
}
