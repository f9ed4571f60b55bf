/** The durable expiry timers, one per link (`expire:{code}`); link_signals.ts implements them over Temporal. */
export interface ExpiryTimers {
  /**
   * Makes the code's timer know its expiry: starts it (or moves its deadline) for a date; tells a running one
   * that the expiry is gone for null (nothing to do if none runs).
   */
  set(code: string, expiresAtMs: number | null): Promise<'armed' | 'disarmed' | 'none'>;
  /** True while the code's timer runs. */
  isRunning(code: string): Promise<boolean>;
}
