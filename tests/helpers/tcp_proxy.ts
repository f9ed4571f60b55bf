import { createServer, type Server, Socket } from 'node:net';

/**
 * A TCP proxy a test controls: cut() drops every connection and refuses new ones; stall() keeps every connection
 * open and accepts new ones but carries no byte either way (a network partition: nothing fails, nothing answers);
 * restore() carries traffic again (after a stall, the connections held meanwhile are dropped, as a partition's
 * usually are once it heals).
 */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  stall(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** Proxies 127.0.0.1:<free port> to `target`. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let stalled = false;
  const listen = async () => {
    const s = createServer((client) => {
      sockets.add(client);
      if (stalled) {
        // Accepted, never connected upstream, never read: the client's bytes go nowhere.
        client.pause();
        client.on('error', () => sockets.delete(client)).on('close', () => sockets.delete(client));
        return;
      }
      const upstream = new Socket();
      sockets.add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      upstream.connect(target.port, target.host, () => {
        if (stalled) return;
        client.pipe(upstream);
        upstream.pipe(client);
      });
    });
    await new Promise<void>((resolve) => s.listen(port, '127.0.0.1', resolve));
    port = (s.address() as { port: number }).port;
    server = s;
  };
  const stop = async () => {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listen();
  return {
    get port() {
      return port;
    },
    cut: stop,
    async stall() {
      stalled = true;
      for (const socket of sockets) {
        socket.unpipe();
        socket.pause();
      }
    },
    async restore() {
      if (stalled) {
        stalled = false;
        for (const socket of sockets) socket.destroy();
        sockets.clear();
      }
      if (!server) await listen();
    },
    close: stop,
  } satisfies TcpProxy;
}
