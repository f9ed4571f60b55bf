import { Redis } from '@upstash/redis';
import type { ServingRecord } from './serving_record.ts';
import {
  decodeServingRecord,
  encodeServingRecord,
  PUT_IF_NOT_OLDER_SCRIPT,
  type ServingStore,
  servingKey,
} from './serving_store.ts';

/** A REST call slower than this is abandoned (the resolver's own, shorter, timeout answers first). */
const UPSTASH_REQUEST_TIMEOUT_MS = 2_000;

/** The serving store on Upstash Redis over REST (UPSTASH_REDIS_REST_URL and _TOKEN): edge runtimes. */
export function createUpstashServingStore(options: {
  url: string;
  token: string;
  keyPrefix: string;
}): ServingStore {
  const redis = new Redis({
    url: options.url,
    token: options.token,
    // Values are our own encoding, not JSON documents; no retries with backoff on the hot path (the
    // resolver falls through to Postgres instead, and a refresh is retried by its activity).
    automaticDeserialization: false,
    retry: false,
    enableTelemetry: false,
    // A function, so every request gets a fresh deadline and an abandoned request rejects (never resolves
    // as a fake "Aborted" result).
    signal: () => AbortSignal.timeout(UPSTASH_REQUEST_TIMEOUT_MS),
  });
  const key = (code: string) => servingKey(options.keyPrefix, code);
  return {
    kind: 'upstash',
    async get(code) {
      return decodeServingRecord(code, await redis.get<string>(key(code)));
    },
    async getMany(codes) {
      if (codes.length === 0) return [];
      const values = await redis.mget<(string | null)[]>(...codes.map(key));
      return values.map((raw, i) => decodeServingRecord(codes[i]!, raw));
    },
    async put(record: ServingRecord) {
      const written = await redis.eval<[string, string], number>(
        PUT_IF_NOT_OLDER_SCRIPT,
        [key(record.code)],
        [String(record.version), encodeServingRecord(record)],
      );
      return Number(written) === 1;
    },
    async delete(code) {
      await redis.del(key(code));
    },
    async close() {},
  };
}
