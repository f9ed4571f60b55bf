// The straight line through a long run's per-minute throughput (least squares), to tell a decay from the
// machine's minute-to-minute swings: the pass/fail criterion stays last minute ÷ first, this is read
// beside it.

export interface Trend {
  /** The fitted line's value at the last sample ÷ its value at the first (1 = flat, < 1 = falling). */
  lastToFirst: number;
  /** The fitted change per sample, as a share of the samples' mean. */
  perSample: number;
  /** Standard deviation of the samples around the line, as a share of the mean (the noise). */
  scatter: number;
}

/** Least-squares line through `values` at x = 0, 1, …; needs at least two values. */
export function fitTrend(values: readonly number[]): Trend {
  const n = values.length;
  if (n < 2) throw new Error('a trend needs at least two samples');
  const meanX = (n - 1) / 2;
  const meanY = values.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (i - meanX) * (values[i]! - meanY);
    sxx += (i - meanX) ** 2;
  }
  const slope = sxy / sxx;
  const at = (x: number) => meanY + slope * (x - meanX);
  let residuals = 0;
  for (let i = 0; i < n; i++) residuals += (values[i]! - at(i)) ** 2;
  return {
    lastToFirst: at(n - 1) / at(0),
    perSample: slope / meanY,
    scatter: Math.sqrt(residuals / n) / meanY,
  };
}
