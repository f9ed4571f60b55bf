import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
  await h.startWorker();
});
after(async () => {
  await h.close();
});

describe('syncLinkWorkflow', () => {
  test('runs a pass per burst of changes and completes; operators find it by code', async () => {
    const created = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://example.com/sync' },
    });
    const { code } = (await created.json()) as { code: string };
    const { workflowId } = await h.deps.workflows.syncLink(code, 'test');
    assert.equal(workflowId, `sync:${code}`);
    const result = (await h.temporal.client.workflow.getHandle(workflowId).result()) as { passes: number };
    assert.ok(result.passes >= 1);
    await recordHistory('syncLinkWorkflow-one-change', workflowId);
    const description = await h.temporal.client.workflow.getHandle(workflowId).describe();
    assert.equal(
      description.typedSearchAttributes.getAll().find((p) => p.key.name === 'LifelineCode')?.value,
      code,
    );
    // A later change starts a fresh pass.
    await h.deps.workflows.syncLink(code, 'again');
    assert.ok(
      ((await h.temporal.client.workflow.getHandle(workflowId).result()) as { passes: number }).passes >= 1,
    );
  });
});
