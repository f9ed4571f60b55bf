// QR codes for print (ADR 0087): a link's code as SVG, PNG or PDF at a chosen size, in chosen colours, with a
// logo in the middle. The modules come from `qrcode` (the encoder); drawing them is ours, so the three formats
// draw the same picture: a quiet zone of four modules, dark modules as runs, and with a logo, error correction H
// and a plain box in the middle (about 7% of the symbol's area, well inside the 30% that level H restores).
import { PNG } from 'pngjs';
import { z } from 'zod';
import { ValidationError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { writeQrPdf } from './qr_pdf.ts';
import {
  darkRuns,
  type LogoRaster,
  logoPlacement,
  makeQrPicture,
  type QrPicture,
  QUIET_ZONE,
} from './qr_picture.ts';

export { type LogoRaster, makeQrPicture, type QrPicture, QUIET_ZONE };

/** Largest logo file accepted (PNG or SVG). */
export const LOGO_MAX_BYTES = 256 * 1024;
/** Least contrast between the colours (WCAG ratio), the dark one drawn on the light one. */
export const MIN_CONTRAST = 4.5;
/** Largest logo raster the PNG and PDF writers decode (pixels per side). */
const LOGO_MAX_PIXELS = 2048;

export const QR_FORMATS = ['svg', 'png', 'pdf'] as const;
export type QrFormat = (typeof QR_FORMATS)[number];

const colour = z
  .string()
  .trim()
  .regex(/^#[0-9a-fA-F]{6}$/, fieldProblem('colourHex'))
  .transform((v) => v.toLowerCase());

/** What a print QR may be asked for (the UI form's fields, strings coerced). */
export const printQrOptionsSchema = z.strictObject({
  format: z.enum(QR_FORMATS),
  /** PNG: pixels per side (128–2048; larger prints take the vector formats); SVG and PDF: millimetres (10–500). */
  size: z.coerce.number(fieldProblem('wholeNumber')).int(fieldProblem('wholeNumber')),
  foreground: colour.default('#000000'),
  background: colour.default('#ffffff'),
});
export type PrintQrOptions = z.infer<typeof printQrOptionsSchema>;

/** The allowed size range of a format, and its unit. */
export function sizeRange(format: QrFormat): { min: number; max: number; unit: 'px' | 'mm' } {
  return format === 'png' ? { min: 128, max: 2048, unit: 'px' } : { min: 10, max: 500, unit: 'mm' };
}

/** An uploaded logo: PNG (decoded for PNG and PDF, embedded in SVG) or SVG (SVG output only). */
export interface QrLogo {
  type: 'image/png' | 'image/svg+xml';
  bytes: Uint8Array;
}

/** Relative luminance of #rrggbb (WCAG 2). */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** WCAG contrast ratio of two colours (1–21). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * Checks options against the format's size range, the colours' contrast and direction (dark modules on a light
 * ground: many scanners do not read a light-on-dark code) and the logo's kind; 422 naming the field.
 */
export function checkPrintQr(options: PrintQrOptions, logo: QrLogo | null): void {
  const errors: { path: string; message: string }[] = [];
  const range = sizeRange(options.format);
  if (options.size < range.min || options.size > range.max)
    errors.push({ path: 'size', message: fieldProblem('qrSize', { ...range }) });
  const ratio = contrastRatio(options.foreground, options.background);
  if (luminance(options.foreground) >= luminance(options.background))
    errors.push({ path: 'foreground', message: fieldProblem('qrDarkOnLight') });
  else if (ratio < MIN_CONTRAST)
    errors.push({
      path: 'foreground',
      message: fieldProblem('qrContrast', { ratio: ratio.toFixed(1), least: String(MIN_CONTRAST) }),
    });
  if (logo) {
    if (logo.bytes.byteLength > LOGO_MAX_BYTES)
      errors.push({ path: 'logo', message: fieldProblem('logoTooLarge', { kib: LOGO_MAX_BYTES / 1024 }) });
    else if (logo.type === 'image/svg+xml' && options.format !== 'svg')
      errors.push({ path: 'logo', message: fieldProblem('logoSvgOnly') });
  }
  if (errors.length > 0) throw new ValidationError(errors, 'The QR code cannot be made this way.');
}

/** What a logo file is, from its first bytes (not from what the browser claimed). */
export function sniffLogo(bytes: Uint8Array): QrLogo['type'] | null {
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (png.every((b, i) => bytes[i] === b)) return 'image/png';
  const head = new TextDecoder().decode(bytes.subarray(0, 1024)).replace(/^\uFEFF/, '');
  if (/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(head))
    return 'image/svg+xml';
  return null;
}

/** Decodes a PNG logo (422 on the `logo` field when it is not one, or too large a raster). */
export function decodeLogo(logo: QrLogo): LogoRaster {
  let png: PNG;
  try {
    png = PNG.sync.read(Buffer.from(logo.bytes));
  } catch {
    throw new ValidationError([{ path: 'logo', message: fieldProblem('logoNotPng') }]);
  }
  if (png.width > LOGO_MAX_PIXELS || png.height > LOGO_MAX_PIXELS)
    throw new ValidationError([
      { path: 'logo', message: fieldProblem('logoPixels', { side: LOGO_MAX_PIXELS }) },
    ]);
  return { width: png.width, height: png.height, rgba: new Uint8Array(png.data) };
}

const escapeXml = (s: string) => s.replace(/[<>&"]/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** SVG at `mm` millimetres per side: one path for the dark modules, the logo as an embedded image. */
export function renderQrSvg(picture: QrPicture, mm: number, logo: QrLogo | null, title: string): string {
  const total = picture.size + 2 * QUIET_ZONE;
  const path = darkRuns(picture)
    .map(([r, c, n]) => `M${c + QUIET_ZONE} ${r + QUIET_ZONE}h${n}v1h-${n}z`)
    .join('');
  let image = '';
  if (logo && picture.logoBox) {
    const pad = 0.5;
    const at = picture.logoBox.from + QUIET_ZONE + pad;
    const side = picture.logoBox.to - picture.logoBox.from - 2 * pad;
    const href = `data:${logo.type};base64,${Buffer.from(logo.bytes).toString('base64')}`;
    image = `<image x="${at}" y="${at}" width="${side}" height="${side}" preserveAspectRatio="xMidYMid meet" href="${href}"/>`;
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${mm}mm" height="${mm}mm" viewBox="0 0 ${total} ${total}" shape-rendering="crispEdges">` +
    `<title>${escapeXml(title)}</title>` +
    `<rect width="${total}" height="${total}" fill="${picture.background}"/>` +
    `<path fill="${picture.foreground}" d="${path}"/>${image}</svg>`
  );
}

const rgbOf = (hex: string): [number, number, number] => [
  Number.parseInt(hex.slice(1, 3), 16),
  Number.parseInt(hex.slice(3, 5), 16),
  Number.parseInt(hex.slice(5, 7), 16),
];

/**
 * PNG of `px` pixels per side (RGB, no alpha); the logo (decoded) is scaled into its box and blended over the
 * background. A module row's pixels are worked out once and copied to the pixel rows it covers: this runs in the
 * web process, which also answers redirects.
 */
export function renderQrPng(picture: QrPicture, px: number, logo: LogoRaster | null): Uint8Array {
  const total = picture.size + 2 * QUIET_ZONE;
  const png = new PNG({ width: px, height: px });
  const fg = rgbOf(picture.foreground);
  const bg = rgbOf(picture.background);
  const rowBytes = px * 4;
  const colOf = Int32Array.from({ length: px }, (_, x) => Math.floor((x * total) / px) - QUIET_ZONE);
  let lastRow = Number.NaN;
  for (let y = 0; y < px; y++) {
    const r = Math.floor((y * total) / px) - QUIET_ZONE;
    const at = y * rowBytes;
    if (r === lastRow) {
      png.data.copy(png.data, at, at - rowBytes, at);
      continue;
    }
    lastRow = r;
    for (let x = 0; x < px; x++) {
      const c = colOf[x]!;
      const inSymbol = r >= 0 && c >= 0 && r < picture.size && c < picture.size;
      const rgb = inSymbol && picture.dark(r, c) ? fg : bg;
      const i = at + x * 4;
      png.data[i] = rgb[0];
      png.data[i + 1] = rgb[1];
      png.data[i + 2] = rgb[2];
      png.data[i + 3] = 255;
    }
  }
  const place = logo ? logoPlacement(picture, logo) : null;
  if (logo && place) {
    const pxPerModule = px / total;
    const x0 = Math.round(place.x * pxPerModule);
    const y0 = Math.round(place.y * pxPerModule);
    const w = Math.max(1, Math.round(place.width * pxPerModule));
    const h = Math.max(1, Math.round(place.height * pxPerModule));
    for (let y = 0; y < h; y++) {
      const sy = Math.min(logo.height - 1, Math.floor((y * logo.height) / h));
      for (let x = 0; x < w; x++) {
        const sx = Math.min(logo.width - 1, Math.floor((x * logo.width) / w));
        const s = (sy * logo.width + sx) * 4;
        const a = logo.rgba[s + 3]! / 255;
        const d = ((y0 + y) * px + (x0 + x)) * 4;
        for (let k = 0; k < 3; k++)
          png.data[d + k] = Math.round(logo.rgba[s + k]! * a + png.data[d + k]! * (1 - a));
      }
    }
  }
  return new Uint8Array(PNG.sync.write(png, { colorType: 2, inputHasAlpha: true }));
}

/** The print QR of `text` in the asked format: the bytes and their content type. */
export function renderPrintQr(
  text: string,
  options: PrintQrOptions,
  logo: QrLogo | null,
  title: string,
): { body: Uint8Array | string; contentType: string } {
  checkPrintQr(options, logo);
  const picture = makeQrPicture(text, options, logo !== null);
  if (options.format === 'svg')
    return { body: renderQrSvg(picture, options.size, logo, title), contentType: 'image/svg+xml' };
  const raster = logo ? decodeLogo(logo) : null;
  if (options.format === 'png')
    return { body: renderQrPng(picture, options.size, raster), contentType: 'image/png' };
  return { body: writeQrPdf(picture, options.size, raster, title), contentType: 'application/pdf' };
}
