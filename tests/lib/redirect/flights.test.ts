// The resolver's table of lookups in flight (resolver_cache.ts, FlightTable): a key → flight table that keeps its
// keys, and what it leaves for the garbage collector (docs/adr/0108-flight-table-keeps-its-keys.md).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FLIGHT_KEYS_MAX, type Flight, FlightTable, NEVER } from '../../../lib/redirect/resolver_cache.ts';

const REDIS_URL = process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const flight = (): Flight => ({ promise: NEVER, stale: false });

describe('FlightTable', () => {
  test('get, has, set, delete, values and clear, for any code', () => {
    const table = new FlightTable();
    // Any code is a key: names Object.prototype has and index-like codes included.
    const codes = ['abc12', '__proto__', 'constructor', 'toString', 'hasOwnProperty', '12345', '0', 'x/abc'];
    const flights = new Map(codes.map((code) => [code, flight()]));
    for (const code of codes) {
      assert.equal(table.has(code), false, code);
      assert.equal(table.get(code), undefined, code);
    }
    for (const [code, f] of flights) table.set(code, f);
    for (const [code, f] of flights) {
      assert.equal(table.has(code), true, code);
      assert.equal(table.get(code), f, code);
    }
    assert.equal(table.values().length, codes.length);
    assert.ok(table.values().every((f) => [...flights.values()].includes(f)));

    table.delete('__proto__');
    table.delete('12345');
    table.delete('never-set');
    assert.equal(table.has('__proto__'), false);
    assert.equal(table.get('12345'), undefined);
    assert.equal(table.get('constructor'), flights.get('constructor'));
    assert.equal(table.values().length, codes.length - 2);

    const replaced = flight();
    table.set('abc12', replaced);
    assert.equal(table.get('abc12'), replaced);

    table.clear();
    assert.equal(table.values().length, 0);
    for (const code of codes) assert.equal(table.has(code), false, code);
  });

  test('keys of landed lookups are kept up to the bound, then only the running flights are', () => {
    const table = new FlightTable();
    const running = new Map([
      ['still-a', flight()],
      ['still-b', flight()],
    ]);
    for (const [code, f] of running) table.set(code, f);
    // A landed lookup leaves its key: the same code again finds its slot, nothing is added.
    for (let i = 0; i < FLIGHT_KEYS_MAX - running.size; i++) {
      table.set(`landed${i}`, flight());
      table.delete(`landed${i}`);
    }
    assert.equal(table.keys, FLIGHT_KEYS_MAX);
    table.set('landed0', flight());
    table.delete('landed0');
    assert.equal(table.keys, FLIGHT_KEYS_MAX);

    // One more code: rebuilt with the two running flights, then the new one.
    const next = flight();
    table.set('new-code', next);
    assert.equal(table.keys, running.size + 1);
    for (const [code, f] of running) assert.equal(table.get(code), f, code);
    assert.equal(table.get('new-code'), next);
    assert.equal(table.has('landed5'), false);
    assert.deepEqual(new Set(table.values()), new Set([...running.values(), next]));
  });

  // When each miss added a key to a Map and its landing deleted it, V8 rebuilt the Map's table every few dozen
  // lookups and linked each old table to the next, so one promoted table kept all later ones, and every flight they
  // held with the request behind it, alive through the young collections (measured on the benchmark's
  // serving-store path: 220 bytes promoted a request and a full collection every 1.3 s under the web tier's heap
  // cap; with this table 13 bytes and one in 15 s). The probe drives the real resolver over a real Redis.
  test('lookups that landed are not promoted by the young collections (serving-store hits, LRU off)', () => {
    const probe = fileURLToPath(new URL('./flights_probe.ts', import.meta.url));
    const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', probe], {
      encoding: 'utf8',
      env: { ...process.env, REDIS_URL, PROBE_KEY_PREFIX: `lltest:${randomUUID()}:` },
    });
    const result = JSON.parse(out.trim().split('\n').at(-1)!) as {
      lookups: number;
      minor: number;
      major: number;
      promotedPerLookup: number;
    };
    assert.ok(result.minor >= 100, `the probe ran ${result.minor} young collections`);
    assert.ok(
      result.promotedPerLookup < 40,
      `${result.promotedPerLookup.toFixed(1)} bytes promoted per lookup over ${result.lookups} lookups ` +
        `(${result.minor} young collections, ${result.major} full)`,
    );
  });
});
