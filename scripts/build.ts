// `npm run build`: the production JavaScript in dist/, run by Node alone (no TypeScript runtime):
//
//   dist/web.mjs, dist/worker.mjs                    the entries (main.ts, workers/main.ts)
//   dist/{migrate,export,restore,snapshot,reset_admin}.mjs   the CLIs of scripts/
//   dist/healthcheck.mjs                             the container's HEALTHCHECK (scripts/healthcheck.ts)
//   dist/workflow-bundle.js                          workflows/ bundled by Temporal's bundleWorkflowCode
//   dist/workflow-bundle-traced.js                   the same with the tracing workflow interceptors (ADR 0072)
//   dist/static/                                     static/ with islands.js bundled from islands/
//
// Our code is bundled by esbuild, one file per entry; packages stay in node_modules (they load native modules,
// worker threads and files of their own, and the image installs them as locked). migrations/ is read at run time
// from beside dist/. `scripts/lifeline.sh <role>` starts them with each one's Node flags (npm run start:web, the
// container image). Takes a few seconds.
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { Plugin } from 'esbuild';
import { buildIslandsBundle } from '../lib/ui/islands_bundle.ts';
import { TRACING_WORKFLOW_INTERCEPTORS, WORKFLOWS_PATH } from '../workers/create_worker.ts';
import { ROOT } from './temporal_cli.ts';

export const DIST = join(ROOT, 'dist');

/** Output name → source entry. */
export const ENTRIES: Record<string, string> = {
  web: 'main.ts',
  worker: 'workers/main.ts',
  migrate: 'scripts/migrate.ts',
  export: 'scripts/export.ts',
  restore: 'scripts/restore.ts',
  snapshot: 'scripts/snapshot.ts',
  reset_admin: 'scripts/reset_admin.ts',
  healthcheck: 'scripts/healthcheck.ts',
};

/**
 * Modules find their files (migrations/, static/, the default data directory) relative to their own
 * import.meta.url. In a bundle every module would share the bundle's URL, one folder off for some of them; this
 * gives each module (the entries excepted: they are the bundle, and web forks its own file) the URL its source
 * has, rebuilt from the bundle's at run time as if dist/ sat at the root of the tree, so dist/ works wherever
 * it is laid out with migrations/ beside it (the image's /app, a test's copy).
 */
function sourceLocationPlugin(entries: Set<string>): Plugin {
  return {
    name: 'source-location',
    setup(build) {
      build.onLoad({ filter: /\.tsx?$/ }, (args) => {
        if (args.path.includes(`${sep}node_modules${sep}`) || entries.has(args.path)) return undefined;
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const fromDist = `../${relative(ROOT, args.path).split(sep).join('/')}`;
        return {
          contents: source.replaceAll(
            'import.meta.url',
            `new URL(${JSON.stringify(fromDist)}, import.meta.url).href`,
          ),
          loader: args.path.endsWith('.tsx') ? 'tsx' : 'ts',
        };
      });
    },
  };
}

/** Builds everything into `outDir` (default dist/ of this checkout; it must be named dist, beside migrations/). */
export async function buildDist(
  options: { outDir?: string; log?: (msg: string) => void } = {},
): Promise<void> {
  const outDir = options.outDir ?? DIST;
  const log = options.log ?? (() => {});
  if (basename(outDir) !== 'dist') throw new Error(`the build goes to a folder named dist, not ${outDir}`);
  const started = Date.now();
  const esbuild = await import('esbuild');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const entryPaths = Object.fromEntries(Object.entries(ENTRIES).map(([out, src]) => [out, join(ROOT, src)]));
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: entryPaths,
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    packages: 'external',
    // Kept readable: a production stack trace names our functions as in the source.
    minify: false,
    sourcemap: 'linked',
    legalComments: 'none',
    define: { LIFELINE_PREBUILT: 'true' },
    plugins: [sourceLocationPlugin(new Set(Object.values(entryPaths)))],
    logLevel: 'warning',
    metafile: true,
  });
  const sizes = Object.entries(result.metafile.outputs)
    .filter(([file]) => file.endsWith('.mjs'))
    .map(([file, out]) => `${relative(outDir, join(ROOT, file))} ${(out.bytes / 1024).toFixed(0)} KiB`);
  log(`entries: ${sizes.join(', ')}`);

  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger(log) });
  writeFileSync(join(outDir, 'workflow-bundle.js'), code);
  // A worker with tracing on loads this one: interceptors are compiled into a bundle, not chosen at start.
  const traced = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: [...TRACING_WORKFLOW_INTERCEPTORS],
    logger: quietLogger(log),
  });
  writeFileSync(join(outDir, 'workflow-bundle-traced.js'), traced.code);
  log(
    `workflow bundles: ${(code.length / 1024).toFixed(0)} KiB, traced ${(traced.code.length / 1024).toFixed(0)} KiB`,
  );

  const staticDir = join(outDir, 'static');
  cpSync(join(ROOT, 'static'), staticDir, { recursive: true });
  const islands = await buildIslandsBundle();
  if (!islands) throw new Error('could not bundle the islands (esbuild did not run)');
  writeFileSync(join(staticDir, 'islands.js'), islands);
  log(
    `islands: ${islands.length} bytes; built in ${((Date.now() - started) / 1000).toFixed(1)} s → ${outDir}`,
  );
}

function quietLogger(log: (msg: string) => void) {
  return {
    log: () => {},
    trace: () => {},
    debug: () => {},
    info: () => {},
    warn: (message: string) => log(`bundler: ${message}`),
    error: (message: string) => log(`bundler: ${message}`),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildDist({ log: (msg) => process.stderr.write(`[build] ${msg}\n`) });
}
