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
const READY_FOR_QUERY = 0x5a; // 'Z'
const IDLE = 0x49; // 'I': ReadyForQuery's status outside a transaction

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

/**
 * An embedded PGlite database persisted under `dataDir`, served over the Postgres wire protocol on a random
 * loopback port so the same postgres.js code (unnamed statements: `prepare: false`) talks to it.
 */
export async function startEmbeddedPostgres(dataDir: string, maxConnections = 12): Promise<EmbeddedPostgres> {
  mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create({ dataDir, extensions: { pg_trgm } });
  const session = new SessionOwner();
  const sockets = new Set<Socket>();

  const serve = (socket: Socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const client = {};
    let pending = Buffer.alloc(0);
    let started = false;
    let closed = false;
    let work = Promise.resolve();

    const run = async (message: Buffer) => {
      await session.acquire(client);
      if (closed) return;
      const chunks: Buffer[] = [];
      await db.runExclusive(() =>
        db.execProtocolRawStream(new Uint8Array(message), {
          onRawData: (data) => chunks.push(Buffer.from(data)),
        }),
      );
      const reply = Buffer.concat(chunks);
      if (reply.length > 0 && socket.writable) socket.write(reply);
      if (lastReadyStatus(reply) === IDLE) session.release(client);
    };
    const finish = async () => {
      if (!session.owns(client)) return;
      // A client gone mid-transaction must not leave the shared session inside it.
      if (db.isInTransaction()) await db.exec('ROLLBACK').catch(() => {});
      session.release(client);
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
        const length = 1 + pending.readInt32BE(1);
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
      closed = true;
      sockets.delete(socket);
      enqueue(finish);
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
      const closedServer = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closedServer;
      await db.close();
    },
  };
}
