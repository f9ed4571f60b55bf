// A link's print QR code (ADR 0087, 0079): the one way the UI's print form and the API's
// GET /api/v1/links/{code}/qr make it, so both check and draw alike.
import type { ShortDomains } from '../shared/link_key.ts';
import { shortUrlOfKey } from '../shared/link_key.ts';
import type { Db } from '../stores/sql.ts';
import { getLinkRowOrThrow } from './get_link.ts';
import { type PrintQrOptions, type QrLogo, renderPrintQr } from './print_qr.ts';

/** What a printed code opens: the short URL marked as a QR scan, so scans are counted on their own. */
export function qrScanUrl(shortUrl: string): string {
  return `${shortUrl}?qr=1`;
}

/** The print QR of the link `key` (its short URL on its own domain): bytes, type and a file name to save as. */
export async function renderLinkPrintQr(
  deps: { sql: Db; domains: Pick<ShortDomains, 'shortBaseUrl'> },
  key: string,
  options: PrintQrOptions,
  logo: QrLogo | null,
): Promise<{ body: Uint8Array | string; contentType: string; fileName: string }> {
  const row = await getLinkRowOrThrow(deps.sql, key);
  const shortUrl = shortUrlOfKey(deps.domains, row.code);
  const out = renderPrintQr(qrScanUrl(shortUrl), options, logo, shortUrl);
  // A key on another domain holds a slash: the file is named after the code alone.
  const code = row.code.slice(row.code.lastIndexOf('/') + 1);
  return { ...out, fileName: `${code}-qr.${options.format}` };
}
