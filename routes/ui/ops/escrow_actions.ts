// Escrow from the page: export or snapshot now, and download the latest export (admins only, audited).
import { Hono } from 'hono';
import { openExportDownload } from '../../../lib/escrow/export_archive.ts';
import { NotFoundError } from '../../../lib/shared/errors.ts';
import type { WebDeps } from '../../app_env.ts';
import type { UiEnv } from '../ui_env.ts';
import { actorOf, opsAction, type RenderOps } from './ops_page.tsx';

export function createEscrowActionRoutes(deps: WebDeps, render: RenderOps) {
  const app = new Hono<UiEnv>();

  app.post('/escrow/export', (c) =>
    opsAction(c, render, () => deps.ops.startEscrowRun('export', `manual, by ${actorOf(c).name}`), 'escrow'),
  );
  app.post('/escrow/snapshot', (c) =>
    opsAction(
      c,
      render,
      () => deps.ops.startEscrowRun('snapshot', `manual, by ${actorOf(c).name}`),
      'snapshot',
    ),
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

  return app;
}
