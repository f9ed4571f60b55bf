// `npm run record:histories [filter...]`: re-records tests/histories/*.json, the workflow histories that
// tests/workflows/replay.test.ts replays on every run. Runs the tests (all, or those matching the filters)
// with LIFELINE_RECORD_HISTORIES=1, so each test that calls recordHistory() saves what its workflow did.
// Re-record after an intended change to a workflow's commands, once no execution of the old shape is open
// (otherwise guard the change with patched(); see docs/OPERATIONS.md).
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { HISTORIES_DIR } from '../devkit/harness/histories.ts';
import { ROOT } from './temporal_cli.ts';

const filters = process.argv.slice(2);
if (filters.length === 0) {
  for (const name of readdirSync(HISTORIES_DIR))
    if (name.endsWith('.json') || name.endsWith('.workflow-id')) rmSync(join(HISTORIES_DIR, name));
}
const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/test.ts', ...filters], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, LIFELINE_RECORD_HISTORIES: '1' },
});
const recorded = readdirSync(HISTORIES_DIR).filter((n) => n.endsWith('.json'));
process.stderr.write(`[record] ${recorded.length} histories in tests/histories: ${recorded.join(', ')}\n`);
process.exit(result.status ?? 1);
