import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../../scripts/temporal_cli.ts';

/** Where recorded histories live; tests/workflows/replay.test.ts replays every file in it. */
export const HISTORIES_DIR = join(ROOT, 'tests', 'histories');

/**
 * Saves a finished workflow's history as tests/histories/<name>.json when LIFELINE_RECORD_HISTORIES is set
 * (`npm run record:histories`); a no-op otherwise, so tests call it freely. The file is exactly what
 * `temporal workflow show --output json` writes (the CLI of the run), the format operators download too.
 */
export async function recordHistory(name: string, workflowId: string, runId?: string): Promise<void> {
  if (!process.env.LIFELINE_RECORD_HISTORIES) return;
  const cli = process.env.TEMPORAL_CLI;
  const address = process.env.LIFELINE_TEST_TEMPORAL_ADDRESS;
  if (!cli || !address) throw new Error('record histories through scripts/record_histories.ts');
  const json = execFileSync(
    cli,
    [
      'workflow',
      'show',
      '--address',
      address,
      '--workflow-id',
      workflowId,
      ...(runId ? ['--run-id', runId] : []),
      '--output',
      'json',
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  writeFileSync(join(HISTORIES_DIR, `${name}.json`), json.endsWith('\n') ? json : `${json}\n`);
  // Replay must run under the same workflow ID: workflows derive child IDs from it.
  writeFileSync(join(HISTORIES_DIR, `${name}.workflow-id`), `${workflowId}\n`);
}
