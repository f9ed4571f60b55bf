import { type Context, Hono } from 'hono';
import { OpsPage, type OpsView } from '../../components/OpsPage.tsx';
import { createApiKeyInputSchema, issueApiKey, revokeIssuedApiKey } from '../../lib/auth/issue_api_key.ts';
import {
  createUser,
  createUserInputSchema,
  resetUserPassword,
  setUserDisabled,
  setUserRole,
} from '../../lib/auth/manage_users.ts';
import { openExportDownload } from '../../lib/escrow/export_archive.ts';
import { getEscrowOverview } from '../../lib/escrow/get_escrow_overview.ts';
import { FRONTS } from '../../lib/failover/active_front.ts';
import { getRunningFrontChange, requestFrontChange } from '../../lib/failover/request_front_change.ts';
import { getAdoptionOverview } from '../../lib/operations/adoption_overview.ts';
import { getOpsOverview } from '../../lib/operations/get_ops_overview.ts';
import { AppError, ConflictError, NotFoundError } from '../../lib/shared/errors.ts';
import { toFieldErrors } from '../../lib/shared/validation.ts';
import { toFieldMap, toFieldSentences, toFormValues } from '../../lib/ui/link_form.ts';
import type { WebDeps } from '../app_env.ts';
import { forgetCachedApiKeys } from '../middleware/api_key_auth.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

const OPS_FIELD_LABELS: Record<string, string> = {
  name: 'The name',
  scopes: 'Scopes',
  email: 'The email',
  password: 'The password',
  role: 'The role',
};

type OpsExtras = Omit<Parameters<typeof OpsPage>[0], 'session' | 'view' | 'timeZone'>;

/** /ui/ops (admins only): operations status, API keys and users. */
export function createOpsRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();

  async function loadView(): Promise<OpsView> {
    const [{ front, runs, keys, users }, running, adoption, escrow] = await Promise.all([
      getOpsOverview(deps.sql),
      getRunningFrontChange(deps.sql),
      getAdoptionOverview(deps.sql),
      getEscrowOverview({ sql: deps.sql, config: deps.config, logger: deps.logger }),
    ]);
    const { uiUrl, namespace } = deps.config.temporal;
    const state = running ? await deps.ops.describeFrontChange(running.workflowId).catch(() => null) : null;
    return {
      front,
      bitlyConfigured: deps.config.bitly !== undefined,
      frontChange: running
        ? {
            kind: running.kind,
            workflowId: running.workflowId,
            step: state?.step ?? null,
            waitingForDns: state?.waitingForDns ?? false,
            ...(typeof running.report.to === 'string' ? { to: running.report.to } : {}),
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
    };
  }

  const render = async (
    c: Context<UiEnv>,
    extras: OpsExtras = {},
    status: 200 | 201 | 404 | 409 | 422 | 503 = 200,
  ) => {
    for (const form of [extras.keyForm, extras.userForm]) {
      if (form) form.errors = toFieldSentences(form.errors, OPS_FIELD_LABELS);
    }
    return renderPage(
      c,
      <OpsPage
        session={c.get('session')!}
        view={await loadView()}
        timeZone={c.get('timeZone')}
        {...extras}
      />,
      status,
    );
  };
  const actorOf = (c: Context<UiEnv>) => {
    const { user } = c.get('session')!;
    return { id: user.id, name: `user:${user.email}` };
  };
  const idParam = (c: Context<UiEnv>) => Number(c.req.param('id'));
  /** Turns a refused user change into the page with the reason at the users table. */
  async function userAction(c: Context<UiEnv>, action: () => Promise<unknown>, done: string) {
    try {
      await action();
      return c.redirect(`/ui/ops?done=${done}#users`, 303);
    } catch (error) {
      if (error instanceof AppError && error.status < 500) {
        const message = error.extra.errors?.[0]?.message ?? error.message;
        return render(
          c,
          { userForm: { values: {}, errors: { user: `Not done: ${message}` } } },
          error.status as 422,
        );
      }
      throw error;
    }
  }

  const DONE: Record<string, string> = {
    revoked: 'API key revoked. It stops working within seconds on every server.',
    disabled: 'User disabled and signed out everywhere.',
    enabled: 'User enabled.',
    role: 'Role changed.',
    drill: 'Drill started: it rehearses the whole failover except the switch. Its report appears here.',
    failover: 'Failover started. Follow its steps here or in Temporal UI.',
    failback: 'Failback started. Follow its steps here or in Temporal UI.',
    dns: 'DNS change recorded: the failover verifies the new front and finishes.',
    reconcile: 'Reconciliation started: Postgres, the serving store and Bitly are compared and repaired.',
    rescan: 'Safety re-scan started: every live destination is checked again.',
    escrow: 'Escrow export started: it appears here (and can be downloaded) once its manifest is written.',
    snapshot: 'Static snapshot started: SNAPSHOT_DIR/current points at it once it is complete.',
  };

  /** Runs an operations action; a refusal (conflict, validation, Temporal down) is shown on the page. */
  async function opsAction(c: Context<UiEnv>, action: () => Promise<unknown>, done: string) {
    try {
      await action();
      return c.redirect(`/ui/ops?done=${done}#actions`, 303);
    } catch (error) {
      if (error instanceof AppError) {
        const reason = error.extra.errors?.[0]?.message;
        const title = `Not started: ${error.message}${reason ? ` (${reason})` : ''}`;
        const status = error.status === 409 || error.status === 503 ? error.status : 422;
        return render(c, { notice: { tone: 'bad', title } }, status);
      }
      throw error;
    }
  }

  // Failover (to the in-house resolver), failback (to Bitly) or a drill; one front change at a time.
  app.post('/front', async (c) => {
    const body = await c.req.parseBody();
    const drill = body.drill === 'true';
    const to = FRONTS.find((f) => f === body.to);
    return opsAction(
      c,
      async () => {
        if (!to) throw new ConflictError('choose Bitly or the in-house resolver.');
        if (!drill && body.confirm !== 'yes') {
          throw new ConflictError('tick the box to confirm a real switch of the short domain.');
        }
        await requestFrontChange(
          { sql: deps.sql, ops: deps.ops, config: deps.config },
          { to, drill, requestedBy: actorOf(c).name, emergency: body.emergency === 'yes' },
        );
      },
      drill ? 'drill' : to === 'inhouse' ? 'failover' : 'failback',
    );
  });

  // The operator changed the short domain's DNS by hand: the waiting failover continues.
  app.post('/front/dns-changed', (c) =>
    opsAction(
      c,
      async () => {
        const running = await getRunningFrontChange(deps.sql);
        const state = running ? await deps.ops.describeFrontChange(running.workflowId) : null;
        if (!running || !state?.waitingForDns) throw new ConflictError('no failover is waiting for DNS.');
        await deps.ops.signalDnsChanged(running.workflowId, actorOf(c).name);
      },
      'dns',
    ),
  );

  app.post('/reconcile', (c) =>
    opsAction(
      c,
      () =>
        deps.ops.startReconcile({ reason: `manual, by ${actorOf(c).name}`, repair: true, importExtra: true }),
      'reconcile',
    ),
  );

  app.post('/rescan', (c) =>
    opsAction(
      c,
      () => deps.ops.startRescan({ trigger: 'manual', reason: `manual, by ${actorOf(c).name}` }),
      'rescan',
    ),
  );

  // Escrow: export or snapshot now; download the latest export (admins only, like all of /ui/ops; audited).
  app.post('/escrow/export', (c) =>
    opsAction(c, () => deps.ops.startEscrowRun('export', `manual, by ${actorOf(c).name}`), 'escrow'),
  );
  app.post('/escrow/snapshot', (c) =>
    opsAction(c, () => deps.ops.startEscrowRun('snapshot', `manual, by ${actorOf(c).name}`), 'snapshot'),
  );
  app.get('/escrow/latest.tar', async (c) => {
    const archive = await openExportDownload(
      { sql: deps.sql, escrowDir: deps.config.escrow.dir },
      actorOf(c).name,
    );
    if (!archive) throw new NotFoundError('No finished escrow export to download (ESCROW_DIR).');
    return new Response(archive.stream(), {
      headers: {
        'Content-Type': 'application/x-tar',
        'Content-Length': String(archive.size),
        'Content-Disposition': `attachment; filename="${archive.filename}"`,
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      },
    });
  });

  app.get('/', (c) => {
    const done = DONE[c.req.query('done') ?? ''];
    return render(c, done ? { notice: { tone: 'good', title: done } } : {});
  });

  app.post('/keys', async (c) => {
    const body = await c.req.parseBody({ all: true });
    const scopes = [body.scopes ?? []].flat().filter((s): s is string => typeof s === 'string');
    const name = typeof body.name === 'string' ? body.name : '';
    const parsed = createApiKeyInputSchema.safeParse({ name, scopes });
    if (!parsed.success) {
      return render(
        c,
        { keyForm: { values: { name, scopes }, errors: toFieldMap(toFieldErrors(parsed.error)) } },
        422,
      );
    }
    const { row, key } = await issueApiKey(deps.sql, parsed.data, actorOf(c).name);
    return render(c, { newKey: { name: row.name, key } }, 201);
  });

  app.post('/keys/:id/revoke', async (c) => {
    await revokeIssuedApiKey(deps.sql, idParam(c), actorOf(c).name);
    forgetCachedApiKeys(deps.sql);
    return c.redirect('/ui/ops?done=revoked#keys', 303);
  });

  app.post('/users', async (c) => {
    const values = toFormValues(await c.req.parseBody());
    const parsed = createUserInputSchema.safeParse({
      email: (values.email ?? '').trim(),
      name: values.name ?? '',
      role: values.role ?? 'editor',
      password: values.password ?? '',
    });
    const shown = { email: values.email ?? '', name: values.name ?? '', role: values.role ?? 'editor' };
    if (!parsed.success) {
      return render(c, { userForm: { values: shown, errors: toFieldMap(toFieldErrors(parsed.error)) } }, 422);
    }
    try {
      const { user, generatedPassword } = await createUser(deps.sql, parsed.data, actorOf(c).name);
      return render(
        c,
        {
          notice: { tone: 'good', title: `${user.email} can now sign in as ${user.role}.` },
          ...(generatedPassword ? { newPassword: { email: user.email, password: generatedPassword } } : {}),
        },
        201,
      );
    } catch (error) {
      if (error instanceof AppError && error.status === 409) {
        return render(c, { userForm: { values: shown, errors: toFieldMap(error.extra.errors) } }, 409);
      }
      throw error;
    }
  });

  app.post('/users/:id/disable', (c) =>
    userAction(c, () => setUserDisabled(deps.sql, idParam(c), true, actorOf(c)), 'disabled'),
  );
  app.post('/users/:id/enable', (c) =>
    userAction(c, () => setUserDisabled(deps.sql, idParam(c), false, actorOf(c)), 'enabled'),
  );
  app.post('/users/:id/role', async (c) => {
    const role = (await c.req.parseBody()).role === 'admin' ? 'admin' : 'editor';
    return userAction(c, () => setUserRole(deps.sql, idParam(c), role, actorOf(c)), 'role');
  });
  app.post('/users/:id/password', async (c) => {
    try {
      const { user, password } = await resetUserPassword(deps.sql, idParam(c), actorOf(c));
      return render(c, { newPassword: { email: user.email, password } });
    } catch (error) {
      if (error instanceof AppError && error.status === 404)
        return render(c, { userForm: { values: {}, errors: { user: error.message } } }, 404);
      throw error;
    }
  });

  return app;
}
