// The resolver's counters by layer and result, each a tally fetched once (lifeline_link_lookups_total).
import { type Metrics, type Tally, tally } from '../shared/metrics.ts';

/** Every lookup result counted in lifeline_link_lookups_total, by layer. */
const LOOKUP_RESULTS = {
  lru: ['hit', 'negative', 'miss'],
  singleflight: ['shared'],
  serving_store: ['hit', 'miss', 'late_hit', 'error', 'skipped', 'tampered'],
  postgres: ['hit', 'miss', 'error', 'skipped', 'tampered'],
} as const;
export type LookupTallies = {
  [L in keyof typeof LOOKUP_RESULTS]: Record<(typeof LOOKUP_RESULTS)[L][number], Tally>;
};

/** The resolver's counters, fetched once: a lookup adds to a tally (no label objects or keys per request). */
export function lookupTallies(metrics: Metrics | undefined): LookupTallies {
  const out: Record<string, Record<string, Tally>> = {};
  for (const [layer, results] of Object.entries(LOOKUP_RESULTS)) {
    out[layer] = {};
    for (const result of results) {
      out[layer][result] = metrics ? tally(metrics.lookups, { layer, result }) : { n: 0 };
    }
  }
  return out as LookupTallies;
}
