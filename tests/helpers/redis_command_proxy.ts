import { createServer, type Server, Socket } from 'node:net';

/**
 * A TCP proxy in front of a Redis a test owns, which reads the commands clients send (RESP arrays of bulk
 * strings, as every client library writes them) to count them, and can hold Redis's replies back.
 */
export interface RedisCommandProxy {
  /** `redis://127.0.0.1:<port>` of the proxy. */
  url: string;
  /** Commands sent so far named `command` (any case) whose first argument is `key`. */
  count(command: string, key: string): number;
  /**
   * Holds back every reply from Redis until release(), except on connections that subscribed (pub/sub messages
   * still arrive). Commands still reach Redis and are counted: a held read has been answered, not yet delivered.
   */
  hold(): void;
  /** Delivers the replies held, in order, and passes replies on again. */
  release(): void;
  /** Drops every connection and refuses new ones (the client sees Redis go away); restore() listens again. */
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** The commands after which a connection only carries pub/sub messages, never held. */
const SUBSCRIBING = new Set(['subscribe', 'psubscribe', 'ssubscribe']);

/**
 * The complete commands at the start of `buffer` (each its arguments as strings) and the bytes they took; an
 * incomplete command at the end is left for the next chunk.
 */
export function readCommands(buffer: Buffer): { commands: string[][]; used: number } {
  const commands: string[][] = [];
  let used = 0;
  for (;;) {
    const command = readCommand(buffer, used);
    if (command === undefined) return { commands, used };
    commands.push(command.args);
    used = command.end;
  }
}

function readCommand(buffer: Buffer, start: number): { args: string[]; end: number } | undefined {
  if (start >= buffer.length) return undefined;
  const headerEnd = buffer.indexOf('\r\n', start);
  if (headerEnd < 0) return undefined;
  if (buffer[start] !== 0x2a /* * */) {
    // An inline command (redis-cli style): one line of words.
    return { args: buffer.toString('utf8', start, headerEnd).split(' ').filter(Boolean), end: headerEnd + 2 };
  }
  const count = Number(buffer.toString('latin1', start + 1, headerEnd));
  const args: string[] = [];
  let at = headerEnd + 2;
  for (let i = 0; i < count; i++) {
    const lengthEnd = buffer.indexOf('\r\n', at);
    if (lengthEnd < 0) return undefined;
    const length = Number(buffer.toString('latin1', at + 1, lengthEnd));
    const valueStart = lengthEnd + 2;
    if (buffer.length < valueStart + length + 2) return undefined;
    args.push(buffer.toString('utf8', valueStart, valueStart + length));
    at = valueStart + length + 2;
  }
  return { args, end: at };
}

/** Proxies 127.0.0.1:<free port> to the Redis at `target`. */
export async function startRedisCommandProxy(target: {
  host: string;
  port: number;
}): Promise<RedisCommandProxy> {
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  /** Per connection: the replies held back (while holding), and whether it subscribed. */
  const connections = new Set<{ client: Socket; held: Buffer[]; subscriber: boolean }>();
  let holding = false;
  let server: Server | undefined;
  let port = 0;

  const listen = async () => {
    const s = createServer((client) => {
      const upstream = new Socket();
      const connection = { client, held: [] as Buffer[], subscriber: false };
      connections.add(connection);
      sockets.add(client);
      sockets.add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
        connections.delete(connection);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      let pending: Buffer = Buffer.alloc(0);
      client.on('data', (chunk: Buffer) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        const { commands, used } = readCommands(pending);
        pending = pending.subarray(used);
        for (const [name, key] of commands) {
          const lower = (name ?? '').toLowerCase();
          if (SUBSCRIBING.has(lower)) connection.subscriber = true;
          const counted = `${lower}\n${key ?? ''}`;
          counts.set(counted, (counts.get(counted) ?? 0) + 1);
        }
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (holding && !connection.subscriber) connection.held.push(chunk);
        else client.write(chunk);
      });
      upstream.connect(target.port, target.host);
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
    connections.clear();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listen();
  return {
    url: `redis://127.0.0.1:${port}`,
    count: (command, key) => counts.get(`${command.toLowerCase()}\n${key}`) ?? 0,
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const connection of connections) {
        for (const chunk of connection.held) connection.client.write(chunk);
        connection.held = [];
      }
    },
    cut: stop,
    restore: listen,
    close: stop,
  };
}
