// The destination checker's take on real Postgres: host by host from a cursor, so a backlog on one host (a
// million-post backfill on the newsroom's own) never keeps the others waiting; at most perHost of a host per
// batch; every due row taken once as the checks are written; rows that no longer describe an active link's
// target parked, never handed out; the take reads along the (host, next_check_at, code) index, not the backlog.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { takeDueDestinations } from '../../../lib/stores/destination_state_store.ts';

let db: TestDatabase;
const BIG = 'big.test';
const BIG_ROWS = 1_000;
// More hosts than one walk reads, so the take goes on to a second and a third, and wraps round.
const SMALL_HOSTS = 450;

before(async () => {
  db = await createTestDatabase();
  // The big host's rows are the oldest due: under "oldest first over all hosts" they would come first.
  await db.sql`
    INSERT INTO links (code, target_url, status, origin, owner)
    SELECT 'b' || n, 'https://big.test/p/' || n, 'active', 'wordpress', 'test' FROM generate_series(1, ${BIG_ROWS}) n`;
  await db.sql`
    INSERT INTO destination_states (code, url, host, next_check_at)
    SELECT 'b' || n, 'https://big.test/p/' || n, ${BIG}, now() - interval '2 days' + n * interval '1 ms'
    FROM generate_series(1, ${BIG_ROWS}) n`;
  await db.sql`
    INSERT INTO links (code, target_url, status, origin, owner)
    SELECT 's' || n, 'https://h' || lpad(n::text, 3, '0') || '.test/', 'active', 'api', 'test'
    FROM generate_series(1, ${SMALL_HOSTS}) n`;
  await db.sql`
    INSERT INTO destination_states (code, url, host, next_check_at)
    SELECT 's' || n, 'https://h' || lpad(n::text, 3, '0') || '.test/', 'h' || lpad(n::text, 3, '0') || '.test',
           now() - interval '1 hour'
    FROM generate_series(1, ${SMALL_HOSTS}) n`;
  // A target whose host could not be read is stored under '' and is still checked.
  await db.sql`INSERT INTO links (code, target_url, status, origin, owner)
               VALUES ('nohost', 'https://odd', 'active', 'api', 'test')`;
  await db.sql`INSERT INTO destination_states (code, url, host, next_check_at)
               VALUES ('nohost', 'https://odd', '', now() - interval '1 hour')`;
  // Stale rows on the big host, older than all: links expired or retargeted since their row was written.
  await db.sql`
    INSERT INTO links (code, target_url, status, origin, owner)
    SELECT 'x' || n, 'https://big.test/x/' || n, CASE WHEN n % 2 = 0 THEN 'expired' ELSE 'active' END,
           'api', 'test'
    FROM generate_series(1, 30) n`;
  await db.sql`
    INSERT INTO destination_states (code, url, host, next_check_at)
    SELECT 'x' || n, CASE WHEN n % 2 = 0 THEN 'https://big.test/x/' || n ELSE 'https://big.test/old/' || n END,
           ${BIG}, now() - interval '3 days'
    FROM generate_series(1, 30) n`;
});
after(async () => {
  await db?.drop();
});

test('host by host from a cursor: every due row once, small hosts not behind the big one, stale rows parked', async () => {
  const now = new Date();
  const perHost = 20;
  const taken = new Map<string, number>();
  let afterHost: string | null = null;
  let takes = 0;
  let smallServedBy = 0;
  for (;;) {
    const take = await takeDueDestinations(db.sql, { now, limit: 200, perHost, afterHost });
    takes++;
    assert.ok(take.due.length <= 200);
    const perBatch = new Map<string, number>();
    for (const row of take.due) {
      perBatch.set(row.host, (perBatch.get(row.host) ?? 0) + 1);
      taken.set(row.code, (taken.get(row.code) ?? 0) + 1);
    }
    for (const [host, n] of perBatch) assert.ok(n <= perHost, `${n} rows of ${host} in one batch`);
    if (take.due.length === 0) break;
    // As the checker does: the checked rows are due again only later.
    await db.sql`UPDATE destination_states SET next_check_at = now() + interval '1 day'
                 WHERE code IN ${db.sql(take.due.map((r) => r.code))}`;
    afterHost = take.afterHost;
    if (smallServedBy === 0 && [...taken.keys()].filter((c) => c.startsWith('s')).length === SMALL_HOSTS)
      smallServedBy = takes;
    assert.ok(takes < 500, 'the takes end');
  }
  assert.equal(taken.size, BIG_ROWS + SMALL_HOSTS + 1, 'every live due row, and only those');
  assert.ok(
    [...taken.values()].every((n) => n === 1),
    'none twice',
  );
  assert.ok(taken.has('nohost'));
  // 451 small hosts (one row each) and 20 big rows per lap fill at most three batches of 200.
  assert.ok(smallServedBy > 0 && smallServedBy <= 3, `every small host served within ${smallServedBy} takes`);
  // The stale rows: never handed out, parked a day instead of being read by every take.
  const stale = await db.sql<{ code: string; parked: boolean }[]>`
    SELECT code, next_check_at > now() + interval '23 hours' AS parked FROM destination_states
    WHERE code LIKE 'x%'`;
  assert.equal(stale.length, 30);
  assert.ok(stale.every((r) => r.parked && !taken.has(r.code)));
});

test('the take reads the host index, not the due backlog', async () => {
  await db.sql`UPDATE destination_states SET next_check_at = now() - interval '1 hour'`;
  await db.sql`ANALYZE destination_states`;
  const [{ 'QUERY PLAN': plan }] = await db.sql.unsafe<[{ 'QUERY PLAN': string }]>(
    `EXPLAIN (FORMAT JSON)
     SELECT d.code FROM destination_states d
     WHERE d.host = 'big.test' AND d.next_check_at <= now() ORDER BY d.next_check_at, d.code LIMIT 20`,
  );
  assert.match(JSON.stringify(plan), /destination_states_host_due_idx/);
  assert.doesNotMatch(JSON.stringify(plan), /"Sort"/, 'rows come in index order: no sort of the backlog');
});
