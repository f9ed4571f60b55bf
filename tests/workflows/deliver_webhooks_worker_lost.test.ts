// The webhook drainer (ADR 0082) survives a worker lost in the middle of a step: the real worker entry, in a child
// process, is SIGKILLed while a request of its step is at the receiver. The step never reports back, so Temporal
// notices it only at the activity's heartbeat timeout; the step heartbeats on its own every 2 s, so that timeout
// is 10 s and a new worker carries on within it, not minutes later. Events written meanwhile are delivered, and
// the message the lost step had taken is sent again once its lease ends: nothing is lost.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createHarness, createLinkCode, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { startWorkerProcess } from '../../devkit/harness/worker_process.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook_receiver.ts';

const SETTINGS = {
  WEBHOOK_RETRY_BASE_MS: '100',
  WEBHOOK_RETRY_MAX_MS: '400',
  WEBHOOK_POLL_INTERVAL_MS: '200',
  // The lost step's lease: ceil(100 / 8) requests one after the other of at most 1 s (+1 s each), plus 30 s.
  WEBHOOK_TIMEOUT_MS: '1000',
};

let h: Harness;
let receiver: WebhookReceiver;
let child: ReturnType<typeof startWorkerProcess> | undefined;

before(async () => {
  receiver = await startWebhookReceiver();
  h = await createHarness({ env: SETTINGS });
});
after(async () => {
  child?.process.kill('SIGKILL');
  await h.close();
  await receiver.close();
});

async function startWorker() {
  const started = startWorkerProcess({ h, env: { ...SETTINGS, LOG_LEVEL: 'info' } });
  await eventually(async () => (started.ready ? true : undefined), {
    timeoutMs: 120_000,
    what: 'the worker process',
  });
  return started;
}

const codeOf = (secret: string, hook: { body: string; headers: Record<string, string> }) =>
  (new Webhook(secret).verify(hook.body, hook.headers) as { data: { code: string } }).data.code;

describe('outgoing webhooks and a worker lost mid-step', () => {
  test('SIGKILL while a request is at the receiver: a new worker delivers within seconds, the lost one later', async () => {
    child = await startWorker();
    // Every answer takes 700 ms: the kill lands while the step waits for one.
    receiver.script('/slow', [200], { delayMs: 700 });
    const res = await h.api('/api/v1/webhooks', {
      method: 'POST',
      json: { url: `${receiver.base}/slow`, eventTypes: ['link.created'], description: 'slow receiver' },
    });
    assert.equal(res.status, 201);
    const { secret } = (await res.json()) as { secret: string };

    const lost = await createLinkCode(h, { url: 'https://example.com/webhooks/lost-step' });
    await eventually(async () => (receiver.at('/slow').length > 0 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 5,
      what: 'the step to send its request',
    });
    child.process.kill('SIGKILL');
    await new Promise((r) => child!.process.once('exit', r));
    const [taken] = await h.db.sql<{ state: string; attempts: number }[]>`
      SELECT state, attempts FROM webhook_messages ORDER BY created_at DESC LIMIT 1`;
    assert.equal(taken?.attempts, 0, 'the lost step never recorded its attempt');

    // The drainer's activity is still "started" by the dead worker: a new one takes over at its heartbeat timeout.
    const killedAt = Date.now();
    child = await startWorker();
    const later = await createLinkCode(h, { url: 'https://example.com/webhooks/after-the-kill' });
    const deliveredLater = await eventually(
      async () => receiver.at('/slow').find((hook) => codeOf(secret, hook) === later),
      { timeoutMs: 30_000, what: 'the event written after the kill, delivered by the new worker' },
    );
    const recoveredInMs = deliveredLater.at - killedAt;
    assert.ok(recoveredInMs < 30_000, `the drainer went on ${recoveredInMs} ms after the kill`);

    // The message the lost step had taken is due again when its lease ends, and is sent then.
    const resent = await eventually(
      async () => {
        const sent = receiver.at('/slow').filter((hook) => codeOf(secret, hook) === lost);
        return sent.length >= 2 ? sent : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500, what: "the lost step's message, sent again after its lease" },
    );
    assert.equal(
      resent[0]!.headers['webhook-id'],
      resent[1]!.headers['webhook-id'],
      'the same message, again',
    );
    await eventually(
      async () => {
        const rows = await h.db.sql<{ state: string }[]>`SELECT state FROM webhook_messages`;
        return rows.length === 2 && rows.every((r) => r.state === 'delivered') ? true : undefined;
      },
      { timeoutMs: 10_000, what: 'both messages recorded delivered' },
    );
  });
});
