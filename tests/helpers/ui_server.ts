import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { serveNode } from '../../server/node_server.ts';

export interface UiServer {
  h: Harness;
  /** The server's origin, which is also the short and app base URL. */
  base: string;
  close(): Promise<void>;
}

/** The real app on a real socket (for browsers and HTTP clients), over a test harness. */
export async function startUiServer(
  options: { env?: Record<string, string>; port?: number } = {},
): Promise<UiServer> {
  const port = options.port ?? (await getFreePort());
  const base = `http://127.0.0.1:${port}`;
  const h = await createHarness({ env: { SHORT_BASE_URL: base, ...options.env } });
  const server = await serveNode(h.app.fetch, { port, host: '127.0.0.1' });
  return {
    h,
    base,
    async close() {
      await server.close(1_000);
      await h.close();
    },
  };
}
