// GET /api/v1/links/{code}/qr (ADR 0079): each format decoded back as the print QR tests decode them (the PNG with
// jsQR, the SVG rasterised by Chromium, the PDF by pdftoppm), on the default and on a second short domain, with
// the newsroom's logo by default once one is stored and without it on request; refusals as problem+json naming
// the query's field (size, fg, bg, format, logo, domain), 404 for no link, and an API key without links:read
// refused.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import jsQR from 'jsqr';
import { type Browser, chromium } from 'playwright-core';
import { PNG } from 'pngjs';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import { removeNewsroomLogo, setNewsroomLogo } from '../../../lib/links/newsroom_logo.ts';

const SECOND = 'second.sho.rt.test';
let h: Harness;
let browser: Browser;
let dir: string;
let code: string;
let secondCode: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lifeline-qr-api-'));
  h = await createHarness({ env: { SHORT_DOMAINS: `sho.rt.test,${SECOND}` } });
  const create = async (json: Record<string, unknown>) => {
    const res = await h.api('/api/v1/links', { method: 'POST', json });
    assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
    return ((await res.json()) as { code: string }).code;
  };
  code = await create({ url: 'https://qr-api.example/story' });
  secondCode = await create({ url: 'https://qr-api.example/other', domain: SECOND });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
});
after(async () => {
  await browser?.close();
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const decodePng = (bytes: Uint8Array) => {
  const png = PNG.sync.read(Buffer.from(bytes));
  return { text: jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data ?? null, png };
};
const get = (path: string, headers: Record<string, string> = {}) => h.api(path, { headers });

/** A 120×60 PNG in a dark red no module has, to find it in the picture. */
function pngLogo(): Uint8Array {
  const png = new PNG({ width: 120, height: 60 });
  for (let i = 0; i < png.data.length; i += 4) {
    png.data.set([150, 10, 30, 255], i);
  }
  return new Uint8Array(PNG.sync.write(png));
}
const redShare = (png: PNG) => {
  let red = 0;
  for (let i = 0; i < png.data.length; i += 4)
    if (png.data[i] === 150 && png.data[i + 1] === 10 && png.data[i + 2] === 30) red++;
  return red / (png.width * png.height);
};

async function problemOf(res: Response) {
  assert.equal(res.headers.get('Content-Type'), 'application/problem+json');
  return (await res.json()) as { status: number; errors?: { path: string; message: string }[] };
}

describe('GET /api/v1/links/{code}/qr', () => {
  test('PNG at the asked size and colours decodes to the short URL marked as a scan', async () => {
    const res = await get(`/api/v1/links/${code}/qr?format=png&size=300&fg=%231a237e&bg=%23fff8e1`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('Content-Type'), 'image/png');
    assert.equal(res.headers.get('Content-Disposition'), `attachment; filename="${code}-qr.png"`);
    const { text, png } = decodePng(new Uint8Array(await res.arrayBuffer()));
    assert.deepEqual([png.width, png.height], [300, 300]);
    assert.equal(text, `http://sho.rt.test/${code}?qr=1`);
    // The default PNG size.
    const plain = await get(`/api/v1/links/${code}/qr?format=png`);
    assert.equal(decodePng(new Uint8Array(await plain.arrayBuffer())).png.width, 1024);
  });

  test('SVG (the default format) rasterised by Chromium decodes; on a second domain, that domain’s URL', async () => {
    const page = await browser.newPage({ viewport: { width: 500, height: 500 } });
    try {
      for (const [path, expected] of [
        [`/api/v1/links/${code}/qr?size=50`, `http://sho.rt.test/${code}?qr=1`],
        [`/api/v1/links/${secondCode}/qr?format=svg&domain=${SECOND}`, `http://${SECOND}/${secondCode}?qr=1`],
      ] as const) {
        const res = await get(path);
        assert.equal(res.status, 200, path);
        assert.equal(res.headers.get('Content-Type'), 'image/svg+xml');
        const svg = await res.text();
        const src = `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
        await page.setContent(
          `<body style="margin:0;background:#888"><img id="qr" src="${src}" width="400" height="400"></body>`,
        );
        await page.locator('#qr').evaluate((img: HTMLImageElement) => img.decode());
        const shot = await page.locator('#qr').screenshot();
        assert.equal(decodePng(new Uint8Array(shot)).text, expected, path);
      }
    } finally {
      await page.close();
    }
    // The second domain's link is not the default domain's.
    assert.equal((await get(`/api/v1/links/${secondCode}/qr`)).status, 404);
  });

  test('PDF: its page is the size asked for, and pdftoppm’s raster decodes', async () => {
    const res = await get(`/api/v1/links/${code}/qr?format=pdf&size=30`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('Content-Type'), 'application/pdf');
    const pdf = Buffer.from(await res.arrayBuffer());
    const box = /\/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]/.exec(pdf.toString('latin1'));
    assert.ok(box && Math.abs(Number(box[1]) - (30 * 72) / 25.4) < 0.001);
    const file = join(dir, 'qr.pdf');
    writeFileSync(file, pdf);
    execFileSync('pdftoppm', [
      '-png',
      '-r',
      String(Math.round((600 / 30) * 25.4)),
      '-singlefile',
      file,
      join(dir, 'qr'),
    ]);
    assert.equal(
      decodePng(new Uint8Array(readFileSync(join(dir, 'qr.png')))).text,
      `http://sho.rt.test/${code}?qr=1`,
    );
  });

  test('the newsroom logo: drawn by default once stored, left out with logo=none, refused when there is none', async () => {
    const missing = await get(`/api/v1/links/${code}/qr?format=png&size=400&logo=newsroom`);
    assert.equal(missing.status, 422);
    assert.deepEqual(
      (await problemOf(missing)).errors?.map((e) => e.path),
      ['logo'],
    );
    await setNewsroomLogo(h.db.sql, pngLogo(), 'test');
    try {
      for (const [query, drawn] of [
        ['', true],
        ['&logo=newsroom', true],
        ['&logo=none', false],
      ] as const) {
        const res = await get(`/api/v1/links/${code}/qr?format=png&size=400${query}`);
        assert.equal(res.status, 200, query);
        const { text, png } = decodePng(new Uint8Array(await res.arrayBuffer()));
        assert.equal(text, `http://sho.rt.test/${code}?qr=1`, query);
        assert.equal(redShare(png) > 0.01, drawn, `${query}: ${redShare(png)}`);
      }
    } finally {
      await removeNewsroomLogo(h.db.sql);
    }
  });

  test('refusals name the query’s field, as problem+json; 404 for no link; a key without links:read refused', async () => {
    for (const [query, field] of [
      ['format=png&size=64', 'size'],
      ['format=pdf&size=1000', 'size'],
      ['format=svg&size=big', 'size'],
      ['fg=%23777777', 'fg'],
      ['fg=%23ffffff&bg=%23000000', 'fg'],
      ['fg=red', 'fg'],
      ['bg=white', 'bg'],
      ['format=gif', 'format'],
      ['logo=house', 'logo'],
      ['domain=elsewhere.example', 'domain'],
      ['colour=%23000000', 'colour'],
    ] as const) {
      const res = await get(`/api/v1/links/${code}/qr?${query}`);
      assert.equal(res.status, 422, query);
      const body = await problemOf(res);
      assert.equal(body.errors?.[0]?.path, field, `${query}: ${JSON.stringify(body)}`);
    }
    const contrast = await problemOf(await get(`/api/v1/links/${code}/qr?fg=%23777777`));
    assert.match(contrast.errors![0]!.message, /contrast/);
    assert.equal((await get('/api/v1/links/no-such-code/qr')).status, 404);
    const issued = await h.api('/api/v1/keys', {
      method: 'POST',
      json: { name: 'writer only', scopes: ['links:write'] },
    });
    const { key } = (await issued.json()) as { key: string };
    const refused = await h.app.request(`/api/v1/links/${code}/qr`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    assert.equal(refused.status, 403);
  });
});
