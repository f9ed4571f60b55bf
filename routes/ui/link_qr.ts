import { type Context, Hono } from 'hono';
import QRCode from 'qrcode';
import { getLinkRowOrThrow } from '../../lib/links/get_link.ts';
import { qrScanUrl } from '../../lib/links/link_print_qr.ts';
import { shortUrlOfKey } from '../../lib/shared/link_key.ts';
import type { WebDeps } from '../app_env.ts';
import type { UiEnv } from './ui_env.ts';

/** Pixels per side of the PNG: sharp enough for print at a few centimetres. */
const QR_PNG_SIZE = 1024;

/** What a printed code opens: the short URL marked as a QR scan (lib/links/link_print_qr.ts). */
export const getQrTarget = qrScanUrl;

/** GET /ui/links/:code/qr.svg and qr.png (`?download=1` to save as a file); for print: link_qr_print.tsx. */
export function createLinkQrRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();

  const serve = (format: 'svg' | 'png') => async (c: Context<UiEnv>) => {
    const code = c.req.param('code') ?? '';
    const row = await getLinkRowOrThrow(deps.sql, code);
    const target = getQrTarget(shortUrlOfKey(deps.config, row.code));
    const png = format === 'png';
    const headers: Record<string, string> = {
      'Content-Type': png ? 'image/png' : 'image/svg+xml',
      'Cache-Control': 'private, max-age=3600',
    };
    if (c.req.query('download')) {
      headers['Content-Disposition'] = `attachment; filename="${row.code}-qr.${png ? 'png' : 'svg'}"`;
    }
    const options = { errorCorrectionLevel: 'M' as const, margin: 2 };
    if (png) {
      const buffer = await QRCode.toBuffer(target, { ...options, type: 'png', width: QR_PNG_SIZE });
      return new Response(new Uint8Array(buffer), { headers });
    }
    return new Response(await QRCode.toString(target, { ...options, type: 'svg' }), { headers });
  };
  app.get('/:code/qr.svg', serve('svg'));
  app.get('/:code/qr.png', serve('png'));

  return app;
}
