import type { Db } from '../stores/sql.ts';

/**
 * Tells every web instance that a code changed, so each drops its in-process copy. Delivery is at most once:
 * a subscriber that loses its connection misses messages, so it is told to resync (drop everything) when it
 * is listening again; the LRU's TTL bounds whatever slips through.
 */
export interface InvalidationBus {
  readonly kind: 'redis' | 'postgres';
  /**
   * Announces that `code` changed; rejects when the message could not be sent. With `db` (an open transaction)
   * a bus that lives in Postgres sends through it, so the message goes out at commit and never waits for a
   * second connection the transaction holds up (PGlite serves one session at a time); other buses send now.
   */
  publish(code: string, db?: Db): Promise<void>;
  /** Announces many codes at once (one statement or one pipeline); absent: publish() each. */
  publishMany?(codes: string[]): Promise<void>;
  /**
   * Starts listening (in the background: never blocks start-up). `onCode` gets every announced code;
   * `onResync` runs each time the subscription is (re)established, since messages may have been missed.
   */
  subscribe(handlers: { onCode(code: string): void; onResync(): void }): void;
  /** Unsubscribes and closes the bus's connections. */
  close(): Promise<void>;
}
