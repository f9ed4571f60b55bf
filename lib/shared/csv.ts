// CSV for people: RFC 4180 (comma-separated, CRLF line ends, a field quoted when it holds a comma, a quote, CR
// or LF, quotes doubled), UTF-8 with a byte-order mark so spreadsheet apps (Excel above all) read Arabic and
// every other script correctly, and safe to open: a text cell that a spreadsheet would run as a formula
// (starting with =, +, -, @, a tab or a carriage return) is prefixed with an apostrophe (OWASP's advice).
// Numbers are written as numbers, never prefixed, so negative differences stay numeric.

/** The UTF-8 byte-order mark: without it Excel reads a CSV in the machine's legacy code page. */
export const CSV_BOM = '\uFEFF';
/** RFC 4180's line end. */
export const CSV_EOL = '\r\n';
/** The Content-Type of every CSV we answer with. */
export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8; header=present';

/** The headers of a CSV download named `fileName` (ASCII): an attachment, never cached (it is our data). */
export function toCsvHeaders(fileName: string): Record<string, string> {
  return {
    'Content-Type': CSV_CONTENT_TYPE,
    'Content-Disposition': `attachment; filename="${fileName.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
    'Cache-Control': 'private, no-store',
    'X-Content-Type-Options': 'nosniff',
  };
}

/** One cell: text, a number, or empty (null/undefined). */
export type CsvCell = string | number | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell as CSV text: formula-safe, quoted when needed. */
export function toCsvCell(cell: CsvCell): string {
  if (cell === null || cell === undefined) return '';
  if (typeof cell === 'number') return Number.isFinite(cell) ? String(cell) : '';
  const text = FORMULA_START.test(cell) ? `'${cell}` : cell;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One record, ending with CRLF. */
export function toCsvRow(cells: readonly CsvCell[]): string {
  return `${cells.map(toCsvCell).join(',')}${CSV_EOL}`;
}

/** A whole (small) CSV document: BOM, header, records. */
export function toCsv(header: readonly string[], rows: Iterable<readonly CsvCell[]>): string {
  let out = CSV_BOM + toCsvRow(header);
  for (const row of rows) out += toCsvRow(row);
  return out;
}

/**
 * A CSV document streamed as UTF-8 bytes: BOM and header first, then each page of rows as `pages` yields it
 * (pulled only as fast as the client reads). A failure half-way aborts the stream, so a download never ends
 * looking complete when it is not.
 */
export function toCsvStream(
  header: readonly string[],
  pages: AsyncIterable<readonly (readonly CsvCell[])[]>,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = pages[Symbol.asyncIterator]();
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode(CSV_BOM + toCsvRow(header)));
        return;
      }
      // Every pull enqueues or closes: a pull that does neither is not called again.
      for (;;) {
        const next = await iterator.next();
        if (next.done) {
          controller.close();
          return;
        }
        let chunk = '';
        for (const row of next.value) chunk += toCsvRow(row);
        if (chunk) {
          controller.enqueue(encoder.encode(chunk));
          return;
        }
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

/**
 * A date-time for a spreadsheet: `YYYY-MM-DD HH:MM:SS` in `timeZone` (which spreadsheet apps read as a
 * date-time), or ISO 8601 UTC with `Z` when no zone is given (for programs).
 */
export function toCsvDateTime(date: Date | null, timeZone?: string): string | null {
  if (!date) return null;
  if (!timeZone) return date.toISOString();
  // Swedish formatting is ISO-like: 2026-11-23 17:04:05.
  return new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).format(date);
}
