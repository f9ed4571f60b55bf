import { fileURLToPath } from 'node:url';

/** The islands' client entry: hydrates every island on a page. */
export const ISLANDS_ENTRY = fileURLToPath(new URL('../../islands/client.ts', import.meta.url));

let built: Promise<Uint8Array | null> | undefined;

/**
 * Bundles the islands for browsers with esbuild, in memory, once per process (at start-up, never per
 * request). Null where esbuild cannot run (e.g. Deno Deploy): then a prebuilt static/islands.js is served
 * (`npm run build:islands`), and without one the UI still works, as every form works without JavaScript.
 */
export function buildIslandsBundle(): Promise<Uint8Array | null> {
  built ??= (async () => {
    try {
      const esbuild = await import('esbuild');
      const result = await esbuild.build({
        entryPoints: [ISLANDS_ENTRY],
        bundle: true,
        format: 'esm',
        target: ['es2020'],
        minify: true,
        write: false,
        jsx: 'automatic',
        jsxImportSource: 'preact',
        legalComments: 'none',
        logLevel: 'silent',
      });
      return result.outputFiles[0]?.contents ?? null;
    } catch {
      return null;
    }
  })();
  return built;
}
