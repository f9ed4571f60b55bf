// compose.yaml's temporal-setup job (deploy/compose/temporal-setup.sh) run for real, as the admin-tools image runs
// it, against the run's Temporal dev server with the Temporal CLI: it creates a namespace of its own and registers
// every search attribute Lifeline's workflows set, and a second run (every `docker compose up`) changes nothing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { connectTestTemporal, type TestTemporal, uniqueId } from '../../devkit/harness/temporal.ts';
import { ensureTemporalCli, ROOT } from '../../scripts/temporal_cli.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/contract.ts';

/** temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD, as the operator service answers it. */
const KEYWORD = 2;
const SCRIPT = join(ROOT, 'deploy', 'compose', 'temporal-setup.sh');
let temporal: TestTemporal;
let cliDir: string;
const namespace = uniqueId('compose-setup');

before(async () => {
  temporal = await connectTestTemporal();
  cliDir = dirname(await ensureTemporalCli(() => {}));
});
after(async () => {
  await temporal?.close();
});

function runSetup(): { status: number | null; output: string } {
  const run = spawnSync('/bin/sh', [SCRIPT], {
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      PATH: `${cliDir}:/usr/bin:/bin`,
      HOME: process.env.HOME ?? '/tmp',
      TEMPORAL_ADDRESS: temporal.address,
      LIFELINE_NAMESPACE: namespace,
    },
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

async function customAttributes(): Promise<Record<string, number>> {
  const answer = await temporal.client.connection.operatorService.listSearchAttributes({ namespace });
  return Object.fromEntries(
    Object.entries(answer.customAttributes ?? {}).map(([name, type]) => [name, Number(type)]),
  );
}

test('temporal-setup.sh creates the namespace and registers every search attribute, once', async () => {
  const first = runSetup();
  assert.equal(first.status, 0, first.output);
  assert.match(first.output, new RegExp(`Temporal namespace ${namespace} is ready`));

  const described = await temporal.client.connection.workflowService.describeNamespace({ namespace });
  assert.equal(described.namespaceInfo?.name, namespace);
  const attributes = await customAttributes();
  for (const key of SEARCH_ATTRIBUTE_KEYS) {
    assert.equal(attributes[key.name], KEYWORD, `${key.name} is a Keyword search attribute of ${namespace}`);
  }

  const second = runSetup();
  assert.equal(second.status, 0, second.output);
  for (const key of SEARCH_ATTRIBUTE_KEYS) {
    assert.match(second.output, new RegExp(`search attribute ${key.name} exists`));
  }
  assert.deepEqual(await customAttributes(), attributes);
});

test('without a namespace to create it stops at once, naming the variable', () => {
  const run = spawnSync('/bin/sh', [SCRIPT], {
    encoding: 'utf8',
    env: { PATH: `${cliDir}:/usr/bin:/bin`, TEMPORAL_ADDRESS: temporal.address },
  });
  assert.notEqual(run.status, 0);
  assert.match(run.stderr, /LIFELINE_NAMESPACE/);
});
