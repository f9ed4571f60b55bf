import { Hono } from 'hono';
import { aliasSchema } from '../../lib/codes/code_rules.ts';
import { isCodeTaken } from '../../lib/links/get_link.ts';
import { targetUrlSchema } from '../../lib/links/link.ts';
import { targetRuleProblem } from '../../lib/targets/target_rule.ts';
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
    const i18n = c.get('i18n');
    const { t } = i18n;
    if (!c.get('session')) return c.json({ ok: false, message: t('error.signInAgain') }, 401);
    const field = c.req.query('field');
    const value = (c.req.query('value') ?? '').trim();
    // "The URL must use http or https." — the field named the way the form names it.
    const refuse = (label: string, problem: string) =>
      c.json({
        ok: false,
        message: i18n.locale === 'en' ? `The ${label} ${problem}.` : i18n.fieldSentence(label, problem),
      });
    if (field === 'url') {
      const label = i18n.locale === 'en' ? 'URL' : t('field.url');
      const parsed = targetUrlSchema.safeParse(value);
      if (!parsed.success) return refuse(label, parsed.error.issues[0]?.message ?? '');
      // The canonical form is what gets stored and sent in Location; say so when it differs from the input.
      const problem = targetRuleProblem(parsed.data, deps.targetPolicy);
      if (problem) return refuse(label, problem);
      if (parsed.data !== value)
        return c.json({ ok: true, message: t('check.looksGoodSavedAs', { url: parsed.data }) });
      return c.json({ ok: true, message: t('check.looksGood') });
    }
    if (field === 'alias') {
      const label = i18n.locale === 'en' ? 'alias' : t('field.alias');
      const parsed = aliasSchema.safeParse(value);
      if (!parsed.success) return refuse(label, parsed.error.issues[0]?.message ?? '');
      // Deleted codes stay taken: a code is never reused.
      if (await isCodeTaken(deps.sql, value))
        return c.json({ ok: false, message: t('check.taken', { url: `${shortBase}/${value}` }) });
      return c.json({ ok: true, message: t('check.available', { url: `${shortBase}/${value}` }) });
    }
    return c.json({ ok: false, message: t('check.unknownField') }, 400);
  });

  return app;
}
