// CSV import of new links (the editor UI's /ui/links/import): a file of rows (url, and optionally code, title,
// tags, expires_at...) read into link inputs, then either tried (the dry run: the batch creation runs in a
// transaction that is rolled back, so every row's outcome is the one an import would have, duplicates and target
// rule included, and nothing is kept) or imported through the batch creation the API uses (target rule, safety
// scan, the sync queue for the serving store and Bitly). A row's error never blocks the others.
import { CsvError } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { ValidationError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import type { Creator } from './create_link.ts';
import { BATCH_MAX_LINKS, type BatchItemResult, createLinksBatch } from './create_links_batch.ts';

/** Largest file accepted, and most rows (the batch API's own limit: one import is one batch). */
export const IMPORT_MAX_BYTES = 1024 * 1024;
export const IMPORT_MAX_ROWS = BATCH_MAX_LINKS;

/** The columns a file may have (header names, case and `-`/space/`_` ignored) and the input field each fills. */
const COLUMNS: Record<string, string> = {
  url: 'url',
  destination: 'url',
  code: 'alias',
  alias: 'alias',
  title: 'title',
  tags: 'tags',
  expiresat: 'expiresAt',
  expiry: 'expiresAt',
  expiredurl: 'expiredUrl',
  utmcampaign: 'utm.campaign',
  utmsource: 'utm.source',
  utmmedium: 'utm.medium',
};

/** One row of the file as read: its line and the input it makes. */
export interface ImportRow {
  line: number;
  input: Record<string, unknown>;
  /** Fields past the header's columns (the row is refused on its own). */
  extra?: string;
}

/** What became (or would become) of one row. */
export interface ImportOutcome {
  line: number;
  url: string;
  /** The new link's code (an alias as asked; a minted code only once imported), or the existing one's. */
  code: string | null;
  outcome: 'create' | 'existing' | 'error';
  /** For an error: the problems, each naming the column (the input field) when there is one. */
  problems: { field: string | null; message: string }[];
}

const normalise = (name: string) => name.toLowerCase().replace(/[\s_-]/g, '');

/**
 * Reads the file: a header row naming known columns (url required), then up to IMPORT_MAX_ROWS rows. A file the
 * import cannot read at all (too large, no url column, an unknown column, a broken quote, too many rows) is a 422
 * on the field `file`; a row's own problems are left to the batch creation, row by row.
 */
export function parseImportCsv(text: string): ImportRow[] {
  const fail = (message: string) =>
    new ValidationError([{ path: 'file', message }], 'The CSV file cannot be imported.');
  if (Buffer.byteLength(text) > IMPORT_MAX_BYTES)
    throw fail(fieldProblem('importTooLarge', { mib: IMPORT_MAX_BYTES / 1024 / 1024 }));
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parseSync(text, {
      bom: true,
      trim: true,
      skip_empty_lines: true,
      relax_column_count: true,
      info: true,
      to: IMPORT_MAX_ROWS + 2,
    }) as unknown as { record: string[]; info: { lines: number } }[];
  } catch (error) {
    if (error instanceof CsvError)
      throw fail(fieldProblem('importUnreadable', { line: Number(error.lines ?? 1) }));
    throw error;
  }
  const [header, ...rows] = records;
  if (!header) throw fail(fieldProblem('csvNoRows'));
  const fields = header.record.map((name) => COLUMNS[normalise(name)] ?? null);
  const unknown = header.record.filter((_, i) => fields[i] === null);
  if (unknown.length > 0)
    throw fail(fieldProblem('importUnknownColumns', { columns: unknown.slice(0, 5).join(', ') }));
  if (!fields.includes('url')) throw fail(fieldProblem('importNeedsUrl'));
  if (rows.length === 0) throw fail(fieldProblem('csvNoRows'));
  if (rows.length > IMPORT_MAX_ROWS) throw fail(fieldProblem('csvTooManyRows', { max: IMPORT_MAX_ROWS }));
  return rows.map(({ record, info }) => {
    const input: Record<string, unknown> = {};
    for (const [i, value] of record.entries()) {
      const field = fields[i];
      if (!field || value === '') continue;
      if (field === 'tags') input.tags = value.split(/[\s,;|]+/).filter(Boolean);
      else if (field.startsWith('utm.')) {
        const utm = (input.utm ?? {}) as Record<string, string>;
        utm[field.slice(4)] = value;
        input.utm = utm;
      } else input[field] = value;
    }
    // A row longer than its header is named, not silently cut.
    const extra = record.slice(fields.length).filter((v) => v !== '');
    return { line: info.lines, input, ...(extra.length > 0 ? { extra: extra.join(',') } : {}) };
  });
}

/** The batch creation's deps (create_links_batch.ts). */
export type ImportDeps = Omit<Parameters<typeof createLinksBatch>[0], 'dryRun'>;

function toOutcome(row: ImportRow, result: BatchItemResult, dryRun: boolean): ImportOutcome {
  const url = typeof row.input.url === 'string' ? row.input.url : '';
  if ('link' in result) {
    const created = result.status === 201;
    return {
      line: row.line,
      url: result.link.targetUrl,
      // A dry run's minted code is thrown away with its transaction: only an alias is known in advance.
      code: created && dryRun ? ((row.input.alias as string | undefined) ?? null) : result.link.code,
      outcome: created ? 'create' : 'existing',
      problems: [],
    };
  }
  const problems = (result.error.errors ?? []).map((e) => ({
    field: e.path.replace(/^links\[\d+\]\.?/, '') || null,
    message: e.message,
  }));
  return {
    line: row.line,
    url,
    code: null,
    outcome: 'error',
    problems: problems.length > 0 ? problems : [{ field: null, message: result.error.detail }],
  };
}

/**
 * Tries (dryRun) or imports the rows through the batch creation; a row the file itself spoils (more fields than
 * its header) is an error of its own and the rest go on.
 */
export async function importLinks(
  deps: ImportDeps,
  rows: ImportRow[],
  creator: Creator,
  options: { dryRun: boolean },
): Promise<{ outcomes: ImportOutcome[]; createdCodes: string[] }> {
  const sent = rows.filter((r) => r.extra === undefined);
  const results = await createLinksBatch(
    { ...deps, dryRun: options.dryRun },
    sent.map((r) => r.input),
    creator,
  );
  const byRow = new Map(sent.map((r, i) => [r, results[i]!]));
  const outcomes = rows.map((row): ImportOutcome => {
    const result = byRow.get(row);
    if (result) return toOutcome(row, result, options.dryRun);
    return {
      line: row.line,
      url: typeof row.input.url === 'string' ? row.input.url : '',
      code: null,
      outcome: 'error',
      problems: [{ field: null, message: fieldProblem('importExtraFields', { fields: row.extra ?? '' }) }],
    };
  });
  return {
    outcomes,
    createdCodes: options.dryRun
      ? []
      : results.flatMap((r) => (r.status === 201 && 'link' in r ? [r.link.code] : [])),
  };
}
