// `npm run snapshot -- --format nginx|redirects|json --out DIR [--listen ADDR]`: the static last-resort resolver
// (lib/snapshot): every code's answer at this moment as files nginx, a static host or an edge key-value store
// serves without our code, Postgres or Redis. `--format` may repeat (or take a comma list); default all three.
import { resolve } from 'node:path';
import { loadConfigOrExit } from '../boot/load_config.ts';
import { SNAPSHOT_FORMATS, type SnapshotFormat } from '../lib/shared/config.ts';
import { OutputDirError } from '../lib/shared/output_dir.ts';
import { SNAPSHOT_MANIFEST, writeSnapshotFiles } from '../lib/snapshot/write_snapshot.ts';
import { createCanonicalTargetPolicy } from '../lib/targets/target_rule.ts';
import { CliError, openCliDatabase, parseCliArgs, runCli } from './cli_database.ts';

const USAGE = `usage: npm run snapshot -- --format nginx|redirects|json --out DIR [--listen ADDR]
  --format F     nginx (map + server block + nginx.conf), redirects (_redirects for Netlify-style hosts),
                 json (key-value pairs for edge stores); repeat or comma-separate; default all three
  --out DIR      a new or empty directory
  --listen ADDR  the nginx listen directive's address (default 80)`;

const CLI_ARGS = {
  options: {
    format: { type: 'string', multiple: true },
    out: { type: 'string' },
    listen: { type: 'string' },
  },
  allowPositionals: false,
} as const;

runCli(
  async () => {
    const args = parseCliArgs(CLI_ARGS, USAGE);
    if (!args) return 0;
    if (!args.values.out) throw new CliError(`--out DIR is required\n${USAGE}`, 2);
    const requested = (args.values.format ?? []).flatMap((f) => f.split(',')).map((f) => f.trim());
    const unknown = requested.filter((f) => !(SNAPSHOT_FORMATS as readonly string[]).includes(f));
    if (unknown.length > 0) throw new CliError(`unknown --format ${unknown.join(', ')}\n${USAGE}`, 2);
    const formats = (
      requested.length > 0 ? [...new Set(requested)] : [...SNAPSHOT_FORMATS]
    ) as SnapshotFormat[];
    const listen = args.values.listen ?? '80';
    if (!/^[A-Za-z0-9.:[\]_-]+$/.test(listen))
      throw new CliError(`--listen ${listen} is not an address or port\n${USAGE}`, 2);
    const outDir = resolve(args.values.out);
    const config = loadConfigOrExit(process.env);
    const db = await openCliDatabase(config, { applicationName: 'lifeline-snapshot' });
    try {
      const summary = await writeSnapshotFiles(
        { sql: db.sql },
        {
          outDir,
          formats,
          shortBaseUrl: config.shortBaseUrl,
          shortDomains: config.shortDomains,
          unknownHost: config.unknownHost,
          redirect: config.redirect,
          targetPolicy: createCanonicalTargetPolicy(config),
          rootRedirectUrl: config.rootRedirectUrl,
          listen,
        },
      );
      const statuses = Object.entries(summary.byStatus)
        .map(([s, n]) => `${n} × ${s}`)
        .join(', ');
      process.stderr.write(
        `snapshot of ${summary.answers} codes as of ${summary.generatedAt} (${statuses || 'none'}; unknown codes 404) ` +
          `in ${(summary.durationMs / 1000).toFixed(1)} s, ${summary.files.length} files in ${outDir} (${SNAPSHOT_MANIFEST} lists them)\n`,
      );
      const { refused } = summary;
      if (refused.codeRule + refused.targetRule > 0) {
        process.stderr.write(
          `${refused.codeRule + refused.targetRule} rows refused: ${refused.codeRule} by the code rule, ` +
            `${refused.targetRule} by the target rule (they answer 404, as they do live); e.g. ` +
            `${refused.examples.slice(0, 5).join('; ')}\n`,
        );
      }
      for (const [format, codes] of Object.entries(summary.skipped)) {
        process.stderr.write(
          `${format}: ${codes.length} codes cannot be expressed and answer 404 there: ${codes.slice(0, 10).join(', ')}\n`,
        );
      }
      if (formats.includes('nginx')) {
        process.stderr.write(
          `serve it: mkdir -p /tmp/lifeline-nginx/logs && nginx -p /tmp/lifeline-nginx -e stderr -c ${outDir}/nginx/nginx.conf\n`,
        );
      }
      process.stdout.write(
        `${JSON.stringify({ outDir, answers: summary.answers, refused: { codeRule: refused.codeRule, targetRule: refused.targetRule }, durationMs: summary.durationMs })}\n`,
      );
      return 0;
    } finally {
      await db.close();
    }
  },
  (error) => error instanceof OutputDirError,
);
