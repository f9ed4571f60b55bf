/** Longest part of an untrusted value a log line or a CLI message quotes. */
export const LOG_SAFE_MAX_LENGTH = 80;

/**
 * An untrusted value (a code or URL read from a row that bypassed every way in) as a double-quoted, printable
 * ASCII string: `"`, `\` and everything outside U+0020–U+007E escaped (`\n`, `\u202e`, …), cut to `max`
 * characters. A terminal or a log viewer then shows exactly one line, in reading order, whatever the value holds.
 */
export function quoteForLog(value: unknown, max = LOG_SAFE_MAX_LENGTH): string {
  const text = typeof value === 'string' ? value : String(value);
  const cut = text.length > max ? `${text.slice(0, max)}` : text;
  const escaped = cut.replace(/[^\x20-\x7e]|["\\]/g, (c) => {
    if (c === '"' || c === '\\') return `\\${c}`;
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  return `"${escaped}"${text.length > max ? `...(${text.length} characters)` : ''}`;
}
