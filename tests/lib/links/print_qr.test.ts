// Print QR codes (lib/links/print_qr.ts, ADR 0087), each decoded back: PNGs at several sizes and colour pairs with
// and without the newsroom's logo (jsQR); the SVG rasterised by Chromium (a PNG logo and an SVG logo) and
// decoded; the PDF's page size read from its MediaBox, then the page rasterised by pdftoppm (Debian's
// poppler-utils) and decoded. Refusals: too little contrast, light on dark, an SVG logo for a PNG, sizes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import jsQR from 'jsqr';
import { type Browser, chromium } from 'playwright-core';
import { PNG } from 'pngjs';
import {
  checkPrintQr,
  contrastRatio,
  type PrintQrOptions,
  printQrOptionsSchema,
  type QrLogo,
  renderPrintQr,
  sniffLogo,
} from '../../../lib/links/print_qr.ts';
import { AppError } from '../../../lib/shared/errors.ts';

const TEXT = 'https://sho.rt/print-qr-7Hk2?qr=1';
const TITLE = 'https://sho.rt/print-qr-7Hk2';
let browser: Browser;
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lifeline-qr-'));
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
});
after(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A newsroom logo as a PNG: a wide dark-red block with a transparent band and a white bar across it. */
function pngLogo(width = 180, height = 90): QrLogo {
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const band = y > height * 0.4 && y < height * 0.6;
      png.data[i] = band ? 255 : 150;
      png.data[i + 1] = band ? 255 : 10;
      png.data[i + 2] = band ? 255 : 30;
      png.data[i + 3] = x < 6 || x > width - 7 ? 0 : 255;
    }
  return { type: 'image/png', bytes: new Uint8Array(PNG.sync.write(png)) };
}

const svgLogo: QrLogo = {
  type: 'image/svg+xml',
  bytes: new TextEncoder().encode(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 60"><rect width="100" height="60" rx="8" fill="#0b3d91"/><text x="50" y="40" font-size="28" text-anchor="middle" fill="#fff">NEWS</text></svg>',
  ),
};

function decodePng(bytes: Uint8Array): string | null {
  const png = PNG.sync.read(Buffer.from(bytes));
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data ?? null;
}

const options = (o: Partial<PrintQrOptions> & Pick<PrintQrOptions, 'format' | 'size'>): PrintQrOptions =>
  printQrOptionsSchema.parse({ foreground: '#000000', background: '#ffffff', ...o });

const COLOURS: [string, string][] = [
  ['#000000', '#ffffff'],
  ['#1a237e', '#fff8e1'],
  ['#7a0019', '#f2f2f2'],
];

function refusedField(work: () => unknown): string[] {
  try {
    work();
  } catch (error) {
    assert.ok(error instanceof AppError && error.status === 422, String(error));
    return (error.extra.errors ?? []).map((e) => e.path);
  }
  assert.fail('expected a refusal');
}

describe('print QR codes, decoded back', () => {
  test('PNG at several sizes and colour pairs, with and without the logo', () => {
    for (const size of [200, 480, 1000])
      for (const [foreground, background] of COLOURS)
        for (const logo of [null, pngLogo()]) {
          const out = renderPrintQr(
            TEXT,
            options({ format: 'png', size, foreground, background }),
            logo,
            TITLE,
          );
          assert.equal(out.contentType, 'image/png');
          const png = PNG.sync.read(Buffer.from(out.body as Uint8Array));
          assert.deepEqual([png.width, png.height], [size, size]);
          assert.equal(
            decodePng(out.body as Uint8Array),
            TEXT,
            `${size}px ${foreground} on ${background} ${logo ? 'with' : 'without'} the logo`,
          );
          // The logo is drawn (its dark red), over about 3–7% of the picture; none without it.
          let red = 0;
          for (let i = 0; i < png.data.length; i += 4)
            if (png.data[i] === 150 && png.data[i + 1] === 10 && png.data[i + 2] === 30) red++;
          const share = red / (size * size);
          if (logo) assert.ok(share > 0.01 && share < 0.07, `logo share ${share}`);
          else assert.equal(red, 0);
        }
  });

  test('SVG rasterised by Chromium decodes, with a PNG logo and with an SVG logo', async () => {
    const page = await browser.newPage({ viewport: { width: 500, height: 500 } });
    try {
      for (const [foreground, background] of COLOURS)
        for (const logo of [null, pngLogo(), svgLogo]) {
          const out = renderPrintQr(
            TEXT,
            options({ format: 'svg', size: 50, foreground, background }),
            logo,
            TITLE,
          );
          const svg = out.body as string;
          assert.match(svg, /width="50mm" height="50mm"/);
          assert.equal(out.contentType, 'image/svg+xml');
          const src = `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
          await page.setContent(
            `<body style="margin:0;background:#888"><img id="qr" src="${src}" width="400" height="400"></body>`,
          );
          await page.locator('#qr').evaluate((img: HTMLImageElement) => img.decode());
          const shot = await page.locator('#qr').screenshot();
          assert.equal(
            decodePng(new Uint8Array(shot)),
            TEXT,
            `SVG ${foreground} on ${background} ${logo ? logo.type : 'no logo'}`,
          );
        }
    } finally {
      await page.close();
    }
  });

  test('PDF: the page is the size asked for, and pdftoppm’s raster decodes', () => {
    for (const [mm, logo] of [
      [40, pngLogo()],
      [25, null],
      [120, pngLogo(64, 64)],
    ] as const) {
      const out = renderPrintQr(
        TEXT,
        options({ format: 'pdf', size: mm, foreground: '#1a237e', background: '#fff8e1' }),
        logo,
        'عنوان: رابط للطباعة',
      );
      assert.equal(out.contentType, 'application/pdf');
      const pdf = Buffer.from(out.body as Uint8Array);
      assert.equal(pdf.subarray(0, 8).toString('latin1'), '%PDF-1.4');
      const box = /\/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]/.exec(pdf.toString('latin1'));
      const points = (mm * 72) / 25.4;
      assert.ok(box, 'a MediaBox');
      assert.ok(Math.abs(Number(box[1]) - points) < 0.001 && Math.abs(Number(box[2]) - points) < 0.001);
      // The cross-reference table points at each object.
      const text = pdf.toString('latin1');
      const xref = Number(/startxref\n(\d+)/.exec(text)![1]);
      assert.equal(text.slice(xref, xref + 4), 'xref');
      const file = join(dir, `qr-${mm}.pdf`);
      writeFileSync(file, pdf);
      // Resolution so the page is ~600 px whatever its size in millimetres.
      const dpi = Math.round((600 / mm) * 25.4);
      execFileSync('pdftoppm', ['-png', '-r', String(dpi), '-singlefile', file, join(dir, `qr-${mm}`)]);
      const raster = readFileSync(join(dir, `qr-${mm}.png`));
      assert.equal(decodePng(new Uint8Array(raster)), TEXT, `PDF ${mm} mm ${logo ? 'with' : 'without'} logo`);
    }
  });

  test('refusals name the field: contrast, light on dark, sizes, an SVG logo outside SVG, a non-image', () => {
    assert.ok(contrastRatio('#000000', '#ffffff') > 20);
    assert.deepEqual(
      refusedField(() =>
        checkPrintQr(
          options({ format: 'png', size: 512, foreground: '#999999', background: '#aaaaaa' }),
          null,
        ),
      ),
      ['foreground'],
    );
    assert.deepEqual(
      refusedField(() =>
        checkPrintQr(
          options({ format: 'png', size: 512, foreground: '#ffffff', background: '#000000' }),
          null,
        ),
      ),
      ['foreground'],
    );
    assert.deepEqual(
      refusedField(() => checkPrintQr(options({ format: 'png', size: 64 }), null)),
      ['size'],
    );
    assert.deepEqual(
      refusedField(() => checkPrintQr(options({ format: 'pdf', size: 1000 }), null)),
      ['size'],
    );
    assert.deepEqual(
      refusedField(() => renderPrintQr(TEXT, options({ format: 'png', size: 512 }), svgLogo, TITLE)),
      ['logo'],
    );
    assert.deepEqual(
      refusedField(() => renderPrintQr(TEXT, options({ format: 'pdf', size: 40 }), svgLogo, TITLE)),
      ['logo'],
    );
    assert.equal(
      printQrOptionsSchema.safeParse({ format: 'png', size: '512', foreground: 'red' }).success,
      false,
    );
    assert.equal(sniffLogo(pngLogo().bytes), 'image/png');
    assert.equal(sniffLogo(svgLogo.bytes), 'image/svg+xml');
    assert.equal(sniffLogo(new TextEncoder().encode('GIF89a...')), null);
  });
});
