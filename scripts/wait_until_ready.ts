// Waiting for a child's /readyz, and the address to reach a server listening on a wildcard host.

/** Resolves once `url` answers 200 (a child's /readyz); a stop in the meantime leaves it pending. */
export async function waitUntilReady(
  name: string,
  url: string,
  timeoutMs: number,
  stopping: () => boolean,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (stopping()) return new Promise(() => {});
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return;
      last = `${response.status} ${(await response.text()).slice(0, 200)}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the ${name} process was not ready within ${timeoutMs / 1000} s (${url}: ${last})`);
}

/** A host to reach a server listening on `host` from this machine. */
export function reachableHost(host: string): string {
  if (host === '' || host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
