// What one LRU entry costs the heap, measured: records of the bench's shape (and longer targets, and with UTM
// values) put into the real resolver cache, each answered once by the real answerer (so its memoised answers and
// click cell exist, as on an LRU hit), then the heap used after a full collection, divided by the entries. The
// figures that estimateRecordBytes (lib/redirect/resolver_cache.ts) was fitted to; re-run it after a change to
// the record, the memo or the cell.
//
//   npx tsx bench/redirect/lru_entry_bytes.ts [entries]
//
// Each shape is measured in a process of its own (node --expose-gc --no-flush-bytecode: no module code aged out
// of the heap mid-measurement), after a first pass of the same shape whose figures are thrown away.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createClickBuffer } from '../../lib/clicks/click_buffer.ts';
import { createRedirectAnswerer } from '../../lib/redirect/answer_redirect.ts';
import { lookupTallies } from '../../lib/redirect/lookup_tallies.ts';
import { createResolverCache, estimateRecordBytes } from '../../lib/redirect/resolver_cache.ts';
import type { ServingRecord } from '../../lib/redirect/serving_record.ts';
import { parseConfig } from '../../lib/shared/config.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { createMetrics } from '../../lib/shared/metrics.ts';
import type { Sql } from '../../lib/stores/sql.ts';
import { redirectPages } from '../../routes/redirect.tsx';

const gc = (globalThis as { gc?: () => void }).gc;
const entries = Number(process.argv[2] ?? 50_000);

function heapUsed(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

/** A flat copy of `s`, as a driver's parsed row holds (a template's result may share its constant parts). */
function flat(s: string): string {
  return Buffer.from(s).toString();
}

type Shape = { name: string; url: (i: number) => string; utm?: ServingRecord['utm'] };
const SHAPES: Shape[] = [
  { name: 'bench target (58 chars)', url: (i) => `https://news.example.com/2026/11/21/story-${i}?ref=bench` },
  {
    name: 'long permalink (~200 chars)',
    url: (i) => `https://news.example.com/2026/11/21/${'a-long-headline-words-'.repeat(7)}${i}/?ref=bench`,
  },
  {
    name: 'bench target with UTM values',
    url: (i) => `https://news.example.com/2026/11/21/story-${i}?ref=bench`,
    utm: { campaign: 'spring', source: 'twitter', medium: 'social' },
  },
];

const config = parseConfig({
  SHORT_BASE_URL: 'http://127.0.0.1:8000',
  DATABASE_URL: 'postgres://x@127.0.0.1/x',
});
if (!gc) {
  for (const [index] of SHAPES.entries()) {
    const flags = ['--expose-gc', '--no-flush-bytecode', '--import', 'tsx'];
    const args = [...flags, fileURLToPath(import.meta.url), String(entries), String(index)];
    process.stdout.write(execFileSync(process.execPath, args, { encoding: 'utf8' }));
  }
  process.exit(0);
}
const shape = SHAPES[Number(process.argv[3])]!;
/** The first pass's cache, answerer and click buffer, kept alive so none of it is collected during the second. */
const kept: unknown[] = [];
for (const pass of [0, 1]) {
  const metrics = createMetrics();
  const cache = createResolverCache(
    { cacheMax: entries, cacheMaxBytes: 0, cacheTtlMs: 3_600_000, negativeTtlMs: 5_000 },
    lookupTallies(metrics),
  );
  const clicks = createClickBuffer({
    // Never flushed in this run (the interval is longer than it).
    sql: undefined as unknown as Sql,
    metrics,
    logger: createLogger({ level: 'silent' }),
    flushIntervalMs: 3_600_000,
    maxKeys: 10 * entries,
  });
  const answerer = createRedirectAnswerer({
    resolver: {
      resolve: async (code) => cache.peek(code) ?? null,
      peek: cache.peek,
      peekerFor: cache.peekerFor,
      invalidate: async () => {},
      refresh: async () => {},
    },
    config: { ...config, resolver: { cacheMax: entries } },
    metrics,
    clicks,
    pages: redirectPages,
  });
  const headers: Record<string, string> = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' };
  const header = (name: string) => headers[name];
  const before = heapUsed();
  let estimated = 0;
  for (let i = 1; i <= entries; i++) {
    const record: ServingRecord = {
      code: flat(`bk${i}`),
      url: flat(shape.url(i)),
      status: 'active',
      safety: 'clean',
      redirectStatus: null,
      expiresAt: null,
      expiredUrl: null,
      ...(shape.utm ? { utm: shape.utm } : {}),
      version: 1,
    };
    estimated += estimateRecordBytes(record);
    cache.remember(record.code, { promise: Promise.resolve(null), stale: false }, record);
    const answer = answerer.answerPeeked({ method: 'GET', code: record.code, query: '', header });
    if (answer?.status !== 301) throw new Error(`bk${i} answered ${answer?.status}`);
  }
  const after = heapUsed();
  // Keep everything alive until the measurement above.
  if (cache.entries() !== entries) throw new Error('entries evicted');
  const perEntry = (after - before) / entries;
  if (pass === 0) {
    kept.push(cache, answerer, clicks);
    continue;
  }
  console.log(
    `${shape.name}: ${entries} entries, heap +${((after - before) / 1048576).toFixed(1)} MiB, ` +
      `${perEntry.toFixed(0)} B per entry measured, ${(estimated / entries).toFixed(0)} B estimated`,
  );
}
// The click buffers were never flushed (no database here): exit without closing them.
process.exit(0);
