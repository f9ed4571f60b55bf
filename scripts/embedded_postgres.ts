import { mkdirSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const TERMINATE = 0x58; // 'X'
const QUERY = 0x51; // 'Q': simple query
const PARSE = 0x50; // 'P'
const BIND = 0x42; // 'B'
const CLOSE = 0x43; // 'C' (frontend): close a statement or portal
const READY_FOR_QUERY = 0x5a; // 'Z'
const NOTIFICATION = 0x41; // 'A': NotificationResponse
const IDLE = 0x49; // 'I': ReadyForQuery's status outside a transaction
/** Postgres's own cap on a start-up packet (MAX_STARTUP_PACKET_LENGTH); anything longer is not one. */
const STARTUP_MAX_BYTES = 10_000;

/**
 * PGlite has one session; every client socket shares it. A client owns the session from its first message until
 * the backend says ReadyForQuery *outside a transaction*: so an extended-protocol batch (Parse/Bind/Describe/
 * Execute/Sync, whose unnamed statement lives until Sync) and a whole transaction run alone. Others wait in
 * arrival order. (pglite-socket 0.2.17 interleaves batches of different clients message by message, so one
 * client could bind another's statement — electric-sql/pglite#1046 — which is why this small front exists.)
 */
class SessionOwner {
  private owner: object | null = null;
  private readonly waiting: { client: object; resume: () => void }[] = [];

  async acquire(client: object): Promise<void> {
    if (this.owner === null) this.owner = client;
    else if (this.owner !== client)
      await new Promise<void>((resume) => this.waiting.push({ client, resume }));
  }

  owns(client: object): boolean {
    return this.owner === client;
  }

  release(client: object): void {
    if (this.owner !== client) return;
    const next = this.waiting.shift();
    this.owner = next?.client ?? null;
    next?.resume();
  }
}

/** The status byte of the last ReadyForQuery in a backend reply, or undefined when it has none. */
function lastReadyStatus(reply: Buffer): number | undefined {
  let status: number | undefined;
  for (let at = 0; at + 5 <= reply.length; at += 1 + reply.readInt32BE(at + 1)) {
    if (reply[at] === READY_FOR_QUERY && at + 5 < reply.length) status = reply[at + 5];
  }
  return status;
}

/** A NUL-terminated string of a protocol message at `at`, and where the next field starts. */
function readCString(message: Buffer, at: number): [string, number] {
  const end = message.indexOf(0, at);
  const stop = end === -1 ? message.length : end;
  return [message.toString('utf8', at, stop), stop + 1];
}

/** LISTEN or UNLISTEN of one channel (`*`: every channel), as a client's statement asks. */
interface ListenCommand {
  listen: boolean;
  channel: string;
}

const LISTEN_STATEMENT = /^\s*(LISTEN|UNLISTEN)\s+("(?:[^"]|"")+"|[^\s;"]+)\s*;?\s*$/i;

/** The LISTEN/UNLISTEN a statement's text is, or undefined for anything else. */
export function parseListenStatement(text: string): ListenCommand | undefined {
  const match = LISTEN_STATEMENT.exec(text);
  if (!match) return undefined;
  const listen = match[1]!.toUpperCase() === 'LISTEN';
  const name = match[2]!;
  if (name === '*') return listen ? undefined : { listen, channel: '*' };
  // A quoted identifier keeps its case; an unquoted one folds to lower case, as Postgres does.
  const channel = name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name.toLowerCase();
  return { listen, channel };
}

const quoteIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** What the front keeps per client socket beyond its place in the queue. */
interface Client {
  socket: Socket;
  /** Channels this client LISTENs on (the shared session listens on their union). */
  channels: Set<string>;
  /** Its statements by name ('' is the unnamed one), with the LISTEN/UNLISTEN each is, if any. */
  statements: Map<string, ListenCommand | undefined>;
}

/**
 * An embedded PGlite database persisted under `dataDir`, served over the Postgres wire protocol on a random
 * loopback port, so the same postgres.js code talks to it as to a server.
 *
 * Beyond the session queue, the front makes the one shared session look like one session per client in the two
 * ways our code relies on:
 * - LISTEN/NOTIFY: it tracks which client listens on which channel, takes NotificationResponse messages out of
 *   the reply they arrive in (the notifying client's), and sends each to every client listening on its channel.
 *   An UNLISTEN reaches PGlite (its reply is the real one), then the channels other clients still listen on are
 *   listened to again; a client that closes stops listening.
 * - Named prepared statements (postgres.js names them with a random per-connection prefix, so clients never
 *   collide): the statements a client prepared are deallocated when it closes, so reconnecting pools do not
 *   pile them up in the session.
 */
export async function startEmbeddedPostgres(dataDir: string, maxConnections = 64): Promise<EmbeddedPostgres> {
  mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create({ dataDir, extensions: { pg_trgm } });
  const session = new SessionOwner();
  const sockets = new Set<Socket>();
  /** Channel → the clients listening on it. */
  const listeners = new Map<string, Set<Client>>();
  /** Channels an UNLISTEN dropped from the session that other clients still listen on (`*`: maybe all). */
  const relisten = new Set<string>();
  let stopping = false;

  const forget = (client: Client, channel: string) => {
    const names = channel === '*' ? [...client.channels] : [channel];
    for (const name of names) {
      client.channels.delete(name);
      const set = listeners.get(name);
      set?.delete(client);
      if (set?.size === 0) listeners.delete(name);
    }
  };
  const apply = (client: Client, command: ListenCommand | undefined) => {
    if (!command) return;
    if (command.listen) {
      client.channels.add(command.channel);
      const set = listeners.get(command.channel) ?? new Set<Client>();
      listeners.set(command.channel, set);
      set.add(client);
      return;
    }
    forget(client, command.channel);
    relisten.add(command.channel);
  };
  /** Looks at a client's message before it runs: statement names, LISTEN and UNLISTEN. */
  const observe = (client: Client, message: Buffer) => {
    const type = message[0];
    if (type === QUERY) {
      apply(client, parseListenStatement(readCString(message, 5)[0]));
    } else if (type === PARSE) {
      const [name, next] = readCString(message, 5);
      const [text] = readCString(message, next);
      client.statements.set(name, parseListenStatement(text));
    } else if (type === BIND) {
      const [, next] = readCString(message, 5); // the portal
      const [statement] = readCString(message, next);
      apply(client, client.statements.get(statement));
    } else if (type === CLOSE && message[5] === 0x53 /* 'S' */) {
      client.statements.delete(readCString(message, 6)[0]);
    }
  };
  /** Sends each NotificationResponse to the clients listening on its channel; returns the rest of the reply. */
  const fanOut = (from: Client, reply: Buffer): Buffer => {
    let hasNotification = false;
    for (let at = 0; at + 5 <= reply.length; at += 1 + reply.readInt32BE(at + 1)) {
      if (reply[at] === NOTIFICATION) hasNotification = true;
    }
    if (!hasNotification) return reply;
    const kept: Buffer[] = [];
    for (let at = 0; at + 5 <= reply.length; ) {
      const end = at + 1 + reply.readInt32BE(at + 1);
      const message = reply.subarray(at, end);
      at = end;
      if (message[0] !== NOTIFICATION) {
        kept.push(message);
        continue;
      }
      const [channel] = readCString(message, 9); // after type, length and the notifying backend's pid
      for (const client of listeners.get(channel) ?? []) {
        if (client === from) kept.push(message);
        else if (client.socket.writable) client.socket.write(message);
      }
    }
    return Buffer.concat(kept);
  };
  /** Runs SQL of the front's own on the session (owned by the caller; `exec` takes PGlite's lock), ignoring errors. */
  const runOwn = async (statements: string[]) => {
    for (const statement of statements) await db.exec(statement).catch(() => {});
  };

  const serve = (socket: Socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const client: Client = { socket, channels: new Set(), statements: new Map() };
    let pending = Buffer.alloc(0);
    let started = false;
    let closed = false;
    let work = Promise.resolve();

    const run = async (message: Buffer) => {
      await session.acquire(client);
      if (closed || stopping) return;
      observe(client, message);
      const chunks: Buffer[] = [];
      await db.runExclusive(() =>
        db.execProtocolRawStream(new Uint8Array(message), {
          onRawData: (data) => chunks.push(Buffer.from(data)),
        }),
      );
      const reply = fanOut(client, Buffer.concat(chunks));
      if (reply.length > 0 && socket.writable) socket.write(reply);
      if (lastReadyStatus(reply) === IDLE) {
        if (relisten.size > 0) {
          // The UNLISTEN ran on the shared session: listen again where other clients still do.
          const channels = relisten.has('*')
            ? [...listeners.keys()]
            : [...relisten].filter((c) => listeners.has(c));
          relisten.clear();
          await runOwn(channels.map((c) => `LISTEN ${quoteIdentifier(c)}`));
        }
        session.release(client);
      }
    };
    const finish = async () => {
      const named = [...client.statements.keys()].filter((name) => name !== '');
      const channels = [...client.channels];
      if (stopping || (!session.owns(client) && named.length === 0 && channels.length === 0)) return;
      await session.acquire(client);
      if (stopping) return;
      try {
        // A client gone mid-transaction must not leave the shared session inside it.
        if (db.isInTransaction()) await db.exec('ROLLBACK').catch(() => {});
        forget(client, '*');
        const unlisten = channels.filter((c) => !listeners.has(c));
        await runOwn([
          ...unlisten.map((c) => `UNLISTEN ${quoteIdentifier(c)}`),
          ...named.map((name) => `DEALLOCATE ${quoteIdentifier(name)}`),
        ]);
        client.statements.clear();
      } finally {
        session.release(client);
      }
    };
    const enqueue = (step: () => Promise<void>) => {
      work = work.then(step).catch(() => {
        socket.destroy();
      });
    };

    socket.on('data', (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        if (!started) {
          if (pending.length < 8) return;
          const length = pending.readInt32BE(0);
          const code = pending.readInt32BE(4);
          // A length that cannot be a start-up packet's would never consume its bytes (zero: this loop spins).
          if (length < 8 || length > STARTUP_MAX_BYTES) {
            socket.destroy();
            return;
          }
          if (pending.length < length) return;
          const message = pending.subarray(0, length);
          pending = pending.subarray(length);
          if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
            socket.write('N');
            continue;
          }
          if (code === CANCEL_REQUEST) {
            socket.end();
            return;
          }
          started = true;
          enqueue(() => run(Buffer.from(message)));
          continue;
        }
        if (pending.length < 5) return;
        // The length counts itself: below 4 it is no message's, and framing by it would not move on.
        const declared = pending.readInt32BE(1);
        if (declared < 4) {
          socket.destroy();
          return;
        }
        const length = 1 + declared;
        if (pending.length < length) return;
        const message = Buffer.from(pending.subarray(0, length));
        pending = pending.subarray(length);
        if (message[0] === TERMINATE) {
          closed = true;
          enqueue(finish);
          socket.end();
          return;
        }
        enqueue(() => run(message));
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      const wasClosed = closed;
      closed = true;
      sockets.delete(socket);
      if (!wasClosed) enqueue(finish);
    });
  };

  const server = createServer(serve);
  server.maxConnections = maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as { port: number };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres?sslmode=disable`,
    async stop() {
      stopping = true;
      const closedServer = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closedServer;
      // Let a client's statement that is running finish, leave any transaction a gone client left open, and
      // put everything on disk before the files close: the next start replays nothing.
      if (db.isInTransaction()) await db.exec('ROLLBACK').catch(() => {});
      await db.exec('CHECKPOINT').catch(() => {});
      await db.close();
    },
  };
}
