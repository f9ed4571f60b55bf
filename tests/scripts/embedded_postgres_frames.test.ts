// The embedded Postgres front (scripts/embedded_postgres.ts) frames the wire protocol itself. A length field that
// cannot be a message's (zero, negative, shorter than the length field itself, a start-up packet larger than
// Postgres accepts) must close that socket, not spin: the front serves every process of `npm start`, so a loop
// there stops the whole product. The front runs in a process of its own here (as `npm start` runs it), so a loop
// shows as a front that no longer answers anyone rather than as a hung test.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { ROOT } from '../../scripts/temporal_cli.ts';

let dir: string;
let front: ChildProcess;
let url: URL;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lifeline-pglite-frames-'));
  front = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'scripts/embedded_postgres_main.ts',
      join(dir, 'data'),
      join(dir, 'url'),
      join(dir, 'pid'),
    ],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  url = await new Promise<URL>((resolve, reject) => {
    front.stderr!.on('data', (chunk) => {
      stderr += chunk;
      const match = /serving (\S+)/.exec(stderr);
      if (match) resolve(new URL(match[1]!));
    });
    front.once('exit', (code) => reject(new Error(`the front exited (${code}): ${stderr}`)));
  });
});
after(() => {
  front?.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A start-up message for user postgres, database postgres (protocol 3.0). */
function startupMessage(): Buffer {
  const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
  const head = Buffer.alloc(8);
  head.writeInt32BE(8 + params.length, 0);
  head.writeInt32BE(196608, 4);
  return Buffer.concat([head, params]);
}

/** A frame: a type byte (or none, for a start-up packet) and a raw length field, with no body after it. */
function frame(type: number | null, length: number): Buffer {
  const out = Buffer.alloc(type === null ? 8 : 5);
  let at = 0;
  if (type !== null) out[at++] = type;
  out.writeInt32BE(length, at);
  if (type === null) out.writeInt32BE(196608, 4);
  return out;
}

/**
 * Sends `bytes` on a raw socket (after a real start-up when `afterStartup`), and resolves once the front closes
 * it; rejects after 10 s of the socket staying open.
 */
function sendAndAwaitClose(bytes: Buffer, afterStartup: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the front kept the socket open 10 s after ${bytes.toString('hex')}`));
    }, 10_000);
    let sent = !afterStartup;
    socket.on('connect', () => socket.write(afterStartup ? startupMessage() : bytes));
    socket.on('data', (chunk) => {
      // ReadyForQuery ends the start-up: now the malformed message.
      if (!sent && chunk.includes(Buffer.from([0x5a, 0, 0, 0, 5]))) {
        sent = true;
        socket.write(bytes);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** SELECT 1 through a fresh postgres.js client: the front still answers others. */
async function frontAnswers(): Promise<void> {
  const sql = postgres(url.toString(), { max: 1, prepare: false, connect_timeout: 10, onnotice: () => {} });
  try {
    const answer = await Promise.race([
      sql`SELECT 1 AS one`,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('the front did not answer SELECT 1 in 10 s')), 10_000).unref(),
      ),
    ]);
    assert.equal(answer[0]!.one, 1);
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

describe('embedded Postgres front: malformed length fields', () => {
  const cases: [string, Buffer, boolean][] = [
    ['a zero-length start-up packet', frame(null, 0), false],
    ['a start-up packet shorter than its header', frame(null, 4), false],
    ['a negative start-up length', frame(null, -8), false],
    ['a start-up packet over 10,000 bytes', frame(null, 1_000_000), false],
    ['a zero-length query', frame(0x51, 0), true],
    ['a query whose length is −1', frame(0x51, -1), true],
    ['a query shorter than its length field', frame(0x51, 3), true],
  ];
  for (const [what, bytes, afterStartup] of cases) {
    test(`${what}: that socket is closed and the front answers others`, async () => {
      await sendAndAwaitClose(bytes, afterStartup);
      await frontAnswers();
    });
  }
});
