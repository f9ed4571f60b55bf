import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CODE_MAX_LENGTH } from '../codes/code_rules.ts';
import type { RedirectSettings } from '../redirect/redirect_policy.ts';
import type { SnapshotFormat } from '../shared/config.ts';
import { DEFAULT_DOMAIN, keyDomain, shortBaseUrlOf } from '../shared/link_key.ts';
import type { Logger } from '../shared/logger.ts';
import { prepareOutputDir } from '../shared/output_dir.ts';
import { type TaskContext, throwIfCancelled } from '../shared/task_context.ts';
import { withLinkSnapshot } from '../stores/snapshot_store.ts';
import type { Sql } from '../stores/sql.ts';
import type { CanonicalTargetPolicy } from '../targets/target_rule.ts';
import { createKvWriter } from './kv_snapshot.ts';
import {
  createNginxWriter,
  type NginxDomainFiles,
  nginxPrefixOf,
  writeNginxAllDomains,
} from './nginx_snapshot.ts';
import { createRedirectsWriter } from './redirects_snapshot.ts';
import { admitSnapshotRow, emptyRefusedRows, type RefusedSnapshotRows } from './snapshot_rows.ts';
import {
  SNAPSHOT_FILE_MODE,
  SNAPSHOT_FOLDER_MODE,
  type SnapshotWriter,
  type SnapshotWriterOptions,
} from './snapshot_writer.ts';
import { notFoundAnswer, toStaticAnswer } from './static_answer.ts';

/** Where the other short domains' files go, one folder each by name (the default's stay at the top). */
export const DOMAINS_FOLDER = 'domains';

/** One short domain's writers and its folder under the snapshot ('' for the default). */
interface DomainWriters {
  sub: string;
  writers: SnapshotWriter[];
  /** Where its files are served from, and the name its nginx server answers. */
  publicDir: string;
  serverName: string;
}

/** The snapshot's own description, written last (a folder without it did not finish). */
export const SNAPSHOT_MANIFEST = 'snapshot.json';
const ROWS_PER_FETCH = 2_000;

const WRITERS: Record<SnapshotFormat, (options: SnapshotWriterOptions) => Promise<SnapshotWriter>> = {
  nginx: createNginxWriter,
  redirects: createRedirectsWriter,
  json: createKvWriter,
};

export interface WriteSnapshotOptions {
  /** A new or empty directory; each format goes into its own subfolder. */
  outDir: string;
  /** Where the files will be served from, when not `outDir` (e.g. a `current` symlink). */
  publicDir?: string;
  formats: readonly SnapshotFormat[];
  shortBaseUrl: string;
  /**
   * SHORT_DOMAINS, the default first: each other domain gets its own files under `domains/<name>/` (ADR 0078);
   * absent: the default domain's only (and any other a stored link names).
   */
  shortDomains?: readonly string[];
  redirect: RedirectSettings;
  /** The deployment's target rule (ALLOWED_TARGET_HOSTS, the short domain), as the redirect path applies it. */
  targetPolicy: CanonicalTargetPolicy;
  rootRedirectUrl?: string | undefined;
  /** nginx `listen` (default 80). */
  listen?: string;
  /**
   * SHORT_DOMAIN_UNKNOWN_HOST: with `not_found`, the all-domains nginx configuration answers 404 to a Host it does
   * not name; by default the default domain's server answers it.
   */
  unknownHost?: 'default' | 'not_found';
  context?: TaskContext;
}

export interface SnapshotSummary {
  generatedAt: string;
  outDir: string;
  formats: SnapshotFormat[];
  /** Codes with an answer other than 404, by status. */
  answers: number;
  byStatus: Record<string, number>;
  files: string[];
  /** Codes a format could not express (an over-long or white-space Location), by format: they answer 404 there. */
  skipped: Partial<Record<SnapshotFormat, string[]>>;
  /** Rows left out of every format: their code breaks the code rule, or their target the target rule. */
  refused: RefusedSnapshotRows;
  durationMs: number;
}

/**
 * The static last-resort resolver: every code's answer, as Lifeline's own redirect policy gives it at the moment
 * of one database snapshot, written as files a plain web server or CDN serves without our code, Postgres or
 * Redis (nginx, `_redirects`, key-value JSON). A snapshot is frozen: a link that expires later keeps redirecting
 * there until the snapshot is regenerated (the Schedule does it every SNAPSHOT_INTERVAL). Streamed in code order.
 * Every row passes the code rule and the target rule first (snapshot_rows.ts), as the redirect path would check
 * it; the rest is counted, logged and left out, so it answers 404 there as it does live.
 */
export async function writeSnapshotFiles(
  deps: { sql: Sql; logger?: Logger },
  options: WriteSnapshotOptions,
): Promise<SnapshotSummary> {
  const started = Date.now();
  const created = await prepareOutputDir(options.outDir, 'a snapshot', { mode: SNAPSHOT_FOLDER_MODE });
  const writers: SnapshotWriter[] = [];
  try {
    const summary = await withLinkSnapshot(
      deps.sql,
      ROWS_PER_FETCH,
      async ({ snapshotAt, longestCode, rows }) => {
        const nowMs = snapshotAt.getTime();
        const generatedAt = snapshotAt.toISOString();
        /**
         * One short domain's writers: the default's in the snapshot's own folder (as before several domains), each
         * other's in `domains/<name>/`, served as that name (ADR 0078). Rows arrive in key order, so each domain's
         * codes reach its writers in code order.
         */
        const writersOf = async (stored: string): Promise<DomainWriters> => {
          const sub = stored === DEFAULT_DOMAIN ? '' : join(DOMAINS_FOLDER, stored);
          const baseUrl = shortBaseUrlOf(options, stored);
          if (sub !== '')
            await mkdir(join(options.outDir, sub), { recursive: true, mode: SNAPSHOT_FOLDER_MODE });
          const writerOptions: SnapshotWriterOptions = {
            outDir: join(options.outDir, sub),
            publicDir: join(options.publicDir ?? options.outDir, sub),
            shortBaseUrl: baseUrl,
            listen: options.listen ?? '80',
            serverName: new URL(baseUrl).hostname,
            generatedAt,
            notFound: notFoundAnswer(nowMs, options.redirect),
            rootRedirectUrl: options.rootRedirectUrl,
            // Only codes that pass the code rule are written: a longer stored one (refused below) must not size
            // nginx's capital-letter masks (one regex per position).
            longestCode: Math.min(longestCode, CODE_MAX_LENGTH),
            nginxPrefix: nginxPrefixOf(stored),
          };
          const made: DomainWriters = {
            sub,
            writers: [],
            publicDir: writerOptions.publicDir,
            serverName: writerOptions.serverName,
          };
          for (const format of options.formats) {
            const writer = await WRITERS[format](writerOptions);
            made.writers.push(writer);
            writers.push(writer);
          }
          return made;
        };
        const byDomain = new Map<string, DomainWriters>();
        // The default domain's files are written even when it has no link (its nginx server answers 404s).
        byDomain.set(DEFAULT_DOMAIN, await writersOf(DEFAULT_DOMAIN));
        for (const domain of options.shortDomains?.slice(1) ?? [])
          byDomain.set(domain, await writersOf(domain));
        const byStatus: Record<string, number> = {};
        const refused = emptyRefusedRows();
        let answers = 0;
        for await (const batch of rows) {
          if (options.context) throwIfCancelled(options.context);
          for (const row of batch) {
            if (!admitSnapshotRow(row, options.targetPolicy, refused)) continue;
            const answer = toStaticAnswer(row, nowMs, options.redirect);
            if (!answer) continue;
            answers++;
            byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1;
            const stored = keyDomain(row.code);
            let domain = byDomain.get(stored);
            if (domain === undefined) {
              // A domain no longer in SHORT_DOMAINS still has its links: written too, for whoever serves it.
              domain = await writersOf(stored);
              byDomain.set(stored, domain);
            }
            for (const writer of domain.writers) await writer.add(answer);
          }
          options.context?.heartbeat({ answers });
        }
        const files: string[] = [];
        const skipped: SnapshotSummary['skipped'] = {};
        const nginxDomains: NginxDomainFiles[] = [];
        for (const domain of byDomain.values()) {
          for (const [i, writer] of domain.writers.entries()) {
            const done = await writer.finish();
            files.push(...done.files.map((file) => (domain.sub === '' ? file : join(domain.sub, file))));
            const format = options.formats[i]!;
            if (done.skipped.length > 0) skipped[format] = [...(skipped[format] ?? []), ...done.skipped];
            if (format === 'nginx')
              nginxDomains.push({
                publicDir: domain.publicDir,
                serverName: domain.serverName,
                entries: done.entries,
              });
          }
        }
        // Several domains: one http block for all of them too (each domain's own files stay complete alone).
        if (nginxDomains.length > 1) {
          files.push(
            ...(await writeNginxAllDomains({
              outDir: options.outDir,
              publicDir: options.publicDir ?? options.outDir,
              listen: options.listen ?? '80',
              generatedAt,
              domains: nginxDomains,
              unknownHostNotFound: options.unknownHost === 'not_found',
            })),
          );
        }
        return { generatedAt, answers, byStatus, files, skipped, refused };
      },
    );
    const result: SnapshotSummary = {
      ...summary,
      outDir: options.outDir,
      formats: [...options.formats],
      files: [...summary.files, SNAPSHOT_MANIFEST],
      durationMs: Date.now() - started,
    };
    await writeFile(join(options.outDir, SNAPSHOT_MANIFEST), `${JSON.stringify(result, null, 2)}\n`, {
      mode: SNAPSHOT_FILE_MODE,
    });
    const { refused } = result;
    if (refused.codeRule + refused.targetRule > 0) {
      deps.logger?.warn(
        { codeRule: refused.codeRule, targetRule: refused.targetRule, examples: refused.examples },
        'rows the snapshot refused: their code breaks the code rule or their target the target rule (they answer 404)',
      );
    }
    for (const [format, codes] of Object.entries(result.skipped)) {
      deps.logger?.warn(
        { format, codes: codes.slice(0, 20), count: codes.length },
        'codes the snapshot format cannot express',
      );
    }
    return result;
  } catch (error) {
    for (const writer of writers) writer.abort();
    if (created) await rm(options.outDir, { recursive: true, force: true });
    throw error;
  }
}
