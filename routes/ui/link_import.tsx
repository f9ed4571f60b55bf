import { type Context, Hono } from 'hono';
import { ImportLinksPage } from '../../components/ImportLinksPage.tsx';
import {
  IMPORT_MAX_BYTES,
  IMPORT_MAX_ROWS,
  type ImportOutcome,
  importLinks,
  parseImportCsv,
} from '../../lib/links/import_links.ts';
import { kickSyncQueueInBackground } from '../../lib/propagation/sync_after_change.ts';
import { ValidationError } from '../../lib/shared/errors.ts';
import { fieldProblem } from '../../lib/shared/field_problems.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

/**
 * /ui/links/import: upload a CSV of new links; every row is tried first (lib/links/import_links.ts, nothing
 * kept), then imported through the batch creation the API uses. The file travels back with the preview's form,
 * so nothing is stored between the two steps. Guarded as every /ui/links page is.
 */
export function createLinkImportRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();

  const render = (
    c: Context<UiEnv>,
    extra: { fileError?: string; outcomes?: ImportOutcome[]; csv?: string; imported?: boolean },
    status: 200 | 422 = 200,
  ) =>
    renderPage(
      c,
      <ImportLinksPage
        session={c.get('session')!}
        maxRows={IMPORT_MAX_ROWS}
        maxMiB={IMPORT_MAX_BYTES / 1024 / 1024}
        {...extra}
      />,
      status,
    );

  app.get('/import', (c) => render(c, {}));

  app.post('/import', async (c) => {
    const session = c.get('session')!;
    const i18n = c.get('i18n');
    const body = await c.req.parseBody();
    const step = body.step === 'import' ? 'import' : 'preview';
    const fileProblem = (message: string) =>
      render(c, { fileError: i18n.fieldSentence(i18n.t('import.file'), message) }, 422);
    let csv: string;
    if (body.file instanceof File) {
      if (body.file.size > IMPORT_MAX_BYTES)
        return fileProblem(fieldProblem('importTooLarge', { mib: IMPORT_MAX_BYTES / 1024 / 1024 }));
      try {
        csv = new TextDecoder('utf-8', { fatal: true }).decode(await body.file.arrayBuffer());
      } catch {
        return fileProblem(fieldProblem('validUnicode'));
      }
    } else if (typeof body.csv === 'string') csv = body.csv;
    else return fileProblem(fieldProblem('csvNoRows'));
    let rows: ReturnType<typeof parseImportCsv>;
    try {
      rows = parseImportCsv(csv);
    } catch (error) {
      if (error instanceof ValidationError) return fileProblem(error.extra.errors?.[0]?.message ?? '');
      throw error;
    }
    const actor = `user:${session.user.email}`;
    const creator = { owner: actor, actor, origin: 'ui' as const };
    const createDeps = {
      sql: deps.sql,
      codeLength: deps.config.codeLength,
      targetPolicy: deps.targetPolicy,
      safety: deps.safety,
      mayManagePostLinks: session.user.role === 'admin',
    };
    if (step === 'preview') {
      const { outcomes } = await importLinks(createDeps, rows, creator, { dryRun: true });
      return render(c, { outcomes, csv });
    }
    await deps.rateLimits.consumeCreations(actor, rows.length);
    const { outcomes, createdCodes } = await importLinks(createDeps, rows, creator, { dryRun: false });
    // Queued with the rows (as the batch API does); one kick wakes the drainer for the serving store and Bitly.
    kickSyncQueueInBackground(deps, createdCodes, `link.created by ${actor} (CSV import)`);
    return render(c, { outcomes, imported: true });
  });

  return app;
}
