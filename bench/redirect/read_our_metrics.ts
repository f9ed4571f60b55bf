// Counters read from our server's /metrics: which layer answered, how many redirects, clicks dropped, heap.
import { BENCH_METRICS_TOKEN, type BenchServer, httpGet, readRssMiB } from './bench_server.ts';

/**
 * Every sample of `name` in Prometheus text, keyed by its labels joined as "a/b" (in `labels` order); samples
 * that differ only in other labels (web_process, with WEB_CONCURRENCY > 1) are summed.
 */
function readCounter(text: string, name: string, labels: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm'))) {
    const found = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const key = labels.map((l) => found[l] ?? '').join('/');
    out[key] = (out[key] ?? 0) + Number(m[2]);
  }
  return out;
}

export interface OurCounters {
  /** lifeline_link_lookups_total by "layer/result". */
  lookups: Record<string, number>;
  /** lifeline_redirects_total by outcome. */
  redirects: Record<string, number>;
  /** lifeline_clicks_dropped_total. */
  clicksDropped: number;
  /** V8 heap used and reserved, MiB (the default process metrics). */
  heapUsedMiB: number;
  heapTotalMiB: number;
}

export async function readOurCounters(server: BenchServer): Promise<OurCounters> {
  const { body } = await httpGet(`${server.url}/metrics`, { Authorization: `Bearer ${BENCH_METRICS_TOKEN}` });
  const mib = (name: string) => {
    const v = readCounter(body, name, [])[''];
    return v === undefined ? Number.NaN : Math.round((v / 1048576) * 10) / 10;
  };
  return {
    lookups: readCounter(body, 'lifeline_link_lookups_total', ['layer', 'result']),
    redirects: readCounter(body, 'lifeline_redirects_total', ['outcome']),
    clicksDropped: readCounter(body, 'lifeline_clicks_dropped_total', [])[''] ?? 0,
    heapUsedMiB: mib('nodejs_heap_size_used_bytes'),
    heapTotalMiB: mib('nodejs_heap_size_total_bytes'),
  };
}

/** Our server's memory now, MiB: its RSS, and V8's heap used and reserved (from /metrics). */
export interface OurMemory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
}

/**
 * OurMemory, sampled while a run goes on (the long and memory modes). A failed scrape leaves the heap figures
 * NaN: a sample's promise may wait unhandled until the run ends, so it must never reject (that ends the run).
 */
export async function readOurMemory(server: BenchServer): Promise<OurMemory> {
  const rss = readRssMiB(server.pid);
  const heap = await readOurCounters(server).catch(() => ({
    heapUsedMiB: Number.NaN,
    heapTotalMiB: Number.NaN,
  }));
  return { rss, heapUsed: heap.heapUsedMiB, heapTotal: heap.heapTotalMiB };
}

/** after − before for every key that moved. */
export function diffCounts(
  after: Record<string, number>,
  before: Record<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
}
