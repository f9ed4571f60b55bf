import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openFileSink } from '../shared/file_sink.ts';
import {
  requireSnapshotCode,
  SNAPSHOT_FILE_MODE,
  SNAPSHOT_FOLDER_MODE,
  type SnapshotWriter,
  type SnapshotWriterOptions,
} from './snapshot_writer.ts';
import type { StaticAnswer } from './static_answer.ts';
import { renderStaticPage, STATIC_PAGE_CSP } from './static_pages.ts';

/** Netlify's per-line limit is unpublished; Cloudflare Pages refuses lines over 1,000 characters. */
const LONGEST_LINE = 1_000;

/**
 * A `_redirects` file (Netlify's syntax, which Cloudflare Pages reads too): `/code  <Location>  <status>` for
 * redirects, and `/code  /_lifeline/<page>.html  <status>` rewrites for gone (410), expired (410), blocked (451)
 * and warn (200) links, with the pages, a `404.html` for unknown codes and a `_headers` file. Hosts differ in
 * what they accept (docs/ESCROW.md): Cloudflare Pages takes only 2,000 static rules and redirect statuses.
 */
export async function createRedirectsWriter(options: SnapshotWriterOptions): Promise<SnapshotWriter> {
  const dir = join(options.outDir, 'redirects');
  await mkdir(join(dir, '_lifeline', 'warn'), { recursive: true, mode: SNAPSHOT_FOLDER_MODE });
  const out = await openFileSink(join(dir, '_redirects'), { exclusive: true, mode: SNAPSHOT_FILE_MODE });
  const mode = SNAPSHOT_FILE_MODE;
  await out.write(
    `# Lifeline static snapshot of ${options.shortBaseUrl}, generated ${options.generatedAt}: the answer every\n` +
      '# code had at that moment. Regenerate to follow changes.\n' +
      '# Links with routing rules (language, device, country) answer their default target here, for every\n' +
      '# reader: a static file cannot choose; their lines are marked.\n',
  );
  let count = 0;
  const skipped: string[] = [];
  return {
    async add(answer: StaticAnswer) {
      const code = requireSnapshotCode(answer.code);
      const to =
        answer.location ??
        (answer.page === 'warn' ? `/_lifeline/warn/${code}.html` : `/_lifeline/${answer.page}.html`);
      const line = `/${code}  ${to}  ${answer.status}`;
      // A rule is one line of whitespace-separated fields: a Location with white space or anything but printable
      // ASCII (none passes the target rule), or over the limit, cannot be written.
      if (!/^[\x21-\x7e]+$/.test(to) || line.length > LONGEST_LINE) {
        skipped.push(answer.code);
        return;
      }
      if (answer.routed) await out.write(`# /${code} has routing rules: this is its default target\n`);
      await out.write(`${line}\n`);
      count++;
      if (answer.page === 'warn') {
        await writeFile(
          join(dir, '_lifeline', 'warn', `${code}.html`),
          renderStaticPage('warn', answer.destination),
          { mode },
        );
      }
    },
    async finish() {
      await out.close();
      for (const page of ['gone', 'expired', 'blocked'] as const) {
        await writeFile(join(dir, '_lifeline', `${page}.html`), renderStaticPage(page), { mode });
      }
      await writeFile(join(dir, '404.html'), renderStaticPage('not_found'), { mode });
      await writeFile(
        join(dir, '_headers'),
        `/*\n  X-Robots-Tag: noindex\n  Referrer-Policy: strict-origin-when-cross-origin\n/_lifeline/*\n  Content-Security-Policy: ${STATIC_PAGE_CSP}\n  Cache-Control: no-store\n`,
        { mode },
      );
      return {
        files: ['redirects/_redirects', 'redirects/_headers', 'redirects/404.html'],
        entries: count,
        skipped,
      };
    },
    abort() {
      out.abort();
    },
  };
}
