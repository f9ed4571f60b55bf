// Postgres's binary COPY format, read for one text column: `COPY (SELECT <text> …) TO STDOUT (FORMAT binary)`
// gives each row's text as length-prefixed bytes, with no escaping to undo. The export turns the stream into
// lines (the text of each row, then a newline) without making a JavaScript string of any row.

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const NEWLINE = 0x0a;

/**
 * Turns the chunks of a binary COPY of ONE non-null text column into newline-terminated lines. `push` takes a
 * chunk as the stream gives it (Postgres sends a message per row; a row may also be cut across chunks) and
 * appends the lines it completes to an internal buffer; `take` hands over what has gathered. `end` checks the
 * stream ended with its trailer and at a row's edge. Throws on anything else (a second column, a NULL, a bad
 * signature): the statement was not what this reads.
 */
export class CopyBinaryLines {
  private carry: Buffer | null = null;
  private headerDone = false;
  private trailerSeen = false;
  private out: Buffer;
  private filled = 0;
  /** Rows turned into lines so far. */
  rows = 0;
  private rowsTaken = 0;

  constructor(initialBytes = 1 << 20) {
    this.out = Buffer.allocUnsafe(initialBytes);
  }

  /** Bytes of complete lines gathered and not yet taken. */
  get pending(): number {
    return this.filled;
  }

  /**
   * The gathered lines and how many they are; the caller owns them (the buffer is handed over, not copied, and a
   * new one of the same size gathers the next).
   */
  take(): { lines: Buffer; rows: number } {
    const taken = { lines: this.out.subarray(0, this.filled), rows: this.rows - this.rowsTaken };
    this.out = Buffer.allocUnsafe(this.out.length);
    this.filled = 0;
    this.rowsTaken = this.rows;
    return taken;
  }

  push(chunk: Buffer): void {
    const input = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = null;
    let at = 0;
    if (!this.headerDone) {
      // Signature (11), flags (4), header extension length (4), then that many bytes.
      if (input.length < 19 || input.length < 19 + input.readUInt32BE(15)) {
        this.carry = Buffer.from(input);
        return;
      }
      if (!input.subarray(0, 11).equals(SIGNATURE)) throw new Error('binary COPY: not a binary COPY stream');
      at = 19 + input.readUInt32BE(15);
      this.headerDone = true;
    }
    while (at + 2 <= input.length) {
      const fields = input.readInt16BE(at);
      if (fields === -1) {
        if (this.trailerSeen) throw new Error('binary COPY: a second trailer');
        this.trailerSeen = true;
        at += 2;
        continue;
      }
      if (this.trailerSeen) throw new Error('binary COPY: data after the trailer');
      if (fields !== 1) throw new Error(`binary COPY: a row of ${fields} fields where one was expected`);
      if (at + 6 > input.length) break;
      const length = input.readInt32BE(at + 2);
      if (length < 0) throw new Error('binary COPY: a NULL where a line was expected');
      if (at + 6 + length > input.length) break;
      this.reserve(length + 1);
      input.copy(this.out, this.filled, at + 6, at + 6 + length);
      this.filled += length;
      this.out[this.filled++] = NEWLINE;
      at += 6 + length;
      this.rows++;
    }
    // A row cut across chunks: keep its start (copied: the chunk's memory belongs to the stream).
    if (at < input.length) this.carry = Buffer.from(input.subarray(at));
  }

  end(): void {
    if (!this.headerDone || !this.trailerSeen || this.carry)
      throw new Error('binary COPY: the stream ended before its trailer');
  }

  private reserve(bytes: number): void {
    if (this.filled + bytes <= this.out.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.filled + bytes));
    this.out.copy(grown, 0, 0, this.filled);
    this.out = grown;
  }
}
