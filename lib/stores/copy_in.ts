// `COPY <table> (<columns>) FROM STDIN` on a transaction's connection, written to in chunks of COPY text
// (copy_text_rows.ts), with every way it can fail brought back to the caller as a rejected promise.
import type { Writable } from 'node:stream';
import { quoteIdent, type Tx } from './sql.ts';

/** An open COPY into a table. Write chunks, then `end`; or `abort` (the statement fails, the transaction with it). */
export interface CopyIn {
  /** Sends a chunk of whole COPY lines; resolves when the connection can take more. Rejects once the COPY failed. */
  write(chunk: string): Promise<void>;
  /** Ends the data; resolves when Postgres has accepted every row, rejects with its error otherwise. */
  end(): Promise<void>;
  /** Fails the COPY on purpose (CopyFail with `reason`) and waits until Postgres has ended it. */
  abort(reason: Error): Promise<void>;
}

/**
 * Opens `COPY table (columns) FROM STDIN` (text format) in `tx`. The names are quoted here.
 *
 * postgres.js (3.4.9) never settles the writable of a COPY that Postgres fails after the data's end (an error
 * found while the last buffered rows are inserted): the stream's final step waits for a CommandComplete that never
 * comes, upstream https://github.com/porsager/postgres/issues/1173. The error does reach the query's `reject`,
 * which is wrapped here so `end` rejects with it instead of waiting for ever.
 */
export async function openCopyIn(tx: Tx, table: string, columns: readonly string[]): Promise<CopyIn> {
  const query = tx.unsafe(`COPY ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) FROM STDIN`);
  let failure: Error | undefined;
  let signal: (error: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    signal = reject;
  });
  failed.catch(() => {}); // looked at by whoever waits on it; never an unhandled rejection
  const fail = (error: unknown) => {
    failure ??= error instanceof Error ? error : new Error(String(error));
    signal(failure);
  };
  const pending = query as unknown as { reject: (error: unknown) => unknown };
  const reject = pending.reject;
  pending.reject = (error: unknown) => {
    fail(error);
    return reject.call(pending, error);
  };
  const stream = (await query.writable()) as unknown as Writable;
  stream.on('error', fail);
  let ended = false;
  return {
    async write(chunk) {
      if (failure) throw failure;
      if (!stream.write(chunk)) {
        await Promise.race([new Promise<void>((resolve) => stream.once('drain', resolve)), failed]);
      }
    },
    async end() {
      if (failure) throw failure;
      ended = true;
      const finished = new Promise<void>((resolve) => stream.once('finish', resolve));
      stream.end();
      await Promise.race([finished, failed]);
    },
    async abort(reason) {
      if (failure || ended) return;
      ended = true;
      stream.destroy(reason);
      await failed.catch(() => {});
    },
  };
}
