import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { buildIslandsBundle } from '../lib/ui/islands_bundle.ts';
import type { AppEnv } from './app_env.ts';

const STATIC_DIR = fileURLToPath(new URL('../static', import.meta.url));
const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

export interface StaticFile {
  body: Uint8Array;
  type: string;
  etag: string;
}

async function toStaticFile(body: Uint8Array, type: string): Promise<StaticFile> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-1', body as Uint8Array<ArrayBuffer>));
  const etag = `"${[...digest.slice(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join('')}"`;
  return { body, type, etag };
}

/**
 * Reads static/ into memory once (a few small files): the same on Node and Deno, no disk on requests.
 * With `bundleIslands` (Node) the islands bundle is built fresh from islands/ when esbuild can run; otherwise
 * (Deno, which may not run esbuild's binary) the checked-in static/islands.js is served as it is
 * (`npm run build:islands` writes it; tests/scripts/build_islands.test.ts fails when it is stale).
 */
export async function loadStaticFiles(
  dir = STATIC_DIR,
  options: { bundleIslands?: boolean } = {},
): Promise<Map<string, StaticFile>> {
  const files = new Map<string, StaticFile>();
  for (const name of await readdir(dir)) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    files.set(name, await toStaticFile(new Uint8Array(await readFile(join(dir, name))), type));
  }
  const islands = options.bundleIslands === false ? null : await buildIslandsBundle();
  if (islands) files.set('islands.js', await toStaticFile(islands, TYPES['.js']!));
  return files;
}

/** GET /static/:name from the in-memory set, with ETag revalidation. */
export function createStaticRoutes(files: Map<string, StaticFile>) {
  const app = new Hono<AppEnv>();
  app.on(['GET', 'HEAD'], '/static/:name', (c) => {
    const file = files.get(c.req.param('name'));
    if (!file) return c.text('Not found', 404);
    const headers = { 'Content-Type': file.type, ETag: file.etag, 'Cache-Control': 'public, max-age=300' };
    if (c.req.header('If-None-Match') === file.etag) return new Response(null, { status: 304, headers });
    return new Response(c.req.method === 'HEAD' ? null : (file.body as Uint8Array<ArrayBuffer>), { headers });
  });
  return app;
}
