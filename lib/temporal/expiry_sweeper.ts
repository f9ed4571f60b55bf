/**
 * The one expiry sweeper of a deployment (`expiry-sweep:{taskQueue}`, ADR 0091); link_signals.ts implements it
 * over Temporal. Postgres holds which links expire when; the sweeper only needs to know when to look next, so
 * nothing per link is kept in Temporal.
 */
export interface ExpirySweeper {
  /**
   * Tells the sweeper a live link expires at this date (epoch ms), starting it if none runs; it wakes earlier if
   * the date is before its own next wake-up. Callers with many links send their earliest date once.
   */
  expiresAt(expiresAtMs: number): Promise<void>;
  /** True while the sweeper runs. */
  isRunning(): Promise<boolean>;
}
