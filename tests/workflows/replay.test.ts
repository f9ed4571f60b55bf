// Replays every recorded history (tests/histories, re-recorded by `npm run record:histories`) against the
// workflow code as it is now: a change that would make running executions non-deterministic fails here.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { HISTORIES_DIR } from '../../devkit/harness/histories.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';
import {
  installTemporalRuntime,
  TRACING_WORKFLOW_INTERCEPTORS,
  WORKFLOWS_PATH,
} from '../../workers/create_worker.ts';
import * as workflows from '../../workflows/index.ts';

installTemporalRuntime(createLogger({ level: 'silent' }));

interface RecordedHistory {
  name: string;
  workflowId: string;
  workflowType: string;
  history: { events: { workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } } }[] };
}

function loadHistories(): RecordedHistory[] {
  return readdirSync(HISTORIES_DIR)
    .filter((n) => n.endsWith('.json'))
    .sort()
    .map((file) => {
      const history = JSON.parse(
        readFileSync(join(HISTORIES_DIR, file), 'utf8'),
      ) as RecordedHistory['history'];
      const workflowType =
        history.events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '';
      const name = file.replace(/\.json$/, '');
      const idFile = join(HISTORIES_DIR, `${name}.workflow-id`);
      const workflowId = existsSync(idFile) ? readFileSync(idFile, 'utf8').trim() : name;
      return { name, workflowId, workflowType, history };
    });
}

const bundlePath = process.env.LIFELINE_TEST_WORKFLOW_BUNDLE;
const replayOptions = bundlePath
  ? { workflowBundle: { codePath: bundlePath } }
  : { workflowsPath: WORKFLOWS_PATH };

// While histories are being re-recorded the directory is in flux: the recording run skips the replay.
describe('workflow replay', { skip: Boolean(process.env.LIFELINE_RECORD_HISTORIES) }, () => {
  const histories = loadHistories();

  test('every workflow type has at least one recorded history', () => {
    const recorded = new Set(histories.map((h) => h.workflowType));
    const missing = Object.keys(workflows).filter((name) => !recorded.has(name));
    assert.deepEqual(missing, [], `record histories for: ${missing.join(', ')} (npm run record:histories)`);
  });

  test('the current code replays every recorded history deterministically', async () => {
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories(
      replayOptions,
      histories.map((h) => ({ workflowId: h.workflowId, history: h.history })),
    )) {
      replayed++;
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    assert.equal(replayed, histories.length);
    assert.deepEqual(failures, [], 'a workflow change needs patched() or re-recorded histories');
  });

  test('with the tracing interceptors bundled, every history recorded without them replays (ADR 0072)', async () => {
    // The build's workflow-bundle-traced.js: a worker that turns tracing on resumes the executions of one
    // without, and the other way round.
    const { code } = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      workflowInterceptorModules: [...TRACING_WORKFLOW_INTERCEPTORS],
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
    assert.match(code, /OpenTelemetryInboundInterceptor/, 'the interceptors are in the bundle');
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories(
      // The sink workflow spans leave by; a replay calls it for nothing (spans are not sent twice).
      { workflowBundle: { code }, sinks: { exporter: { export: { fn: () => {} } } } },
      histories.map((h) => ({ workflowId: h.workflowId, history: h.history })),
    )) {
      replayed++;
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    assert.equal(replayed, histories.length);
    assert.deepEqual(failures, []);
  });

  test('a change to the order of a workflow commands is caught (the check can fail)', async () => {
    const expired = histories.find((h) => h.name === 'expireLinkWorkflow-expired');
    assert.ok(expired, 'the expireLinkWorkflow-expired history is recorded');
    // A variant of expireLinkWorkflow that calls its activity before waiting: same type, other commands.
    const dir = join(ROOT, '.cache', 'replay-variant');
    mkdirSync(dir, { recursive: true });
    const variant = join(dir, 'workflows.ts');
    writeFileSync(
      variant,
      `import { proxyActivities, sleep } from '@temporalio/workflow';
const { expireLink } = proxyActivities<{ expireLink(i: { code: string }): Promise<unknown> }>({ startToCloseTimeout: '30s' });
export async function expireLinkWorkflow(input: { code: string; expiresAtMs: number }) {
  await expireLink({ code: input.code });
  await sleep(Math.max(input.expiresAtMs - Date.now(), 1));
  return { outcome: 'expired', expiresAtMs: null };
}
`,
    );
    await assert.rejects(
      Worker.runReplayHistory({ workflowsPath: variant }, expired.history, expired.workflowId),
      (error: unknown) => error instanceof DeterminismViolationError,
    );
  });
});
