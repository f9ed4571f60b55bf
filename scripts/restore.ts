// `npm run restore -- DIR [--force] [--allow-unsigned] [--index-jobs N]`: loads an escrow export (lib/escrow) after
// verifying it against its manifest (its signature when ESCROW_SIGNING_KEY is set; sizes, SHA-256s, line counts)
// into an empty database, migrating it first, every row checked with the intake rules; `--force` adds to a database
// that already has links, only where codes are free (an existing code, deleted or not, is never changed). A database
// holding an earlier restore whose index builds were interrupted gets them built, and nothing else is loaded.
import { resolve } from 'node:path';
import { loadConfigOrExit } from '../boot/load_config.ts';
import { EscrowError } from '../lib/escrow/escrow_manifest.ts';
import type { SignatureState } from '../lib/escrow/escrow_signature.ts';
import { restoreEscrow } from '../lib/escrow/restore_escrow.ts';
import { DEFAULT_INDEX_JOBS, finishPendingIndexes, MAX_INDEX_JOBS } from '../lib/escrow/restore_indexes.ts';
import { verifyEscrow } from '../lib/escrow/verify_escrow.ts';
import { forgetStoredTargetReview } from '../lib/links/review_stored_targets.ts';
import { OutputDirError } from '../lib/shared/output_dir.ts';
import { createCanonicalTargetPolicy } from '../lib/targets/target_rule.ts';
import { CliError, openCliDatabase, parseCliArgs, runCli } from './cli_database.ts';

const USAGE = `usage: npm run restore -- DIR [--force] [--verify-only] [--allow-unsigned] [--index-jobs N]
  DIR               an export made by \`npm run export\` (or the escrow Schedule)
  --force           restore into a database that already has links: add only links whose codes are free
  --verify-only     check DIR against its manifest (and signature) and stop
  --allow-unsigned  with ESCROW_SIGNING_KEY set, restore an export that has no signature (never a wrong one)
  --index-jobs N    indexes built side by side after the rows are loaded, 1..${MAX_INDEX_JOBS} (default ${DEFAULT_INDEX_JOBS}; about one per core)`;

const CLI_ARGS = {
  options: {
    force: { type: 'boolean', default: false },
    'verify-only': { type: 'boolean', default: false },
    'allow-unsigned': { type: 'boolean', default: false },
    'index-jobs': { type: 'string', default: String(DEFAULT_INDEX_JOBS) },
  },
  allowPositionals: true,
} as const;

const SIGNATURE_NOTES: Record<SignatureState, string> = {
  valid: 'its manifest is signed with ESCROW_SIGNING_KEY',
  unsigned: 'it is not signed (set ESCROW_SIGNING_KEY where exports are made and here to check who made it)',
  'unsigned-allowed': 'it is not signed; restoring anyway (--allow-unsigned)',
  'not-checked': 'it is signed, but ESCROW_SIGNING_KEY is not set here: the signature was not checked',
};

runCli(
  async () => {
    const args = parseCliArgs(CLI_ARGS, USAGE);
    if (!args) return 0;
    if (args.positionals.length !== 1) throw new CliError(`give exactly one export directory\n${USAGE}`, 2);
    const dir = resolve(args.positionals[0]!);
    const indexJobs = Number(args.values['index-jobs']);
    if (!Number.isInteger(indexJobs) || indexJobs < 1 || indexJobs > MAX_INDEX_JOBS) {
      throw new CliError(`--index-jobs must be a whole number from 1 to ${MAX_INDEX_JOBS}\n${USAGE}`, 2);
    }
    const config = loadConfigOrExit(process.env);
    const signing = {
      signingKey: config.escrow.signingKey,
      allowUnsigned: args.values['allow-unsigned'],
    };
    // The export is checked before any database is touched.
    const verified = await verifyEscrow(dir, signing);
    const { manifest, signature } = verified;
    process.stderr.write(
      `${dir}: a Lifeline export of ${manifest.counts.links} links as of ${manifest.snapshotAt}; every file matches its manifest\n` +
        `${SIGNATURE_NOTES[signature]}\n`,
    );
    if (args.values['verify-only']) return 0;
    const db = await openCliDatabase(config, {
      create: true,
      migrate: true,
      applicationName: 'lifeline-restore',
      // The load's transaction, the index builds, and the connection holding the restore's lock.
      connections: indexJobs + 2,
    });
    const progress = (line: string) => process.stderr.write(`  ${line}\n`);
    try {
      const finished = await finishPendingIndexes(db.sql, { jobs: indexJobs, progress });
      if (finished !== null) {
        process.stderr.write(
          `${db.describe} held a restore of ${finished.source} whose index builds had not finished: ` +
            `${finished.built} built now in ${(finished.durationMs / 1000).toFixed(1)} s; nothing else was loaded\n`,
        );
        return 0;
      }
      process.stderr.write(`restoring into ${db.describe}...\n`);
      const summary = await restoreEscrow(
        { sql: db.sql, targetPolicy: createCanonicalTargetPolicy(config) },
        {
          dir,
          force: args.values.force,
          actor: 'system:restore-cli',
          ...signing,
          progress,
          indexJobs,
          verified,
        },
      );
      if (summary.mode === 'merge') {
        process.stderr.write(
          `${summary.skippedLinks} links of the export were already in the database and left unchanged` +
            `${summary.skippedExamples.length ? ` (e.g. ${summary.skippedExamples.join(', ')})` : ''}\n`,
        );
      }
      const { refused } = summary;
      if (refused.total > 0) {
        const byRule = Object.entries(refused.byRule).map(([rule, n]) => `${n} ${rule}`);
        const byTable = Object.entries(refused.byTable).map(([table, n]) => `${n} in ${table}`);
        process.stderr.write(
          `${refused.total} rows refused (they break an intake rule, or belong to a link that does): ` +
            `${byRule.join(', ')}; ${byTable.join(', ')}; e.g. ${refused.examples.slice(0, 5).join('; ')}\n`,
        );
      }
      const { searchText } = summary;
      process.stderr.write(
        searchText.source === 'exported'
          ? `search text taken as exported (same folding; ${searchText.sampled} links checked)\n`
          : searchText.source === 'refolded'
            ? `search text folded again for every link: ${searchText.mismatched} of ${searchText.sampled} checked disagreed with the export\n`
            : 'search text folded link by link as it was loaded\n',
      );
      process.stderr.write(
        `restored in ${(summary.durationMs / 1000).toFixed(1)} s (${summary.mode} database)\n` +
          'restored links are due a safety re-scan (clean verdicts loaded as unknown); the worker starts it at its ' +
          'next start, or start it now from /ui/ops\n',
      );
      // Restored links bypassed every way in: the next start reviews their targets against the target rule
      // (ADR 0017). Not now: a restore loads the export exactly as it was.
      await forgetStoredTargetReview(db.sql);
      process.stderr.write('stored targets will be reviewed against the target rule at the next start\n');
      process.stdout.write(
        `${JSON.stringify({ mode: summary.mode, links: summary.tables.links?.inserted ?? 0, skippedLinks: summary.skippedLinks, refused: refused.total, searchText: searchText.source, signature: summary.signature, durationMs: summary.durationMs })}\n`,
      );
      return 0;
    } finally {
      await db.close();
    }
  },
  (error) => error instanceof EscrowError || error instanceof OutputDirError,
);
