import { Hono } from 'hono';
import { aliasSchema } from '../../lib/links/code_rules.ts';
import { isCodeTaken } from '../../lib/links/get_link.ts';
import { targetUrlSchema } from '../../lib/links/link.ts';
import { targetPolicyProblem } from '../../lib/links/target_policy.ts';
import type { WebDeps } from '../app_env.ts';
import type { UiEnv } from './ui_env.ts';

/**
 * GET /ui/api/check?field=url|alias&value=...: the live check behind the create form's fields, applying
 * the very rules the server applies on submit (and, for an alias, whether it is free).
 */
export function createCheckFieldRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();
  const shortBase = deps.config.shortBaseUrl.replace(/^https?:\/\//, '');

  app.get('/check', async (c) => {
    if (!c.get('session')) return c.json({ ok: false, message: 'Sign in again.' }, 401);
    const field = c.req.query('field');
    const value = (c.req.query('value') ?? '').trim();
    if (field === 'url') {
      const parsed = targetUrlSchema.safeParse(value);
      if (!parsed.success)
        return c.json({ ok: false, message: `The URL ${parsed.error.issues[0]?.message}.` });
      // The canonical form is what gets stored and sent in Location; say so when it differs from the input.
      const problem = targetPolicyProblem(parsed.data, deps.targetPolicy);
      if (problem) return c.json({ ok: false, message: `The URL ${problem}.` });
      if (parsed.data !== value) return c.json({ ok: true, message: `Looks good; saved as ${parsed.data}` });
      return c.json({ ok: true, message: 'Looks good.' });
    }
    if (field === 'alias') {
      const parsed = aliasSchema.safeParse(value);
      if (!parsed.success)
        return c.json({ ok: false, message: `The alias ${parsed.error.issues[0]?.message}.` });
      // Deleted codes stay taken: a code is never reused.
      if (await isCodeTaken(deps.sql, value))
        return c.json({ ok: false, message: `${shortBase}/${value} is taken.` });
      return c.json({ ok: true, message: `${shortBase}/${value} is available.` });
    }
    return c.json({ ok: false, message: 'Unknown field.' }, 400);
  });

  return app;
}
