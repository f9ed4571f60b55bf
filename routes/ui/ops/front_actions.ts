// Operations workflows started from the page: drill, failover or failback, the DNS confirmation, reconcile, re-scan.
import { Hono } from 'hono';
import { FRONTS } from '../../../lib/failover/active_front.ts';
import { getRunningFrontChange, requestFrontChange } from '../../../lib/failover/request_front_change.ts';
import { ConflictError } from '../../../lib/shared/errors.ts';
import { storedDomainFromInput } from '../../../lib/shared/link_key.ts';
import type { WebDeps } from '../../app_env.ts';
import type { UiEnv } from '../ui_env.ts';
import { actorOf, opsAction, type RenderOps } from './ops_page.tsx';

export function createFrontActionRoutes(deps: WebDeps, render: RenderOps) {
  const app = new Hono<UiEnv>();

  // Failover (to the in-house resolver), failback (to Bitly) or a drill; one front change at a time.
  app.post('/front', async (c) => {
    const body = await c.req.parseBody();
    const drill = body.drill === 'true';
    const to = FRONTS.find((f) => f === body.to);
    return opsAction(
      c,
      render,
      async () => {
        const { t } = c.get('i18n');
        if (!to) throw new ConflictError(t('ops.chooseFront'));
        // The short domain whose front changes (absent: the default, as the page with one domain sends it).
        const domain = storedDomainFromInput(
          deps.config,
          typeof body.domain === 'string' ? body.domain : undefined,
        );
        if (domain === undefined) throw new ConflictError(t('ops.unknownDomain'));
        if (!drill && body.confirm !== 'yes') throw new ConflictError(t('ops.tickToConfirm'));
        await requestFrontChange(
          { sql: deps.sql, ops: deps.ops, config: deps.config },
          { to, drill, domain, requestedBy: actorOf(c).name, emergency: body.emergency === 'yes' },
        );
      },
      drill ? 'drill' : to === 'inhouse' ? 'failover' : 'failback',
    );
  });

  // The operator changed the short domain's DNS by hand: the waiting failover continues.
  app.post('/front/dns-changed', (c) =>
    opsAction(
      c,
      render,
      async () => {
        const running = await getRunningFrontChange(deps.sql);
        const state = running ? await deps.ops.describeFrontChange(running.workflowId) : null;
        if (!running || !state?.waitingForDns) throw new ConflictError(c.get('i18n').t('ops.noDnsWait'));
        await deps.ops.signalDnsChanged(running.workflowId, actorOf(c).name);
      },
      'dns',
    ),
  );

  app.post('/reconcile', (c) =>
    opsAction(
      c,
      render,
      () =>
        deps.ops.startReconcile({ reason: `manual, by ${actorOf(c).name}`, repair: true, importExtra: true }),
      'reconcile',
    ),
  );

  app.post('/rescan', (c) =>
    opsAction(
      c,
      render,
      () => deps.ops.startRescan({ trigger: 'manual', reason: `manual, by ${actorOf(c).name}` }),
      'rescan',
    ),
  );

  return app;
}
