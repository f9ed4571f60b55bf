// What a hook request costs before it is trusted. A signature header that is missing, malformed or stale is
// refused before the body is read (the answer arrives while the sender still has megabytes to send); the bodies
// being read at once share one byte budget per process (503 + Retry-After beyond it, and the retry is accepted);
// with split hosts the hooks answer on the app host only, however another host is spelled.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createHarness, eventually, type Harness } from '../../../devkit/harness/harness.ts';
import { signWebhook } from '../../../lib/auth/webhook_signature.ts';
import { type RunningServer, serveNode } from '../../../server/node_server.ts';
import { expectProblem } from '../../helpers/problem.ts';

const APP_HOST = 'app.hooks.test';
const FOUR_MIB = 4 * 1024 * 1024;

let h: Harness;
let server: RunningServer;
/** Every server-side socket, to read how many bytes the server took off each. */
const serverSockets: Socket[] = [];
before(async () => {
  h = await createHarness({
    env: { APP_BASE_URL: `http://${APP_HOST}`, WEBHOOK_BODIES_MAX_BYTES: String(FOUR_MIB) },
  });
  server = await serveNode(h.app.fetch, { port: 0, host: '127.0.0.1' });
  server.server.on('connection', (socket: Socket) => serverSockets.push(socket));
});
after(async () => {
  await server?.close(0);
  await h.close();
});

interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/**
 * A POST that declares `declaredBytes` of body and sends only `sentBytes` of it (spaces), then waits for an answer
 * with the rest unsent. `finish()` sends the rest. The answer promise rejects when nothing comes in 10 s: the
 * server is waiting for the body.
 */
function postPartially(
  path: string,
  headers: Record<string, string>,
  declaredBytes: number,
  sentBytes: number,
): { answer: Promise<RawAnswer>; finish(): void; close(): void } {
  const socket = connect(server.port, '127.0.0.1');
  const head = [
    `POST ${path} HTTP/1.1`,
    `Host: ${APP_HOST}`,
    'Content-Type: application/json',
    `Content-Length: ${declaredBytes}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    '',
    '',
  ].join('\r\n');
  socket.write(head);
  socket.write(Buffer.alloc(sentBytes, 0x20));
  let received = '';
  const answer = new Promise<RawAnswer>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no answer in 10 s with ${declaredBytes - sentBytes} body bytes unsent`)),
      10_000,
    );
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(received.slice(0, end))?.[1] ?? 0);
      if (received.length < end + 4 + length) return;
      clearTimeout(timer);
      resolve({
        status: Number(received.slice(9, 12)),
        head: received.slice(0, end),
        body: received.slice(end + 4, end + 4 + length),
      });
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
  return {
    answer,
    finish: () => socket.write(Buffer.alloc(declaredBytes - sentBytes, 0x20)),
    close: () => socket.destroy(),
  };
}

async function webhookAt(host: string, event: Record<string, unknown>): Promise<Response> {
  const raw = JSON.stringify(event);
  return h.app.request('/api/v1/hooks/wordpress', {
    method: 'POST',
    headers: {
      Host: host,
      'Content-Type': 'application/json',
      'X-Lifeline-Signature': await signWebhook(h.webhookSecret, raw, Date.now() / 1000),
    },
    body: raw,
  });
}

let nextPost = 7000;
function publishEvent() {
  const postId = nextPost++;
  return {
    id: `intake-${postId}-${Date.now()}`,
    event: 'post.published',
    site: 'news',
    postId,
    permalink: `https://news.example/2026/12/intake-${postId}/`,
    title: 'Intake',
    occurredAt: new Date().toISOString(),
  };
}

describe('hook intake', () => {
  test('a missing, malformed or stale signature header is refused before the 4 MiB body is read', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: [string, Record<string, string>][] = [
      ['missing', {}],
      ['malformed', { 'X-Lifeline-Signature': 'garbage' }],
      ['no v1', { 'X-Lifeline-Signature': `t=${now}` }],
      ['stale', { 'X-Lifeline-Signature': `t=${now - 3600},v1=${'0'.repeat(64)}` }],
      ['future', { 'X-Lifeline-Signature': `t=${now + 3600},v1=${'0'.repeat(64)}` }],
    ];
    for (const path of ['/api/v1/hooks/wordpress/backfill', '/api/v1/hooks/wordpress']) {
      for (const [what, headers] of cases) {
        const before = serverSockets.length;
        const request = postPartially(path, headers, FOUR_MIB, 16 * 1024);
        try {
          const answer = await request.answer;
          assert.equal(answer.status, 401, `${path} ${what}: ${answer.head}`);
          assert.match(answer.head, /\r\ncontent-type: application\/problem\+json/i);
          assert.match(answer.head, /\r\nconnection: close/i, 'the refused sender cannot keep streaming');
          assert.equal((JSON.parse(answer.body) as { status: number }).status, 401);
          // The server took the headers and at most what had been sent, never the body it was told about.
          const socket = serverSockets[before];
          assert.ok(socket, 'the server saw the connection');
          assert.ok(socket.bytesRead < 64 * 1024, `${path} ${what}: server read ${socket.bytesRead} bytes`);
        } finally {
          request.close();
        }
      }
    }
  });

  test('bodies in flight share one budget: beyond it 503 + Retry-After, and the retry is accepted', async () => {
    // A well-formed, current header (its HMAC is checked only once the body is in): this sender holds a 4 MiB
    // share of the budget while it trickles its body.
    const connections = serverSockets.length;
    const holder = postPartially(
      '/api/v1/hooks/wordpress/backfill',
      { 'X-Lifeline-Signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
      FOUR_MIB,
      1024,
    );
    // Its answer is awaited below, once its body is in; until then a rejection is not this test's failure.
    holder.answer.catch(() => {});
    try {
      // The server has its head and first kilobyte (the request is dispatched as its head is parsed).
      await eventually(async () => ((serverSockets[connections]?.bytesRead ?? 0) > 1024 ? true : undefined), {
        what: "the holder's request at the server",
      });
      // Deliveries made meanwhile are turned away (any accepted before the holder took its share are real
      // deliveries, accepted as usual).
      const { event, res } = await eventually(
        async () => {
          const e = publishEvent();
          const r = await webhookAt(APP_HOST, e);
          return r.status === 503 ? { event: e, res: r } : undefined;
        },
        { timeoutMs: 10_000, what: 'a delivery turned away while a 4 MiB body is being read' },
      );
      await expectProblem(res, 503);
      assert.ok(Number(res.headers.get('Retry-After')) > 0, 'Retry-After for the outbox');
      const recorded = await h.db.sql`SELECT 1 FROM webhook_deliveries WHERE delivery_id = ${event.id}`;
      assert.equal(recorded.length, 0, 'nothing recorded for the turned-away delivery');
      const gauge = await h.deps.metrics.registry.getSingleMetricAsString(
        'lifeline_webhook_body_bytes_in_flight',
      );
      assert.match(gauge, new RegExp(`lifeline_webhook_body_bytes_in_flight ${FOUR_MIB}\\b`));

      // The holder's body arrives (its HMAC does not match: 401 once read); its share is given back.
      holder.finish();
      assert.equal((await holder.answer).status, 401);
      const retried = await webhookAt(APP_HOST, event);
      assert.equal(retried.status, 202, await retried.clone().text());
      const after = await h.db.sql`SELECT 1 FROM webhook_deliveries WHERE delivery_id = ${event.id}`;
      assert.equal(after.length, 1, 'the retried delivery is recorded');
      assert.match(
        await h.deps.metrics.registry.getSingleMetricAsString('lifeline_webhook_body_bytes_in_flight'),
        /lifeline_webhook_body_bytes_in_flight 0\b/,
      );
    } finally {
      holder.close();
    }
  });

  test('with split hosts, hooks answer on the app host only, however another host is spelled', async () => {
    for (const host of [
      'sho.rt.test',
      'SHO.RT.TEST',
      'sho.rt.test:80',
      'sho.rt.test.',
      '127.0.0.1:8000',
      'x.example',
    ]) {
      const res = await webhookAt(host, publishEvent());
      await expectProblem(res, 404);
      const backfill = await h.app.request('/api/v1/hooks/wordpress/backfill', {
        method: 'POST',
        headers: { Host: host, 'Content-Type': 'application/json' },
        body: '{}',
      });
      await expectProblem(backfill, 404);
    }
    for (const host of [APP_HOST, 'APP.HOOKS.TEST.', `${APP_HOST}:8443`]) {
      assert.equal((await webhookAt(host, publishEvent())).status, 202, host);
    }
  });
});
