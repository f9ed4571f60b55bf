// `npm run restore -- DIR [--force]`: loads an escrow export (lib/escrow) after verifying it against its manifest
// (sizes, SHA-256s, line counts) into an empty database, migrating it first; `--force` adds to a database that
// already has links, only where codes are free (an existing code, deleted or not, is never changed).
import { resolve } from 'node:path';
import { loadConfigOrExit } from '../boot/load_config.ts';
import { EscrowError } from '../lib/escrow/escrow_manifest.ts';
import { restoreEscrow } from '../lib/escrow/restore_escrow.ts';
import { verifyEscrow } from '../lib/escrow/verify_escrow.ts';
import { forgetStoredTargetReview } from '../lib/links/review_stored_targets.ts';
import { OutputDirError } from '../lib/shared/output_dir.ts';
import { CliError, openCliDatabase, parseCliArgs, runCli } from './cli_database.ts';

const USAGE = `usage: npm run restore -- DIR [--force] [--verify-only]
  DIR             an export made by \`npm run export\` (or the escrow Schedule)
  --force         restore into a database that already has links: add only links whose codes are free
  --verify-only   check DIR against its manifest and stop`;

const CLI_ARGS = {
  options: {
    force: { type: 'boolean', default: false },
    'verify-only': { type: 'boolean', default: false },
  },
  allowPositionals: true,
} as const;

runCli(
  async () => {
    const args = parseCliArgs(CLI_ARGS, USAGE);
    if (!args) return 0;
    if (args.positionals.length !== 1) throw new CliError(`give exactly one export directory\n${USAGE}`, 2);
    const dir = resolve(args.positionals[0]!);
    // The export is checked before any database is touched.
    const manifest = await verifyEscrow(dir);
    process.stderr.write(
      `${dir}: a Lifeline export of ${manifest.counts.links} links as of ${manifest.snapshotAt}; every file matches its manifest\n`,
    );
    if (args.values['verify-only']) return 0;
    const config = loadConfigOrExit(process.env);
    const db = await openCliDatabase(config, {
      create: true,
      migrate: true,
      applicationName: 'lifeline-restore',
    });
    try {
      process.stderr.write(`restoring into ${db.describe}...\n`);
      const summary = await restoreEscrow(
        { sql: db.sql },
        { dir, force: args.values.force, actor: 'system:restore-cli' },
      );
      const tables = Object.entries(summary.tables).map(
        ([t, c]) => `  ${t.padEnd(14)} ${String(c.inserted).padStart(10)} of ${c.inExport}`,
      );
      process.stderr.write(`${tables.join('\n')}\n`);
      if (summary.mode === 'merge') {
        process.stderr.write(
          `${summary.skippedLinks} links of the export were already in the database and left unchanged` +
            `${summary.skippedExamples.length ? ` (e.g. ${summary.skippedExamples.join(', ')})` : ''}\n`,
        );
      }
      process.stderr.write(
        `restored in ${(summary.durationMs / 1000).toFixed(1)} s (${summary.mode} database)\n`,
      );
      // Restored links bypassed every way in: the next start reviews their targets against the target rule
      // (ADR 0017). Not now: a restore loads the export exactly as it was.
      await forgetStoredTargetReview(db.sql);
      process.stderr.write('stored targets will be reviewed against the target rule at the next start\n');
      process.stdout.write(
        `${JSON.stringify({ mode: summary.mode, links: summary.tables.links?.inserted ?? 0, skippedLinks: summary.skippedLinks, durationMs: summary.durationMs })}\n`,
      );
      return 0;
    } finally {
      await db.close();
    }
  },
  (error) => error instanceof EscrowError || error instanceof OutputDirError,
);
