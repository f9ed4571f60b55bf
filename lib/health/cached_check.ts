/**
 * How long a probe's answer is reused. Orchestrators, load balancers and monitors may each ask every second or
 * faster, from many places: without this, every ask was a query.
 */
export const PROBE_CACHE_MS = 1_000;

/**
 * `check` run at most once per `ttlMs`: a caller within that time of the last run's start gets its answer, and
 * callers while a run is under way share it. So any number of probes a second cost one query, and a change (an
 * outage, a recovery) shows within `ttlMs` plus the check's own timeout. A run that throws is not kept.
 */
export function cacheCheck<T>(
  check: () => Promise<T>,
  ttlMs = PROBE_CACHE_MS,
  now: () => number = () => performance.now(),
): () => Promise<T> {
  let last: { at: number; value: T } | undefined;
  let running: Promise<T> | undefined;
  return () => {
    const at = now();
    if (last !== undefined && at - last.at < ttlMs) return Promise.resolve(last.value);
    running ??= check()
      .then((value) => {
        last = { at, value };
        return value;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}
