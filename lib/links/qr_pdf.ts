// A print QR as a one-page PDF, written here rather than with a PDF library (ADR 0087): the page is the code's
// size in millimetres, the dark modules one filled vector path of rectangles, and a PNG logo an image with its
// alpha as a soft mask. A few hundred bytes of structure around two deflated streams.
import { deflateSync } from 'node:zlib';
import { darkRuns, type LogoRaster, logoPlacement, type QrPicture, QUIET_ZONE } from './qr_picture.ts';

/** PostScript points per millimetre. */
const PT_PER_MM = 72 / 25.4;

const num = (n: number) => {
  const fixed = n.toFixed(4);
  return fixed.replace(/\.?0+$/, '') || '0';
};
const rgb = (hex: string) =>
  [1, 3, 5].map((i) => num(Number.parseInt(hex.slice(i, i + 2), 16) / 255)).join(' ');

/** A PDF text string in UTF-16BE (any language's title survives). */
function pdfText(text: string): string {
  let hex = 'FEFF';
  for (let i = 0; i < text.length; i++) hex += text.charCodeAt(i).toString(16).padStart(4, '0');
  return `<${hex.toUpperCase()}>`;
}

/** The page's size in points for `mm` millimetres (what a reader checks in the MediaBox). */
export function pdfPageSide(mm: number): number {
  return Number(num(mm * PT_PER_MM));
}

/** Writes the PDF: page `mm` millimetres square, the code filling it (quiet zone included). */
export function writeQrPdf(
  picture: QrPicture,
  mm: number,
  logo: LogoRaster | null,
  title: string,
): Uint8Array {
  const side = pdfPageSide(mm);
  const total = picture.size + 2 * QUIET_ZONE;
  const m = side / total;
  const ops: string[] = [`${rgb(picture.background)} rg 0 0 ${num(side)} ${num(side)} re f`];
  ops.push(`${rgb(picture.foreground)} rg`);
  for (const [r, c, n] of darkRuns(picture)) {
    ops.push(
      `${num((c + QUIET_ZONE) * m)} ${num(side - (r + QUIET_ZONE + 1) * m)} ${num(n * m)} ${num(m)} re`,
    );
  }
  ops.push('f');
  const place = logo ? logoPlacement(picture, logo) : null;
  if (place) {
    const w = place.width * m;
    const h = place.height * m;
    ops.push(`q ${num(w)} 0 0 ${num(h)} ${num(place.x * m)} ${num(side - place.y * m - h)} cm /Logo Do Q`);
  }

  const objects: (string | { dict: string; data: Uint8Array })[] = [];
  const add = (o: (typeof objects)[number]) => objects.push(o) - 1 + 1;
  const catalog = add('');
  const pages = add('');
  const page = add('');
  const content = add({ dict: '/Filter /FlateDecode', data: deflateSync(Buffer.from(ops.join('\n'))) });
  let xobject = '';
  if (logo && place) {
    const rgbBytes = new Uint8Array(logo.width * logo.height * 3);
    const alpha = new Uint8Array(logo.width * logo.height);
    for (let i = 0; i < logo.width * logo.height; i++) {
      rgbBytes[i * 3] = logo.rgba[i * 4]!;
      rgbBytes[i * 3 + 1] = logo.rgba[i * 4 + 1]!;
      rgbBytes[i * 3 + 2] = logo.rgba[i * 4 + 2]!;
      alpha[i] = logo.rgba[i * 4 + 3]!;
    }
    const image = `/Type /XObject /Subtype /Image /Width ${logo.width} /Height ${logo.height} /BitsPerComponent 8`;
    const mask = add({
      dict: `${image} /ColorSpace /DeviceGray /Filter /FlateDecode`,
      data: deflateSync(alpha),
    });
    const img = add({
      dict: `${image} /ColorSpace /DeviceRGB /SMask ${mask} 0 R /Filter /FlateDecode`,
      data: deflateSync(rgbBytes),
    });
    xobject = ` /Resources << /XObject << /Logo ${img} 0 R >> >>`;
  }
  const info = add(`<< /Title ${pdfText(title)} /Producer (Lifeline) >>`);
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pages} 0 R >>`;
  objects[pages - 1] = `<< /Type /Pages /Kids [${page} 0 R] /Count 1 >>`;
  objects[page - 1] =
    `<< /Type /Page /Parent ${pages} 0 R /MediaBox [0 0 ${num(side)} ${num(side)}]${xobject} /Contents ${content} 0 R >>`;

  const chunks: Uint8Array[] = [];
  let length = 0;
  const write = (part: string | Uint8Array) => {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'latin1') : part;
    chunks.push(bytes);
    length += bytes.byteLength;
  };
  write('%PDF-1.4\n%\xE2\xE3\xCF\xD3\n');
  const offsets: number[] = [];
  for (const [i, o] of objects.entries()) {
    offsets.push(length);
    if (typeof o === 'string') write(`${i + 1} 0 obj\n${o}\nendobj\n`);
    else {
      write(`${i + 1} 0 obj\n<< ${o.dict} /Length ${o.data.byteLength} >>\nstream\n`);
      write(o.data);
      write('\nendstream\nendobj\n');
    }
  }
  const xref = length;
  write(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`);
  for (const offset of offsets) write(`${String(offset).padStart(10, '0')} 00000 n \n`);
  write(
    `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R /Info ${info} 0 R >>\nstartxref\n${xref}\n%%EOF\n`,
  );
  return Buffer.concat(chunks);
}
