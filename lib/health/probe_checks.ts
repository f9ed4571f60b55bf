/** How long one readiness check (a Postgres query, a serving-store read, a Temporal call) may take. */
export const PROBE_CHECK_TIMEOUT_MS = 1_000;

/** 'ok' when `check` settles successfully within `timeoutMs`, else 'down' (never throws, never waits longer). */
export async function probe(
  check: () => Promise<unknown>,
  timeoutMs = PROBE_CHECK_TIMEOUT_MS,
): Promise<'ok' | 'down'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'down'>((resolve) => {
    timer = setTimeout(() => resolve('down'), timeoutMs);
  });
  try {
    return await Promise.race([
      check().then(
        () => 'ok' as const,
        () => 'down' as const,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
