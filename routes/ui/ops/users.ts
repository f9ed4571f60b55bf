// People from the page: add an account, change a role, disable or enable one, reset a password.
import { type Context, Hono } from 'hono';
import {
  createUser,
  createUserInputSchema,
  resetSecondFactorAsAdmin,
  resetUserPassword,
  revokeUserSessionsAsAdmin,
  setUserDisabled,
  setUserRole,
} from '../../../lib/auth/manage_users.ts';
import { USER_ROLES } from '../../../lib/auth/permissions.ts';
import { AppError } from '../../../lib/shared/errors.ts';
import { toFieldErrors } from '../../../lib/shared/validation.ts';
import { toFieldMap, toFormValues } from '../../../lib/ui/link_form.ts';
import type { WebDeps } from '../../app_env.ts';
import type { UiEnv } from '../ui_env.ts';
import { actorOf, type Done, type RenderOps } from './ops_page.tsx';

export function createUserRoutes(deps: WebDeps, render: RenderOps) {
  const app = new Hono<UiEnv>();
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
    const typed = (await c.req.parseBody()).role;
    const role = USER_ROLES.find((r) => r === typed);
    if (!role) {
      const i18n = c.get('i18n');
      return render(
        c,
        {
          userForm: {
            values: {},
            errors: { user: i18n.t('ops.notDone', { problem: i18n.t('ops.noSuchRole') }) },
          },
        },
        422,
      );
    }
    return userAction(c, () => setUserRole(deps.sql, idParam(c), role, actorOf(c)), 'role');
  });
  app.post('/users/:id/sessions/revoke', (c) =>
    userAction(c, () => revokeUserSessionsAsAdmin(deps.sql, idParam(c), actorOf(c)), 'signedOut'),
  );
  app.post('/users/:id/mfa/reset', (c) =>
    userAction(c, () => resetSecondFactorAsAdmin(deps.sql, idParam(c), actorOf(c)), 'mfaReset'),
  );
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
