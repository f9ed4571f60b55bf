// Gauges read from Postgres when Prometheus scrapes. A scrape must answer even when Postgres does not: the
// moment Postgres is unreachable is the moment LifelineRedirectErrors has to fire, and it fires only if the web
// process's counters are still scraped. A read that is late is therefore not waited for past a short bound: the
// scrape answers with the gauges' last values, and the read, left to finish, serves a later scrape.

/** How long a scrape waits for a gauge read (Prometheus's own scrape timeout is 10 s by default, 1 s in tests). */
export const SCRAPE_READ_WAIT_MS = 500;

/**
 * A reader shared by several gauges and scrapes. It starts `read` at most once per `reuseMs` and never while one
 * is still running, so a slow or hung Postgres never collects a queue of reads; each call waits at most `waitMs`
 * for the running read, then answers the latest completed one: its value, or null when it failed or none has
 * completed (each gauge keeps its last value).
 */
export function scrapeRead<T>(
  read: () => Promise<T>,
  options: { reuseMs?: number; waitMs?: number } = {},
): () => Promise<T | null> {
  const reuseMs = options.reuseMs ?? 1_000;
  const waitMs = options.waitMs ?? SCRAPE_READ_WAIT_MS;
  let running: Promise<void> | null = null;
  let startedAt = Number.NEGATIVE_INFINITY;
  let latest: T | null = null;
  return async () => {
    if (running === null && Date.now() - startedAt > reuseMs) {
      startedAt = Date.now();
      const settled = read().then(
        (value) => {
          latest = value;
        },
        () => {
          latest = null;
        },
      );
      running = settled.finally(() => {
        running = null;
      });
    }
    if (running !== null) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, waitMs);
      });
      await Promise.race([running, waited]);
      clearTimeout(timer);
    }
    return latest;
  };
}
