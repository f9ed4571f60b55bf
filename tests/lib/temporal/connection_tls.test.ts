// The connection settings against a real TLS front: nginx terminating TLS and requiring a client certificate
// signed by our test CA, in front of the real Temporal dev server. A client (grpc-js) and a worker (the SDK's
// Rust core) get through only with the settings that a Temporal Cloud mTLS namespace needs, and the API key
// reaches the server as `authorization: Bearer …` from both.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { connectTestTemporal, type TestTemporal, uniqueId } from '../../../devkit/harness/temporal.ts';
import {
  loadTemporalConnectionOptions,
  parseTemporalSettings,
  type TemporalConnectionOptions,
} from '../../../lib/temporal/connection_options.ts';
import { getTlsProxyUnavailableReason, startTlsProxy, type TlsProxy } from '../../helpers/tls_proxy.ts';
import { type GrpcHeaderRecorder, startGrpcHeaderRecorder } from './grpc_header_recorder.ts';
import type { tlsProbeWorkflow } from './tls_probe_workflow.ts';

const skip = getTlsProxyUnavailableReason();
// An empty HOME: no ~/.config/temporalio/temporal.toml of this machine takes part.
const home = mkdtempSync(join(tmpdir(), 'lifeline-tls-home-'));

let temporal: TestTemporal;
let proxy: TlsProxy;
let recorder: GrpcHeaderRecorder;
let recordedProxy: TlsProxy;
let workflowBundle: { code: string };

function optionsFor(env: Record<string, string>): TemporalConnectionOptions {
  const full = { HOME: home, ...env };
  return loadTemporalConnectionOptions({ settings: parseTemporalSettings(full), env: full });
}

/** Every setting a Temporal Cloud mTLS namespace needs, for a proxy of ours. */
function mtlsEnv(target: TlsProxy): Record<string, string> {
  const c = target.certificates;
  return {
    TEMPORAL_ADDRESS: target.address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: c.caPath,
    TEMPORAL_TLS_SERVER_NAME: c.serverName,
    TEMPORAL_TLS_CLIENT_CERT_PATH: c.clientCertPath,
    TEMPORAL_TLS_CLIENT_KEY_PATH: c.clientKeyPath,
  };
}

/** A real call through the client connection (Connection.connect alone only checks the channel). */
async function callAsClient(options: TemporalConnectionOptions): Promise<void> {
  const connection = await Connection.connect({ ...options.client, connectTimeout: 3_000 });
  try {
    await connection.workflowService.getSystemInfo({});
  } finally {
    await connection.close();
  }
}

/** Runs the probe workflow end to end: started by a Client, executed by a Worker, both with `options`. */
async function runProbe(options: TemporalConnectionOptions): Promise<string> {
  const connection = await Connection.connect({ ...options.client, connectTimeout: 5_000 });
  const native = await NativeConnection.connect(options.worker);
  try {
    const taskQueue = uniqueId('tls-probe');
    const worker = await Worker.create({
      connection: native,
      namespace: options.namespace,
      taskQueue,
      workflowBundle,
      activities: { greet: async (name: string) => `hello, ${name}` },
    });
    const client = new Client({ connection, namespace: options.namespace });
    return await worker.runUntil(
      client.workflow.execute<typeof tlsProbeWorkflow>('tlsProbeWorkflow', {
        taskQueue,
        workflowId: uniqueId('tls-probe'),
        args: [{ name: 'mTLS' }],
        workflowExecutionTimeout: '30 seconds',
      }),
    );
  } finally {
    await native.close();
    await connection.close();
  }
}

describe('Temporal through a TLS proxy that requires a client certificate', { skip }, () => {
  before(async () => {
    temporal = await connectTestTemporal();
    const [host, port] = temporal.address.split(':') as [string, string];
    const target = { host, port: Number(port) };
    proxy = await startTlsProxy({ target });
    recorder = await startGrpcHeaderRecorder(target);
    recordedProxy = await startTlsProxy({ target: { host: '127.0.0.1', port: recorder.port } });
    workflowBundle = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./tls_probe_workflow.ts', import.meta.url)),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
  });
  after(async () => {
    await recordedProxy?.close();
    await recorder?.close();
    await proxy?.close();
    await temporal?.close();
    rmSync(home, { recursive: true, force: true });
  });

  test('without TLS settings the client and the worker are refused', async () => {
    const options = optionsFor({ TEMPORAL_ADDRESS: proxy.address });
    assert.equal(options.summary.tls, 'off');
    await assert.rejects(callAsClient(options));
    await assert.rejects(NativeConnection.connect(options.worker));
  });

  test('TLS without the client certificate is refused', async () => {
    const options = optionsFor({
      TEMPORAL_ADDRESS: proxy.address,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: proxy.certificates.caPath,
      TEMPORAL_TLS_SERVER_NAME: proxy.certificates.serverName,
    });
    assert.equal(options.summary.tls, 'on');
    await assert.rejects(callAsClient(options));
    await assert.rejects(NativeConnection.connect(options.worker));
    assert.match(proxy.readErrorLog(), /client sent no required SSL certificate/);
  });

  test('a client certificate from a CA the server does not trust is refused', async () => {
    const options = optionsFor({
      ...mtlsEnv(proxy),
      TEMPORAL_TLS_CLIENT_CERT_PATH: proxy.certificates.strangerCertPath,
      TEMPORAL_TLS_CLIENT_KEY_PATH: proxy.certificates.strangerKeyPath,
    });
    assert.equal(options.summary.tls, 'mutual');
    await assert.rejects(callAsClient(options));
    await assert.rejects(NativeConnection.connect(options.worker));
    assert.match(proxy.readErrorLog(), /client SSL certificate verify error/);
  });

  test("without TEMPORAL_TLS_SERVER_NAME the server's certificate (issued for its name, not the IP) is refused", async () => {
    const env = mtlsEnv(proxy);
    delete env.TEMPORAL_TLS_SERVER_NAME;
    const options = optionsFor(env);
    await assert.rejects(callAsClient(options));
    await assert.rejects(NativeConnection.connect(options.worker), /NotValidForName/);
  });

  test('with the CA, the server name, the client certificate and its key a workflow completes', async () => {
    const options = optionsFor({ ...mtlsEnv(proxy), TEMPORAL_NAMESPACE: 'default' });
    assert.deepEqual(
      { tls: options.summary.tls, serverName: options.summary.serverName, apiKey: options.summary.apiKey },
      { tls: 'mutual', serverName: 'temporal.test', apiKey: false },
    );
    assert.equal(await runProbe(options), 'hello, mTLS');
  });

  test('TEMPORAL_API_KEY reaches the server as authorization: Bearer from the client and the worker', async () => {
    const apiKey = `test-key-${randomBytes(12).toString('hex')}`;
    const options = optionsFor({ ...mtlsEnv(recordedProxy), TEMPORAL_API_KEY: apiKey });
    assert.equal(JSON.stringify(options.summary).includes(apiKey), false, 'the summary is for logs: no key');
    assert.equal(await runProbe(options), 'hello, mTLS');

    const service = '/temporal.api.workflowservice.v1.WorkflowService/';
    const calls = recorder.calls.filter((c) => c.path.startsWith(service));
    const methods = new Set(calls.map((c) => c.path.slice(service.length)));
    // The client starts the workflow; the worker (Rust core, another gRPC stack) polls for its tasks.
    for (const method of ['StartWorkflowExecution', 'PollWorkflowTaskQueue', 'PollActivityTaskQueue']) {
      assert.ok(methods.has(method), `${method} went through the recorder (saw ${[...methods].join(', ')})`);
    }
    const agents = new Set(calls.map((c) => c.userAgent?.split('/')[0]));
    assert.ok(agents.size >= 2, `calls from two gRPC stacks (saw ${[...agents].join(', ')})`);
    const without = calls.filter((c) => c.authorization !== `Bearer ${apiKey}`);
    assert.deepEqual(
      without.map((c) => `${c.path} (${c.userAgent}): ${c.authorization ?? 'no authorization'}`),
      [],
    );
  });
});
