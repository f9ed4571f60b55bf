import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// A click on a cached link writes its time into the code's click-buffer cell, an old object. If that field holds
// its number as a pointer to a boxed double (what V8 does for a class field that starts out `undefined`), every
// click boxes a new double in the young generation and links it from the old cell, so the scavenger must keep and
// then promote each one (measured: ~20 KB promoted at every scavenge on the LRU path; median pause
// 0.9 → 0.5 ms once fixed). With the field unboxed, a click writes the double in place and nothing survives.
test('a click leaves no boxed number for the scavenger to keep', () => {
  const probe = fileURLToPath(new URL('./cell_fields_probe.ts', import.meta.url));
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', probe], { encoding: 'utf8' });
  const { cells, cellSurvivors, controlSurvivors } = JSON.parse(out.trim().split('\n').at(-1)!) as {
    cells: number;
    cellSurvivors: number;
    controlSurvivors: number;
  };
  // The control shows the probe sees the difference on this V8: a boxed number (≥ 12 bytes) kept per object.
  assert.ok(controlSurvivors >= cells * 12, `control: ${controlSurvivors} B survived for ${cells} objects`);
  assert.ok(
    cellSurvivors < cells * 2,
    `${cellSurvivors} B survived a scavenge after one click in each of ${cells} cells (control: ${controlSurvivors} B)`,
  );
});
