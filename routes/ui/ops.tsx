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

const DONE = [
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
] as const;
type Done = (typeof DONE)[number];

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
  async function userAction(c: Context<UiEnv>, action: () => Promise<unknown>, done: Done) {
    try {
      await action();
      return c.redirect(`/ui/ops?done=${done}#users`, 303);
    } catch (error) {
      if (error instanceof AppError && error.status < 500) {
        const i18n = c.get('i18n');
        const message = i18n.problem(error.extra.errors?.[0] ?? error.message);
        return render(
          c,
          { userForm: { values: {}, errors: { user: i18n.t('ops.notDone', { problem: message }) } } },
          error.status as 422,
        );
      }
      throw error;
    }
  }

  /** Runs an operations action; a refusal (conflict, validation, Temporal down) is shown on the page. */
  async function opsAction(c: Context<UiEnv>, action: () => Promise<unknown>, done: Done) {
    try {
      await action();
      return c.redirect(`/ui/ops?done=${done}#actions`, 303);
    } catch (error) {
      if (error instanceof AppError) {
        const i18n = c.get('i18n');
        const reason = error.extra.errors?.[0]?.message;
        const problem = `${i18n.problem(error.message)}${reason ? ` (${i18n.problem(reason)})` : ''}`;
        const title = i18n.t('ops.notStarted', { problem });
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
        const { t } = c.get('i18n');
        if (!to) throw new ConflictError(t('ops.chooseFront'));
        if (!drill && body.confirm !== 'yes') throw new ConflictError(t('ops.tickToConfirm'));
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
        if (!running || !state?.waitingForDns) throw new ConflictError(c.get('i18n').t('ops.noDnsWait'));
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
    const done = DONE.find((d) => d === c.req.query('done'));
    return render(c, done ? { notice: { tone: 'good', title: c.get('i18n').t(`ops.done.${done}`) } } : {});
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
          notice: {
            tone: 'good',
            title: c.get('i18n').t('ops.userAdded', {
              email: user.email,
              role: c.get('i18n').t(`role.${user.role}`),
            }),
          },
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
        return render(
          c,
          { userForm: { values: {}, errors: { user: c.get('i18n').problem(error.message) } } },
          404,
        );
      throw error;
    }
  });

  return app;
}
