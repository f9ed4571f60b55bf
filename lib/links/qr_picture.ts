// A QR symbol as the print writers draw it (print_qr.ts, qr_pdf.ts): its modules, the light box a logo sits in,
// the dark modules as runs, and where the logo goes.
import QRCode from 'qrcode';

/** Modules of light margin on every side (the QR specification's quiet zone). */
export const QUIET_ZONE = 4;
/** The logo's box: this share of the symbol's side (0.26² ≈ 7% of its area), its modules left light. */
const LOGO_BOX_SHARE = 0.26;
/** A decoded logo raster (RGBA, row by row). */
export interface LogoRaster {
  width: number;
  height: number;
  rgba: Uint8Array;
}

/** The drawn symbol: modules per side (without the quiet zone), whether each is dark, and the logo box. */
export interface QrPicture {
  size: number;
  dark: (row: number, col: number) => boolean;
  /** The light box in the middle, in modules from the symbol's top-left corner; null without a logo. */
  logoBox: { from: number; to: number } | null;
  foreground: string;
  background: string;
}

/** The symbol for `text`: level H with a logo (its box cleared), M without. */
export function makeQrPicture(
  text: string,
  options: { foreground: string; background: string },
  withLogo: boolean,
): QrPicture {
  const qr = QRCode.create(text, { errorCorrectionLevel: withLogo ? 'H' : 'M' });
  const size = qr.modules.size;
  let logoBox: QrPicture['logoBox'] = null;
  if (withLogo) {
    // An odd number of modules, centred, so the box sits on the module grid symmetrically.
    let side = Math.round(size * LOGO_BOX_SHARE);
    if (side % 2 !== size % 2) side += 1;
    const from = (size - side) / 2;
    logoBox = { from, to: from + side };
  }
  const inBox = (r: number, c: number) =>
    logoBox !== null && r >= logoBox.from && r < logoBox.to && c >= logoBox.from && c < logoBox.to;
  return {
    size,
    dark: (r, c) => !inBox(r, c) && qr.modules.get(r, c) === 1,
    logoBox,
    foreground: options.foreground,
    background: options.background,
  };
}

/** The dark modules as horizontal runs: [row, firstCol, length]. */
export function darkRuns(picture: QrPicture): [number, number, number][] {
  const runs: [number, number, number][] = [];
  for (let r = 0; r < picture.size; r++) {
    let c = 0;
    while (c < picture.size) {
      if (!picture.dark(r, c)) {
        c++;
        continue;
      }
      const start = c;
      while (c < picture.size && picture.dark(r, c)) c++;
      runs.push([r, start, c - start]);
    }
  }
  return runs;
}

/** Where the logo goes inside its box (keeping its aspect ratio, half a module in), in `unit`s of a module. */
export function logoPlacement(
  picture: QrPicture,
  raster: { width: number; height: number },
): { x: number; y: number; width: number; height: number } | null {
  if (!picture.logoBox) return null;
  const pad = 0.5;
  const box = picture.logoBox.to - picture.logoBox.from - 2 * pad;
  const scale = Math.min(box / raster.width, box / raster.height);
  const width = raster.width * scale;
  const height = raster.height * scale;
  const origin = picture.logoBox.from + QUIET_ZONE + pad;
  return { x: origin + (box - width) / 2, y: origin + (box - height) / 2, width, height };
}
