/**
 * Bytes a process lets several requests hold at once (bodies being read and parsed): a request takes its share
 * before it reads and gives it back when it is answered; a request that does not fit is turned away rather than
 * queued, so the budget bounds memory however many senders there are.
 */
export class ByteBudget {
  private taken = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes held now. */
  get inUse(): number {
    return this.taken;
  }

  /** Takes `bytes` when they fit in what is left, and says whether it did. */
  tryTake(bytes: number): boolean {
    if (this.taken + bytes > this.maxBytes) return false;
    this.taken += bytes;
    return true;
  }

  /** Gives back what tryTake took. */
  give(bytes: number): void {
    this.taken = Math.max(0, this.taken - bytes);
  }
}
