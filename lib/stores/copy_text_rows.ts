// Rows in the text form of `COPY … FROM STDIN`: one line per row, fields split by tabs, `\N` for NULL, and
// backslash, tab, newline and carriage return escaped with a backslash. A restore turns the JSON objects of an
// export into these lines, so Postgres reads each field with its type's own input function instead of parsing a
// JSON array of rows first (most of a large restore's load time went to that parse).

/** How a column's JSON value becomes its COPY field: as text, as an array literal, or as JSON text. */
export type CopyColumnKind = 'scalar' | 'array' | 'json';

export interface CopyColumn {
  name: string;
  kind: CopyColumnKind;
}

const NEEDS_ESCAPE = /[\\\t\n\r]/;
const ESCAPED = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** Escapes text for a COPY field. */
export function escapeCopyText(text: string): string {
  return NEEDS_ESCAPE.test(text) ? text.replace(ESCAPED, (c) => ESCAPES[c]!) : text;
}

/**
 * One row as a COPY line (with its newline): `row[column.name]` for each column, in order. A missing key is NULL.
 * Scalars keep the text JSON gave them (a timestamp's ISO text, a number's digits; `true`/`false` as `t`/`f`);
 * an array column's JSON array becomes an array literal with every element quoted; a json or jsonb column's
 * value is written as JSON text. Throws a TypeError naming the column for a value its kind cannot hold (an
 * object for a text column, a non-array for an array column).
 */
export function copyTextRow(row: Readonly<Record<string, unknown>>, columns: readonly CopyColumn[]): string {
  let line = '';
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]!;
    if (i > 0) line += '\t';
    line += copyTextField(row[column.name], column);
  }
  return `${line}\n`;
}

function copyTextField(value: unknown, column: CopyColumn): string {
  if (value === null || value === undefined) return '\\N';
  if (column.kind === 'json') return escapeCopyText(JSON.stringify(value));
  if (column.kind === 'array') {
    if (!Array.isArray(value)) throw new TypeError(`${column.name}: expected a JSON array`);
    return escapeCopyText(arrayLiteral(value, column.name));
  }
  switch (typeof value) {
    case 'string':
      return escapeCopyText(value);
    case 'number':
      return String(value);
    case 'boolean':
      return value ? 't' : 'f';
    default:
      throw new TypeError(`${column.name}: expected a string, a number or a boolean, not ${describe(value)}`);
  }
}

/** A Postgres array literal (`{"a","b"}`, nested for nested arrays), elements quoted, NULL unquoted. */
function arrayLiteral(items: readonly unknown[], name: string): string {
  const parts = items.map((item) => {
    if (item === null) return 'NULL';
    if (Array.isArray(item)) return arrayLiteral(item, name);
    if (typeof item === 'string') return `"${item.replace(/[\\"]/g, '\\$&')}"`;
    if (typeof item === 'number' || typeof item === 'boolean') return `"${String(item)}"`;
    throw new TypeError(`${name}: an array element is ${describe(item)}`);
  });
  return `{${parts.join(',')}}`;
}

function describe(value: unknown): string {
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
}
