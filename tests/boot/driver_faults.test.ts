import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isKnownDriverFault } from '../../boot/driver_faults.ts';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';

const CHILD = fileURLToPath(new URL('../fixtures/driver_fault_child.ts', import.meta.url));
let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db.drop();
});

function runChild(guard: boolean): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      env: { ...process.env, TARGET_DATABASE_URL: db.url, GUARD: guard ? '1' : '0' },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe('a connection cut inside a transaction (postgres.js 3.4.9 driver fault)', () => {
  test('without the guard the driver kills the process; with it the process carries on and reconnects', async () => {
    const bare = await runChild(false);
    assert.notEqual(bare.code, 0, bare.out);
    assert.match(bare.out, /reading 'write'/);
    const guarded = await runChild(true);
    assert.equal(guarded.code, 0, guarded.out);
    assert.match(guarded.out, /transaction: CONNECTION_CLOSED; after: 7/);
  });

  test('only that fault is recognised', () => {
    assert.equal(
      isKnownDriverFault(new TypeError("Cannot read properties of null (reading 'write')")),
      false,
    );
    assert.equal(isKnownDriverFault(new Error('boom')), false);
    const fault = new TypeError("Cannot read properties of null (reading 'write')");
    fault.stack = `${fault.message}\n    at nextWrite (file:///app/node_modules/postgres/src/connection.js:255:22)`;
    assert.equal(isKnownDriverFault(fault), true);
  });
});
