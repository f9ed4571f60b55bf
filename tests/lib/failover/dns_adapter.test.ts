import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createWebhookDnsAdapter } from '../../../lib/failover/dns_adapter.ts';

// The DNS adapter's TTL operation against a receiver playing the newsroom's DNS automation.
let server: Server;
let url: string;
let answer: { status: number; body: string } = { status: 200, body: '{"previousTtlSeconds":300}' };
const received: unknown[] = [];

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      received.push({ auth: req.headers.authorization, body: JSON.parse(body) });
      res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/dns`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

/** The fake automation listens on loopback: allowed as an operator would allow an internal webhook. */
const LOOPBACK_ALLOWED = { allowPrivate: ['127.0.0.1'] };

describe('webhook DNS adapter: setTtl', () => {
  test('sends the TTL with the token and returns the TTL before the change', async () => {
    const adapter = createWebhookDnsAdapter({ url, token: 'tok', outgoing: LOOPBACK_ALLOWED });
    assert.deepEqual(await adapter.setTtl(60, { workflowId: 'failover:x' }), { previousTtlSeconds: 300 });
    assert.deepEqual(received.at(-1), {
      auth: 'Bearer tok',
      body: { action: 'setTtl', ttlSeconds: 60, workflowId: 'failover:x' },
    });
  });

  test('an answer without the old TTL, a 501 and an error', async () => {
    const adapter = createWebhookDnsAdapter({ url, outgoing: LOOPBACK_ALLOWED });
    answer = { status: 204, body: '' };
    assert.deepEqual(await adapter.setTtl(60, { workflowId: 'w' }), { previousTtlSeconds: null });
    answer = { status: 200, body: '{"previousTtlSeconds":"300"}' };
    assert.deepEqual(await adapter.setTtl(60, { workflowId: 'w' }), { previousTtlSeconds: null });
    answer = { status: 501, body: '' };
    assert.equal(await adapter.setTtl(60, { workflowId: 'w' }), 'unsupported');
    answer = { status: 503, body: '' };
    await assert.rejects(adapter.setTtl(60, { workflowId: 'w' }), /answered 503 to a TTL change/);
  });
});
