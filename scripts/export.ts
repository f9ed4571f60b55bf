// `npm run export -- --out DIR [--links-only] [--jobs N]`: an escrow export of the whole database (lib/escrow): every link
// (deleted ones too), vendor mappings, reports, the blocklist, the audit log and click aggregates as JSON lines
// plus a manifest with counts and SHA-256s, from one consistent snapshot, streamed in constant memory.
import { resolve } from 'node:path';
import { loadConfigOrExit } from '../boot/load_config.ts';
import { EscrowError } from '../lib/escrow/escrow_manifest.ts';
import { toSigningKeyId } from '../lib/escrow/escrow_signature.ts';
import { DEFAULT_EXPORT_JOBS, exportEscrow, MAX_EXPORT_JOBS } from '../lib/escrow/export_escrow.ts';
import { OutputDirError } from '../lib/shared/output_dir.ts';
import { CliError, openCliDatabase, parseCliArgs, runCli } from './cli_database.ts';

const USAGE = `usage: npm run export -- --out DIR [--links-only] [--jobs N]
  --out DIR       a new or empty directory for the export
  --links-only    leave out the audit log and click aggregates (history)
  --jobs N        tables written side by side in the same snapshot, 1..${MAX_EXPORT_JOBS} (default ${DEFAULT_EXPORT_JOBS}; 1 on the embedded database)`;

const CLI_ARGS = {
  options: {
    out: { type: 'string' },
    'links-only': { type: 'boolean', default: false },
    jobs: { type: 'string', default: String(DEFAULT_EXPORT_JOBS) },
  },
  allowPositionals: false,
} as const;

runCli(
  async () => {
    const args = parseCliArgs(CLI_ARGS, USAGE);
    if (!args) return 0;
    if (!args.values.out) throw new CliError(`--out DIR is required\n${USAGE}`, 2);
    const outDir = resolve(args.values.out);
    const jobs = Number(args.values.jobs);
    if (!Number.isInteger(jobs) || jobs < 1 || jobs > MAX_EXPORT_JOBS) {
      throw new CliError(`--jobs must be a whole number from 1 to ${MAX_EXPORT_JOBS}\n${USAGE}`, 2);
    }
    const config = loadConfigOrExit(process.env);
    const db = await openCliDatabase(config, { applicationName: 'lifeline-export', connections: jobs + 1 });
    try {
      process.stderr.write(`exporting ${db.describe} to ${outDir}...\n`);
      const manifest = await exportEscrow(
        { sql: db.sql, shortBaseUrl: config.shortBaseUrl },
        { outDir, history: !args.values['links-only'], signingKey: config.escrow.signingKey, jobs },
      );
      const rssMiB = process.resourceUsage().maxRSS / 1024;
      const files = manifest.files.map(
        (f) => `  ${f.name.padEnd(20)} ${String(f.rows).padStart(10)} rows  ${f.sha256}`,
      );
      process.stderr.write(
        `${files.join('\n')}\nexported ${manifest.counts.links} links (${manifest.counts.deletedLinks} deleted) ` +
          `as of ${manifest.snapshotAt} in ${(manifest.durationMs / 1000).toFixed(1)} s, peak RSS ${rssMiB.toFixed(0)} MiB\n` +
          (config.escrow.signingKey
            ? `manifest signed with ESCROW_SIGNING_KEY (key id ${toSigningKeyId(config.escrow.signingKey)})\n`
            : 'manifest not signed (ESCROW_SIGNING_KEY is not set)\n'),
      );
      process.stdout.write(
        `${JSON.stringify({ outDir, links: manifest.counts.links, durationMs: manifest.durationMs, peakRssMiB: Math.round(rssMiB) })}\n`,
      );
      return 0;
    } finally {
      await db.close();
    }
  },
  (error) => error instanceof EscrowError || error instanceof OutputDirError,
);
